/**
 * Values files and stack configs for the Kubernetes path, per network and node type.
 */
import { NETWORKS, STACK_NETWORKS, StackName } from '../core/catalog/networks';
import { NODE_TYPES, NodeType } from '../core/catalog/nodeTypes';
import { testPublicIp } from './fixtures';

/** Distinct last numbers of the example addresses per node type. */
const LAST: Record<NodeType, number> = { writer: 10, validator: 20, bootnode: 30 };

/**
 * A node type's address in the test stacks: a public one made up for tests (every network refuses a documentation
 * address in an enode; the same on every stack).
 */
export function addressFor(typenode: NodeType): string {
  return testPublicIp(LAST[typenode]);
}

/** A valid values file for a node type on a stack's network, at its address in the test stacks (addressFor). */
export function valuesFor(stack: StackName, typenode: NodeType, extra: Record<string, unknown> = {}) {
  return valuesAt(stack, typenode, addressFor(typenode), extra);
}

/** A valid values file for a node type on a stack's network, the node's public IP and p2p host `ip`. */
export function valuesAt(stack: StackName, typenode: NodeType, ip: string, extra: Record<string, unknown> = {}) {
  return {
    deploy: {
      network: NETWORKS[STACK_NETWORKS[stack]].helmName,
      typenode,
      publicIP: ip,
      p2p: { host: ip, port: 60606 },
      workerName: `worker-${typenode}`,
      nodeName: `org-${typenode}`,
      nodeEmail: 'ops@example.org',
      ...extra,
    },
  };
}

/** A stack with one Kubernetes node of every type, and its values files. */
export function kubernetesStack(stack: StackName, extraConfig: Record<string, unknown> = {}) {
  const config = {
    'lacchain:network': STACK_NETWORKS[stack],
    'lacchain:nodes': NODE_TYPES.map((t) => ({ name: t, typenode: t, target: 'kubernetes' })),
    ...extraConfig,
  };
  const files = Object.fromEntries(NODE_TYPES.map((t) => [`values/${t}.yml`, valuesFor(stack, t)]));
  return { config, files };
}

/**
 * Values files and stack configs for the Kubernetes path, per network and node type.
 */
import { NETWORKS, STACK_NETWORKS, StackName } from '../core/catalog/networks';
import { NODE_TYPES, NodeType } from '../core/catalog/nodeTypes';

/** Distinct example addresses per node type (documentation ranges). */
const ADDRESSES: Record<NodeType, string> = {
  writer: '203.0.113.10',
  validator: '203.0.113.20',
  bootnode: '203.0.113.30',
};

/** A valid values file for a node type on a stack's network. */
export function valuesFor(stack: StackName, typenode: NodeType, extra: Record<string, unknown> = {}) {
  const ip = ADDRESSES[typenode];
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

/**
 * What the rules compare resources against: the stack's network and, per node, the addresses and worker its settings
 * name. They come from the same settings the program is declared from (Pulumi.<stack>.yaml and the values files,
 * read and validated by core/settings), so a resource that drifts from them (a program change, a hand edit, a
 * transformation) is caught, and a settings change shows up as the reviewed change it is.
 */
import * as path from 'path';
import { stackConfigFileName } from '../core/catalog/defaults';
import { NETWORKS, Network, STACK_NETWORKS, StackName } from '../core/catalog/networks';
import { plainTextRpcPorts, rpcPubliclyReachable, unsafeRpcOverride } from '../core/rpc/access';
import { checkStackName, loadStack } from '../core/settings/load';
import type { StackSettings } from '../core/settings/model';
import type { KeyCustody } from '../core/catalog/keyCustody';
import type { NodeType } from '../core/catalog/nodeTypes';
import { readFileFromDisk, readStackConfigFile } from '../core/settings/settingsFiles';
import { LoadBalancerFields, loadBalancerFields } from '../core/kubernetes/loadBalancer';

/** What one node's settings say. */
export interface ExpectedNode {
  target: 'kubernetes' | 'ssh';
  /** The node type (writer, validator, bootnode). */
  typenode: NodeType;
  /** Where its key lives (`keyCustody`). */
  keyCustody: KeyCustody;
  /** Kubernetes, key custody `secret`: the operator's Secret the pod takes the key from (`keySecret`). */
  keySecret?: string;
  /** The IP advertised to peers (`deploy.p2p.host` or `inventory.node_ip`): the permissioned address. */
  p2pHost: string;
  p2pPort: number;
  /** Kubernetes: the static public IP of the LoadBalancer Service (`deploy.publicIP`). */
  publicIP?: string;
  /**
   * Kubernetes: what its Service must say to its cloud's load balancer for that IP (`deploy.loadBalancer`): the
   * annotations and spec.loadBalancerIP (core/kubernetes/loadBalancer.ts).
   */
  loadBalancer?: LoadBalancerFields;
  /** Kubernetes: the worker the pod is pinned to (`deploy.workerName`). */
  workerName?: string;
  /** Whether the node's JSON-RPC is reachable from outside its machine or cluster (directly or through a proxy). */
  rpcPublic: boolean;
  /**
   * The ports where its settings' exposure lets the RPC be reached from outside in plain HTTP (Besu's 4545, a
   * Kubernetes writer's 80): with authentication on, logins and tokens would cross them in clear.
   */
  rpcPlainTextPorts: number[];
  /**
   * What the operator opted the node into on its RPC reachable from outside (API groups, `cors:*`): flagged as a
   * warning on a test network, refused on production (core/rpc/access.ts unsafeRpcOverride).
   */
  rpcOptIns: string[];
  /** SSH: whether the settings pin the machine's host key (inventory host_key). */
  hostKeyPinned?: boolean;
  /** SSH: the operator's opt-out of a pinned host key (inventory accept_any_host_key), flagged by the policy. */
  acceptAnyHostKey?: boolean;
}

/** What the rules know about the stack being checked. */
export interface PolicyContext {
  /** The stack's network (from the stack name), when the stack is one of this project's. */
  network?: Network;
  /** Per node name, what its settings say; undefined when the settings could not be read. */
  nodes?: Record<string, ExpectedNode>;
  /** Why the settings could not be read: shown by the rules that need them, which then fail. */
  settingsProblem?: string;
}

/** The context of validated settings (the offline plan has them already). */
export function contextFromSettings(settings: StackSettings): PolicyContext {
  const nodes: Record<string, ExpectedNode> = {};
  for (const node of settings.nodes) {
    const common = { typenode: node.typenode, keyCustody: node.keyCustody };
    nodes[node.name] =
      node.target === 'kubernetes'
        ? {
            ...common,
            target: 'kubernetes',
            ...(node.keySecret ? { keySecret: node.keySecret.name } : {}),
            p2pHost: node.p2pHost,
            p2pPort: node.p2pPort,
            publicIP: node.publicIP,
            loadBalancer: loadBalancerFields(node),
            workerName: node.workerName,
            rpcPublic: rpcPubliclyReachable(node, node.rpc),
            rpcPlainTextPorts: plainTextRpcPorts(node, node.rpc),
            rpcOptIns: unsafeRpcOverride(node, node.rpc),
          }
        : {
            ...common,
            target: 'ssh',
            p2pHost: node.p2pHost,
            p2pPort: node.p2pPort,
            rpcPublic: rpcPubliclyReachable(node, node.rpc),
            rpcPlainTextPorts: plainTextRpcPorts(node, node.rpc),
            rpcOptIns: unsafeRpcOverride(node, node.rpc),
            hostKeyPinned: node.hostKey !== undefined,
            acceptAnyHostKey: node.acceptAnyHostKey,
          };
  }
  return { network: settings.network, nodes };
}

/** The stack name in a URN (`urn:pulumi:<stack>::<project>::<type>::<name>`). */
export function stackOfUrn(urn: string): string | undefined {
  const match = /^urn:pulumi:([^:]+)::/.exec(urn);
  return match ? match[1] : undefined;
}

/**
 * Reads the stack's settings from the project folder as `pulumi preview` does (Pulumi.<stack>.yaml, encrypted values
 * left encrypted, and the values files it names). Never throws: a problem is kept in `settingsProblem`.
 */
export function loadPolicyContext(projectDir: string, stack: string): PolicyContext {
  let network: Network | undefined;
  try {
    network = NETWORKS[STACK_NETWORKS[checkStackName(stack) as StackName]];
    const raw = readStackConfigFile(path.join(projectDir, stackConfigFileName(stack)));
    return contextFromSettings(loadStack(stack, raw, readFileFromDisk).settings);
  } catch (error) {
    return { network, settingsProblem: `the settings of stack ${stack} cannot be read: ${(error as Error).message}` };
  }
}

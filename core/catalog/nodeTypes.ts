/**
 * Node types: what a writer, a validator and a bootnode are, as the reference deployment defines them.
 */
import type { RpcExposure } from './rpc';

/** The node types, in the operator's words. */
export const NODE_TYPES = ['writer', 'validator', 'bootnode'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** Facts about one node type. */
export interface NodeTypeFacts {
  /** Index in the reference installer's node-type menu (`[0] validator [1] boot [2] writer`). */
  menuIndex: number;
  /** The label of the installer's menu. */
  menuLabel: string;
  /**
   * RPC API groups enabled by default (never ADMIN, DEBUG, TXPOOL or PERM). A consensus group (IBFT) is left out
   * while the node's RPC is reachable from outside (core/rpc/access.ts), unless the operator opts that node in.
   */
  rpcApis: readonly string[];
  /**
   * Where the node's RPC is reachable when neither the node's nor the stack's `rpc.exposure` says: validators and
   * bootnodes only inside (their RPC can vote on consensus), writers publicly (applications use a writer's 4545).
   */
  rpcExposure: RpcExposure;
  /** Whether the node serves the gas-model entry point through a reverse proxy on port 80. */
  reverseProxy: boolean;
  /**
   * Whether the node carries the enodes of its stack's own bootnodes in its `bootnodes`, beside the network's
   * (writers and validators; a bootnode keeps the network's list, as the reference roles give it).
   */
  joinsStackBootnodes: boolean;
}

/** The catalog, by node type. */
export const NODE_TYPE_FACTS: Record<NodeType, NodeTypeFacts> = {
  validator: {
    menuIndex: 0,
    menuLabel: 'validator',
    rpcApis: ['ETH', 'NET', 'IBFT', 'EEA', 'PRIV'],
    rpcExposure: 'internal',
    reverseProxy: false,
    joinsStackBootnodes: true,
  },
  bootnode: {
    menuIndex: 1,
    menuLabel: 'boot',
    rpcApis: ['ETH', 'NET', 'IBFT', 'EEA', 'PRIV'],
    rpcExposure: 'internal',
    reverseProxy: false,
    joinsStackBootnodes: false,
  },
  writer: {
    menuIndex: 2,
    menuLabel: 'writer',
    rpcApis: ['ETH', 'NET', 'WEB3', 'IBFT', 'EEA', 'PRIV'],
    rpcExposure: 'public',
    reverseProxy: true,
    joinsStackBootnodes: true,
  },
};

/**
 * RPC API groups never reachable from outside the machine or the pod unless the operator opts the node in
 * (`rpc.allowUnsafeApis`): node administration, debugging, the transaction pool, local permissioning lists.
 */
export const UNSAFE_RPC_APIS = ['ADMIN', 'DEBUG', 'TXPOOL', 'PERM'] as const;

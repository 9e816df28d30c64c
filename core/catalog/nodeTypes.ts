/**
 * Node types: what a writer, a validator and a bootnode are, as the reference deployment defines them.
 */

/** The node types, in the operator's words. */
export const NODE_TYPES = ['writer', 'validator', 'bootnode'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** Facts about one node type. */
export interface NodeTypeFacts {
  /** Index in the reference installer's node-type menu (`[0] validator [1] boot [2] writer`). */
  menuIndex: number;
  /** The label of the installer's menu. */
  menuLabel: string;
  /** RPC API groups enabled by default (never ADMIN, DEBUG or TXPOOL). */
  rpcApis: readonly string[];
  /** Whether the node serves the gas-model entry point through a reverse proxy on port 80. */
  reverseProxy: boolean;
}

/** The catalog, by node type. */
export const NODE_TYPE_FACTS: Record<NodeType, NodeTypeFacts> = {
  validator: {
    menuIndex: 0,
    menuLabel: 'validator',
    rpcApis: ['ETH', 'NET', 'IBFT', 'EEA', 'PRIV'],
    reverseProxy: false,
  },
  bootnode: { menuIndex: 1, menuLabel: 'boot', rpcApis: ['ETH', 'NET', 'IBFT', 'EEA', 'PRIV'], reverseProxy: false },
  writer: {
    menuIndex: 2,
    menuLabel: 'writer',
    rpcApis: ['ETH', 'NET', 'WEB3', 'IBFT', 'EEA', 'PRIV'],
    reverseProxy: true,
  },
};

/** RPC API groups that must never be reachable from a public port. */
export const UNSAFE_RPC_APIS = ['ADMIN', 'DEBUG', 'TXPOOL'] as const;

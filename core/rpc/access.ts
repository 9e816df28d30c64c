/**
 * JSON-RPC access of one node, from its `rpc` setting: what is reachable where, what the opt-ins cover,
 * and the choices handed to the config.toml renderer and the reverse proxy.
 */
import { NODE_TYPE_FACTS, UNSAFE_RPC_APIS } from '../catalog/nodeTypes';
import { PORTS } from '../catalog/ports';
import { CONSENSUS_RPC_APIS } from '../catalog/rpc';
import type { NodeSettings, RpcSettings } from '../settings/model';
import type { ProxyAccess } from '../proxy/nginxConf';

type NodeKind = Pick<NodeSettings, 'target' | 'typenode'>;

/** The RPC ports of a node reachable from outside its machine or cluster (p2p always is: peers must reach it). */
export interface ReachablePorts {
  /** Besu's JSON-RPC (4545) itself: only with exposure `public`. */
  rpc: boolean;
  /** The writer's proxy on 80 (the gas-model entry point): a writer's, unless exposure `internal`. */
  proxyHttp: boolean;
  /** The machine's TLS proxy on 443: on a machine, unless exposure `internal`. */
  proxyHttps: boolean;
}

/** The ports reachable from outside under the node's exposure, per the docs' exposure table. */
export function reachablePorts(node: NodeKind, rpc: RpcSettings): ReachablePorts {
  const exposure = rpc.exposure;
  return {
    rpc: exposure === 'public',
    proxyHttp: NODE_TYPE_FACTS[node.typenode].reverseProxy && exposure !== 'internal',
    proxyHttps: node.target === 'ssh' && exposure !== 'internal',
  };
}

/** True when a node's RPC can be reached from outside its host or cluster, directly or through its proxy. */
export function rpcPubliclyReachable(node: NodeKind, rpc: RpcSettings): boolean {
  const reachable = reachablePorts(node, rpc);
  return reachable.rpc || reachable.proxyHttp || reachable.proxyHttps;
}

/**
 * Who may open Besu's JSON-RPC port (4545) itself over a cluster's network, besides the node's own pod (whose proxy
 * reaches it over localhost): anyone with exposure `public`; with `internal`, the pods of the node's namespace (its
 * in-cluster clients: "inside the cluster", kept next to the node); with `tls-only`, no one (the RPC is reached through
 * the writer's proxy only). What a pod's NetworkPolicy admits; a machine binds 4545 to 127.0.0.1 unless public.
 */
export type ClusterRpcPeers = 'anywhere' | 'namespace' | 'none';

/** Who may open 4545 over the cluster's network under the stack's exposure (see ClusterRpcPeers). */
export function clusterRpcPeers(node: NodeKind, rpc: RpcSettings): ClusterRpcPeers {
  if (reachablePorts(node, rpc).rpc) return 'anywhere';
  return rpc.exposure === 'internal' ? 'namespace' : 'none';
}

/**
 * The ports reachable from outside where a node's RPC would take logins and tokens in plain text: Besu's 4545 (exposure
 * `public`, both paths: Besu has no TLS) and a Kubernetes writer's proxy on 80 (exposure `public` or `tls-only`: the
 * pod has no TLS either). A machine's 80 is not one: with authentication on it only redirects to TLS on 443
 * (core/node/description.ts). The settings refuse authentication while any is reachable; the policy flags it too.
 */
export function plainTextRpcPorts(node: NodeKind, rpc: RpcSettings): number[] {
  const reachable = reachablePorts(node, rpc);
  return [
    ...(reachable.rpc ? [PORTS.rpcHttp] : []),
    ...(reachable.proxyHttp && node.target === 'kubernetes' ? [PORTS.reverseProxyHttp] : []),
  ];
}

/** The API groups a node's RPC enables: the setting's, or its type's less what may not be reachable from outside. */
export function rpcApisOf(node: NodeKind, rpc: RpcSettings): string[] {
  if (rpc.apis) return [...rpc.apis];
  const defaults = [...NODE_TYPE_FACTS[node.typenode].rpcApis];
  if (!rpcPubliclyReachable(node, rpc) || rpc.allowConsensusVotesFromOutside) return defaults;
  // Reachable from outside: the consensus groups (their vote methods) stay off unless the node opted in.
  return defaults.filter((api) => !(CONSENSUS_RPC_APIS as readonly string[]).includes(api));
}

/**
 * What the operator's explicit opt-ins cover on a node while its RPC is reachable from outside: unsafe API groups and
 * `cors:*` (`allowUnsafeApis`), consensus groups (`allowConsensusVotesFromOutside`). Empty when nothing: the plan and
 * the policy flag a node where it is not.
 */
export function unsafeRpcOverride(node: NodeKind, rpc: RpcSettings): string[] {
  if (!rpcPubliclyReachable(node, rpc)) return [];
  const outsideOnly = [...UNSAFE_RPC_APIS, ...CONSENSUS_RPC_APIS] as readonly string[];
  const opted = rpcApisOf(node, rpc).filter((api) => outsideOnly.includes(api));
  return [...opted, ...(rpc.corsOrigins.includes('*') ? ['cors:*'] : [])];
}

/** What the reverse proxy enforces for a node: the same hosts, limits and login as Besu. */
export function proxyAccess(node: NodeSettings, hosts: readonly string[], zone: string): ProxyAccess {
  const rpc = node.rpc;
  return {
    hosts: rpc.hostAllowlist.includes('*') ? ['*'] : [...new Set([...hosts, ...rpc.hostAllowlist])],
    login: rpc.authentication?.method === 'password',
    cors: rpc.corsOrigins.length > 0,
    maxBodySize: rpc.proxy.maxBodySize,
    requestsPerSecond: rpc.proxy.requestsPerSecond,
    burst: rpc.proxy.burst,
    maxConnectionsPerClient: rpc.proxy.maxConnectionsPerClient,
    zone,
  };
}

/**
 * JSON-RPC access of one node, from the stack's `lacchain:rpc`: what is reachable where, what the override covers,
 * and the choices handed to the config.toml renderer and the reverse proxy.
 */
import { NODE_TYPE_FACTS, UNSAFE_RPC_APIS } from '../catalog/nodeTypes';
import type { BesuRpcInput } from '../besu/configToml';
import type { NodeSettings, RpcSettings } from '../settings/model';
import type { ProxyAccess } from '../proxy/nginxConf';

type NodeKind = Pick<NodeSettings, 'target' | 'typenode'>;

/** True when a node's RPC can be reached from outside its host or cluster under the stack's exposure. */
export function rpcPubliclyReachable(node: NodeKind, rpc: RpcSettings): boolean {
  if (rpc.exposure === 'public') return true;
  if (rpc.exposure === 'internal') return false;
  // tls-only: the machine's 443 proxy, or the writer's proxy on 80 (both paths).
  return node.target === 'ssh' || NODE_TYPE_FACTS[node.typenode].reverseProxy;
}

/** The API groups a node enables: the setting's, or its type's. */
export function rpcApisOf(node: Pick<NodeSettings, 'typenode'>, rpc: RpcSettings): string[] {
  return rpc.apis ? [...rpc.apis] : [...NODE_TYPE_FACTS[node.typenode].rpcApis];
}

/**
 * What the operator's explicit override (`allowUnsafeApis`) covers on a node: its unsafe API groups and `cors:*`
 * while its RPC is publicly reachable. Empty when nothing: the plan and the policy flag a node where it is not.
 */
export function unsafeRpcOverride(node: NodeKind, rpc: RpcSettings): string[] {
  if (!rpcPubliclyReachable(node, rpc)) return [];
  const unsafe = rpcApisOf(node, rpc).filter((api) => (UNSAFE_RPC_APIS as readonly string[]).includes(api));
  return [...unsafe, ...(rpc.corsOrigins.includes('*') ? ['cors:*'] : [])];
}

/** The RPC choices for config.toml. `bindAll`: a pod (probes hit the pod IP), or a machine whose 4545 is public. */
export function besuRpcInput(node: NodeSettings): BesuRpcInput {
  const rpc = node.rpc;
  const auth = rpc.authentication;
  return {
    apis: rpcApisOf(node, rpc),
    bindAll: node.target === 'kubernetes' || rpc.exposure === 'public',
    hostAllowlist: rpc.hostAllowlist,
    corsOrigins: rpc.corsOrigins,
    authentication: !auth
      ? undefined
      : auth.method === 'password'
        ? { method: 'password' }
        : { method: 'jwt', ...(auth.algorithm ? { algorithm: auth.algorithm } : {}) },
    noAuthMethods: rpc.noAuthMethods,
    maxActiveConnections: rpc.maxActiveConnections,
  };
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
    zone,
  };
}

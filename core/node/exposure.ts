/**
 * What a node lets the outside reach, port by port, in words a reviewer reads in a pull request: the offline plan
 * and `pulumi preview` show it as the node's `reachableFromOutside` output. Derived from the description only (the
 * ports its renderers open: the Service's on a cluster, the firewall's on a machine), so it cannot drift from them.
 */
import { GAS_MODEL_METHODS } from '../catalog/gasModel';
import { CONSENSUS_RPC_APIS } from '../catalog/rpc';
import { PORTS } from '../catalog/ports';
import type { NodeDescription } from './description';

/** Port (`<number>/<protocol>`) to what it admits from outside the machine or the cluster. */
export type ReachableFromOutside = Record<string, string>;

/** The API groups Besu serves to whoever reaches it, with the opt-ins named. */
function rpcGroups(description: NodeDescription): string {
  const { apis, unsafeOverride, authentication } = description.rpc;
  const opted = unsafeOverride.filter((item) => !(CONSENSUS_RPC_APIS as readonly string[]).includes(item));
  const votes = unsafeOverride.filter((item) => (CONSENSUS_RPC_APIS as readonly string[]).includes(item));
  return [
    `API groups ${apis.join(', ')}`,
    ...(votes.length > 0 ? [`consensus votes allowed by allowConsensusVotesFromOutside (${votes.join(', ')})`] : []),
    ...(opted.length > 0 ? [`unsafe by allowUnsafeApis (${opted.join(', ')})`] : []),
    ...(authentication ? [`${authentication.method} authentication`] : ['no authentication']),
  ].join('; ');
}

/** Each port reachable from outside and what it admits; the p2p port always (peers must reach every node). */
export function reachableFromOutside(description: NodeDescription): ReachableFromOutside {
  const { node, reachable } = description;
  const groups = rpcGroups(description);
  const gasModel = description.proxyServers.some((server) => server.gasModel !== undefined);
  const throughProxy = `JSON-RPC through the reverse proxy to Besu (${groups})${gasModel ? `; ${GAS_MODEL_METHODS.join(', ')} to the relay signer (gas model)` : ''}`;
  const exposed: ReachableFromOutside = {
    [`${node.p2pPort}/tcp+udp`]: 'p2p: peers and discovery (connections permissioned by the network)',
  };
  if (reachable.rpc) exposed[`${PORTS.rpcHttp}/tcp`] = `Besu JSON-RPC over plain HTTP (${groups})`;
  if (reachable.proxyHttps) exposed[`${PORTS.reverseProxyHttps}/tcp`] = `TLS: ${throughProxy}`;
  if (reachable.proxyHttp) {
    const redirects = description.proxyServers.some(
      (server) => server.port === PORTS.reverseProxyHttp && server.redirectToHttps !== undefined,
    );
    exposed[`${PORTS.reverseProxyHttp}/tcp`] = redirects
      ? `plain HTTP: a redirect to https on ${PORTS.reverseProxyHttps} only, nothing reaches Besu`
      : `plain HTTP: ${throughProxy}`;
  }
  const metrics = description.proxyServers.find((server) => server.metrics !== undefined);
  if (metrics) {
    exposed[`${metrics.port}/tcp`] =
      "TLS: the node's metrics (Besu's and the machine's), to a request with the bearer token lacchain:metricsToken only";
  }
  return exposed;
}

/**
 * config.toml of a deployed node, on either path: its settings, with its RPC choices, where its files are (pod or
 * machine) and the host names its RPC answers to, all decided by its description (core/node/description.ts).
 */
import { METRICS } from '../catalog/metrics';
import type { NodeSettings } from '../settings/model';
import { BesuPaths, BesuRpcInput, renderConfigToml } from './configToml';

export function renderNodeConfigToml(
  node: NodeSettings,
  rpcHosts: readonly string[],
  paths: BesuPaths,
  rpc: BesuRpcInput,
): string {
  return renderConfigToml({
    network: node.network,
    typenode: node.typenode,
    releaseVersion: node.releaseVersion,
    nodeName: node.nodeName,
    p2pHost: node.p2pHost,
    stackBootnodes: node.stackBootnodes,
    p2pPort: node.p2pPort,
    rpcHosts,
    paths,
    rpc,
    // Besu serves its metrics on the loopback (the machine's, the pod's) for the node's metrics relay, which pushes them
    // to the network's gateway (core/remote/metricsRelay.ts, core/kubernetes/monitoring.ts).
    metrics: { mode: 'served', host: METRICS.besuHost },
    options: node.besu,
  });
}

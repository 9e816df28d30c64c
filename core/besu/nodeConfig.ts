/**
 * config.toml of a deployed node, on either path: its settings and RPC access, with where its files are (pod or
 * machine) and the host names its RPC answers to.
 */
import { besuRpcInput } from '../rpc/access';
import type { NodeSettings } from '../settings/model';
import { BesuPaths, renderConfigToml } from './configToml';

export function renderNodeConfigToml(node: NodeSettings, rpcHosts: readonly string[], paths: BesuPaths): string {
  return renderConfigToml({
    network: node.network,
    typenode: node.typenode,
    releaseVersion: node.releaseVersion,
    nodeName: node.nodeName,
    p2pHost: node.p2pHost,
    p2pPort: node.p2pPort,
    rpcHosts,
    paths,
    rpc: besuRpcInput(node),
  });
}

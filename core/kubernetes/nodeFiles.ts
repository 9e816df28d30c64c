/**
 * The files a Kubernetes node reads at start: config.toml, the start step and, for writers, the proxy config.
 */
import { renderNodeConfigToml } from '../besu/nodeConfig';
import { POD_PATHS, PROXY_CONTAINER_PORT } from '../catalog/kubernetes';
import { LOCAL_HOSTS } from '../catalog/ports';
import { RPC_AUTH_FILES } from '../catalog/rpc';
import { proxyAccess } from '../rpc/access';
import { NODE_TYPE_FACTS } from '../catalog/nodeTypes';
import { renderNginxServers } from '../proxy/nginxConf';
import { readScript, START_NODE_SCRIPT } from '../scripts';
import type { KubernetesNodeSettings } from '../settings/model';
import { NodeConfigFiles, POD_BESU_PATHS } from './manifests';

/** The ConfigMap files of a node, with the genesis given as V. */
export function kubernetesNodeFiles<V>(node: KubernetesNodeSettings, genesis: V): NodeConfigFiles<V> {
  const rpcHosts = [node.publicIP, node.p2pHost, ...(node.dnsName ? [node.dnsName] : [])];
  const auth = node.rpc.authentication;
  const files: NodeConfigFiles<V> = {
    configToml: renderNodeConfigToml(node, rpcHosts, {
      ...POD_BESU_PATHS,
      ...(auth?.method === 'password'
        ? { rpcCredentialsFile: `${POD_PATHS.rpcAuthDir}/${RPC_AUTH_FILES.credentials}` }
        : {}),
      ...(auth?.method === 'jwt'
        ? { rpcJwtPublicKeyFile: `${POD_PATHS.configDir}/${RPC_AUTH_FILES.jwtPublicKey}` }
        : {}),
    }),
    genesis,
    startScript: readScript(START_NODE_SCRIPT),
  };
  if (NODE_TYPE_FACTS[node.typenode].reverseProxy) {
    files.proxyConfig = renderNginxServers({
      purpose: `Reverse proxy of writer ${node.nodeName}: the gas-model entry point in front of Besu's JSON-RPC.`,
      servers: [{ port: PROXY_CONTAINER_PORT }],
      access: proxyAccess(node, [...LOCAL_HOSTS, ...rpcHosts], 'lacchain_rpc'),
    });
  }
  if (auth?.method === 'jwt') files.rpcJwtPublicKey = auth.publicKey;
  return files;
}

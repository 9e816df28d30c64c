/**
 * The files a Kubernetes node's ConfigMap holds, from its description: config.toml, the genesis, the start step, the
 * metrics relay and, for writers, the proxy config.
 */
import type { NodeDescription } from '../node/description';
import type { KubernetesNodeSettings } from '../settings/model';
import type { NodeConfigFiles } from './manifests';
import { companionConfigFiles } from './companionContainers';
import { POD_METRICS_RELAY_SCRIPT, readScript } from '../scripts';

/** The ConfigMap files of a node, with the genesis given as V. */
export function kubernetesNodeFiles<V>(
  description: NodeDescription<KubernetesNodeSettings>,
  genesis: V,
): NodeConfigFiles<V> {
  const { files } = description;
  return {
    configToml: files.configToml,
    genesis,
    startScript: files.launcher,
    metricsRelay: readScript(POD_METRICS_RELAY_SCRIPT),
    ...(files.proxyConfig !== undefined ? { proxyConfig: files.proxyConfig } : {}),
    ...(files.jwtPublicKey !== undefined ? { rpcJwtPublicKey: files.jwtPublicKey } : {}),
    ...(description.companions.length > 0 ? { companionConfigs: companionConfigFiles(description.companions) } : {}),
  };
}

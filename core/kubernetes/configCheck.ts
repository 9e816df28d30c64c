/**
 * What a node's pod reads of its config, and how it knows it is the program's (docs/security.md#what-a-pod-reads).
 * The node's ConfigMap is immutable and named by its content (`besu-node-<node>-config-<digest>`): a change is a new
 * ConfigMap, which the StatefulSet switches to in its turn of the rollout (the old one is deleted by `pulumi up` once
 * the StatefulSet moved), so a later node's pod never reads its new config early. The pod's first init container
 * (scripts/kubernetes/check-config.sh, the text of the StatefulSet's own command, never the ConfigMap's) copies the
 * ConfigMap into a folder of the pod's own and refuses a copy whose digest is not the one the StatefulSet names; every
 * other container reads that copy, read-only. A ConfigMap edited, or deleted and made again under its name, never
 * reaches a container: the check script, the start step and config.toml run as the program wrote them, or not at all.
 */
import { kubernetesNames, POD_FILES, POD_PATHS } from '../catalog/kubernetes';
import { sha256Hex } from '../genesis';
import { readScript } from '../scripts';
import type { KubernetesNodeSettings } from '../settings/model';
import { RESTRICTED_CONTAINER } from './podBasics';

/** The script, under scripts/, the config check runs (inline: `sh -c`). */
const CONFIG_CHECK_SCRIPT = 'kubernetes/check-config.sh';

/** The volumes: the pod's checked copy every container reads, and the ConfigMap, which only the check reads. */
export const CONFIG_VOLUMES = { copy: 'config', source: 'config-source' } as const;

/** How many hex digits of the digest name the ConfigMap. */
const NAME_DIGEST_LENGTH = 10;

/**
 * The digest of a node's config files (entry → text; the genesis as V, known by its SHA-256 `genesisSha256`), as
 * check-config.sh computes it from the pod's copy: the SHA-256 of `sha256sum`'s lines `<sha256>  <entry>`, the
 * entries in byte order.
 */
export function nodeConfigDigest<V>(data: Record<string, string | V>, genesisSha256: string): string {
  const lines = Object.keys(data)
    .sort()
    .map((entry) => `${entry === POD_FILES.genesis ? genesisSha256 : sha256Hex(String(data[entry]))}  ${entry}\n`);
  return sha256Hex(lines.join(''));
}

/** The ConfigMap of a node's config of digest `digest`: `besu-node-<node>-config-<first digits>`. */
export function nodeConfigMapName(node: KubernetesNodeSettings, digest: string): string {
  return `${kubernetesNames(node.name).configMap}-${digest.slice(0, NAME_DIGEST_LENGTH)}`;
}

/**
 * What the StatefulSet knows of the config its pod reads: the ConfigMap's name and the files' digest (V when they
 * are known only once the genesis is: the component's).
 */
export interface PodConfig<V = string> {
  configMap: string | V;
  digest: string | V;
}

/** The pod's config volumes: the ConfigMap (for the check alone) and the pod's checked copy. */
export function configVolumes<V>(config: PodConfig<V>) {
  return [
    { name: CONFIG_VOLUMES.source, configMap: { name: config.configMap, defaultMode: 0o444 } },
    // On the worker's disk, for the pod's life: nothing but the check writes it.
    { name: CONFIG_VOLUMES.copy, emptyDir: { sizeLimit: '64Mi' } },
  ];
}

/** The pod's first init container: the ConfigMap copied into the pod's folder, refused unless its digest is `digest`. */
export function configCheckInit<V>(node: KubernetesNodeSettings, image: string, config: PodConfig<V>) {
  return {
    name: kubernetesNames(node.name).companionContainer('config-check'),
    image,
    command: ['/bin/sh', '-c', readScript(CONFIG_CHECK_SCRIPT), 'check-config'],
    args: [POD_PATHS.configSourceDir, POD_PATHS.configDir, config.digest],
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
    volumeMounts: [
      { name: CONFIG_VOLUMES.source, mountPath: POD_PATHS.configSourceDir, readOnly: true },
      { name: CONFIG_VOLUMES.copy, mountPath: POD_PATHS.configDir },
    ],
    securityContext: RESTRICTED_CONTAINER,
  };
}

/**
 * The key check of a cluster node whose key is the operator's own Secret (key custody `secret`): an init container on
 * the node's pinned Besu image that runs scripts/kubernetes/check-node-key.sh, comparing the mounted key's public key
 * (the release's own `besu public-key export`) with the node's `publicKey`, so the pod never runs under an identity it
 * does not advertise. Nodes with another custody have no such container and no such ConfigMap entry.
 */
import { kubernetesNames, POD_FILES, POD_PATHS } from '../catalog/kubernetes';
import { readScript } from '../scripts';
import type { KubernetesNodeSettings } from '../settings/model';
import { nodeKeySecret } from './nodeKeySecret';
import { RESTRICTED_CONTAINER } from './podBasics';

/** The script, under scripts/, and its ConfigMap entry. */
const KEY_CHECK_SCRIPT = 'kubernetes/check-node-key.sh';
const KEY_CHECK_ENTRY = KEY_CHECK_SCRIPT.split('/')[1];

/** Whether the node's pod checks its key: only when the key is the operator's, whose public key is a setting. */
function checksKey(node: KubernetesNodeSettings): node is KubernetesNodeSettings & { publicKey: string } {
  return node.keyCustody === 'secret' && node.publicKey !== undefined;
}

/** The ConfigMap entry of the check's script, for a node that checks its key. */
export function keyCheckConfigEntries(node: KubernetesNodeSettings): Record<string, string> {
  return checksKey(node) ? { [KEY_CHECK_ENTRY]: readScript(KEY_CHECK_SCRIPT) } : {};
}

/** The init container that refuses to start the pod on another key than `publicKey`, for a node that checks its key. */
export function keyCheckInit(node: KubernetesNodeSettings, image: string) {
  if (!checksKey(node)) return [];
  const secret = nodeKeySecret(node);
  return [
    {
      name: kubernetesNames(node.name).companionContainer('key-check'),
      image,
      command: ['/bin/sh', `${POD_PATHS.configDir}/${KEY_CHECK_ENTRY}`],
      args: [POD_PATHS.besuBinary, `${POD_PATHS.keyDir}/${POD_FILES.key}`, node.publicKey, secret.name, secret.entry],
      // The one-line reason is the container's termination message (kubectl describe pod shows it).
      terminationMessagePolicy: 'FallbackToLogsOnError',
      resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '512Mi' } },
      volumeMounts: [
        { name: 'config', mountPath: POD_PATHS.configDir, readOnly: true },
        { name: 'key', mountPath: POD_PATHS.keyDir, readOnly: true },
        // The root filesystem is read-only: Besu's JVM and the check's files go to the pod's /tmp.
        { name: 'besu-tmp', mountPath: '/tmp' },
      ],
      securityContext: RESTRICTED_CONTAINER,
    },
  ];
}

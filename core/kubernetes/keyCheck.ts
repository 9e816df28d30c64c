/**
 * The key check of a cluster node whose key is the operator's own Secret (key custody `secret`): the node's pinned
 * Besu image runs scripts/kubernetes/check-node-key.sh, comparing the public key of the Secret's key (the release's
 * own `besu public-key export`) with the node's `publicKey`, so the pod never runs under an identity it does not
 * advertise. It runs as an init container, after the config check (core/kubernetes/configCheck.ts) and before any
 * other container starts; it also refuses a config.toml whose `node-private-key-file` is not the checked copy.
 *
 * Only the check mounts the Secret (at `secretKeyDir`). A key that passes is copied to a memory volume mounted, read-only,
 * where every other container of the pod reads the key (`keyDir`): Besu, the relay signer (through
 * start-companion.sh, which puts it in its environment) and the rotation client read the checked copy alone, which
 * nothing can change while the pod lives. A key swapped in the Secret meets the check in the next pod (and a refusal
 * removes the copy). Nodes with another custody have none of this.
 */
import { kubernetesNames, POD_FILES, POD_PATHS } from '../catalog/kubernetes';
import { MISSING_KEY_EXIT_CODE, MISSING_KEY_EXIT_VARIABLE } from '../catalog/remote';
import type { ReleasedCompanionDescription } from '../node/companions';
import { readScript, START_COMPANION_SCRIPT } from '../scripts';
import type { KubernetesNodeSettings } from '../settings/model';
import { nodeKeySecret } from './nodeKeySecret';
import { RESTRICTED_CONTAINER } from './podBasics';

/** The script, under scripts/, and its ConfigMap entry. */
const KEY_CHECK_SCRIPT = 'kubernetes/check-node-key.sh';
const KEY_CHECK_ENTRY = KEY_CHECK_SCRIPT.split('/')[1];

/** The memory volume of the checked key (the policy pack counts a container mounting it as receiving the key). */
export const CHECKED_KEY_VOLUME = 'checked-key';

/** Where the key file is: the checked copy every container reads, and the Secret's, which only the check reads. */
const CHECKED_KEY_FILE = `${POD_PATHS.keyDir}/${POD_FILES.key}`;
const SECRET_KEY_FILE = `${POD_PATHS.secretKeyDir}/${POD_FILES.key}`;

/** Whether the node's pod checks its key: only when the key is the operator's, whose public key is a setting. */
function checksKey(node: KubernetesNodeSettings): node is KubernetesNodeSettings & { publicKey: string } {
  return node.keyCustody === 'secret' && node.publicKey !== undefined;
}

/** The ConfigMap entries of a node that checks its key: the check, and the relay signer's launcher. */
export function keyCheckConfigEntries(node: KubernetesNodeSettings): Record<string, string> {
  if (!checksKey(node)) return {};
  return {
    [KEY_CHECK_ENTRY]: readScript(KEY_CHECK_SCRIPT),
    [START_COMPANION_SCRIPT]: readScript(START_COMPANION_SCRIPT),
  };
}

/** The check's command line (`command` and `args`): the pod's checked copy of the config, the check reads it. */
function checkCommand(node: KubernetesNodeSettings & { publicKey: string }) {
  const secret = nodeKeySecret(node);
  const config = `${POD_PATHS.configDir}/${POD_FILES.config}`;
  return {
    command: ['/bin/sh', `${POD_PATHS.configDir}/${KEY_CHECK_ENTRY}`],
    args: [POD_PATHS.besuBinary, SECRET_KEY_FILE, node.publicKey, secret.name, secret.entry, CHECKED_KEY_FILE, config],
  };
}

/** The checked key, as every container but the check mounts it: read-only. */
const CHECKED_KEY_MOUNT = { name: CHECKED_KEY_VOLUME, mountPath: POD_PATHS.keyDir, readOnly: true };

/** The init container that refuses to start the pod on another key than `publicKey`, for a node that checks its key. */
export function keyCheckInit(node: KubernetesNodeSettings, image: string) {
  if (!checksKey(node)) return [];
  return [
    {
      name: kubernetesNames(node.name).companionContainer('key-check'),
      image,
      ...checkCommand(node),
      // The one-line reason is the container's termination message (kubectl describe pod shows it).
      terminationMessagePolicy: 'FallbackToLogsOnError',
      resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '512Mi' } },
      volumeMounts: [
        { name: 'config', mountPath: POD_PATHS.configDir, readOnly: true },
        // The one container of the pod with the Secret, and the one that writes the checked key.
        { name: 'key', mountPath: POD_PATHS.secretKeyDir, readOnly: true },
        { name: CHECKED_KEY_VOLUME, mountPath: POD_PATHS.keyDir },
        // The root filesystem is read-only: Besu's JVM and the check's files go to the pod's /tmp.
        { name: 'besu-tmp', mountPath: '/tmp' },
      ],
      securityContext: RESTRICTED_CONTAINER,
    },
  ];
}

/** The memory volume of the checked key, for a node that checks its key. */
export function keyCheckVolumes(node: KubernetesNodeSettings) {
  return checksKey(node) ? [{ name: CHECKED_KEY_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } }] : [];
}

/**
 * The Besu container's key mount: for a node that checks its key, the checked copy (read-only; the Secret is not
 * mounted); else the key Secret.
 */
export function besuKeyMounts(node: KubernetesNodeSettings) {
  return checksKey(node) ? [CHECKED_KEY_MOUNT] : [{ name: 'key', mountPath: POD_PATHS.keyDir, readOnly: true }];
}

/**
 * How a released companion that reads the node key gets it, for a node that checks its key: from the checked copy
 * alone (its file, or, for a companion that reads it from its environment, put there by start-companion.sh), never
 * from the Secret. Undefined for the other nodes.
 */
export function checkedKeyCompanion(node: KubernetesNodeSettings, companion: ReleasedCompanionDescription) {
  if (!checksKey(node)) return undefined;
  const mount = CHECKED_KEY_MOUNT;
  if (!companion.keyVariable) return { keyMounts: [mount] };
  return {
    command: ['/bin/sh', `${POD_PATHS.configDir}/${START_COMPANION_SCRIPT}`],
    args: [companion.imageExecutable, companion.keyVariable, CHECKED_KEY_FILE],
    env: [{ name: MISSING_KEY_EXIT_VARIABLE, value: String(MISSING_KEY_EXIT_CODE) }],
    keyMounts: [mount, { name: 'config', mountPath: POD_PATHS.configDir, readOnly: true }],
  };
}

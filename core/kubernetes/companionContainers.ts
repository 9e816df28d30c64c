/**
 * The companion services of a Kubernetes node as containers of its pod: each runs its executable from the network's
 * image directly (the reference image's entry script prints the node key to the log, so it is not used), in an empty
 * working folder holding its config.toml from the node's ConfigMap, as the pod's unprivileged user on a read-only
 * root filesystem. The relay signer gets the node key from the key Secret in its environment (the one way it reads
 * it); the rotation client reads the Secret's file, mounted read-only. When the key is the operator's Secret, both
 * read only the copy that passed the key check instead (core/kubernetes/keyCheck.ts). Neither is reachable from outside the pod: the
 * Service does not name their ports and the pod's NetworkPolicy admits none of them. The monitoring client runs its
 * own image with its arguments, and keeps its registration on the node's data volume.
 */
import {
  COMPANION_POD_DIR,
  companionConfigEntry,
  companionStateFolder,
  kubernetesNames,
  POD_PATHS,
} from '../catalog/kubernetes';
import type {
  CompanionDescription,
  ContainerCompanionDescription,
  ReleasedCompanionDescription,
} from '../node/companions';
import type { KubernetesNodeSettings } from '../settings/model';
import { checkedKeyCompanion } from './keyCheck';
import { nodeKeySecret } from './nodeKeySecret';

/** The name of a companion's working-folder (or scratch) volume. */
const workVolume = (companion: CompanionDescription) => `${companion.settings.name}-work`;

/** The containers of the node's companions. */
export function companionContainers(node: KubernetesNodeSettings, companions: readonly CompanionDescription[]) {
  return companions.map((companion) =>
    companion.kind === 'container' ? imageContainer(node, companion) : releasedContainer(node, companion),
  );
}

/** What every companion container has: small, unprivileged, on a read-only root filesystem. */
const COMMON = {
  resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
};

/** A released companion: its executable from the network's image, in its working folder with its config.toml. */
function releasedContainer(node: KubernetesNodeSettings, companion: ReleasedCompanionDescription) {
  const names = kubernetesNames(node.name);
  const keySecret = nodeKeySecret(node);
  // A node whose key is the operator's Secret: the companion reads only the key that passed the key check.
  const checked = checkedKeyCompanion(node, companion);
  return {
    name: names.companionContainer(companion.settings.name),
    image: companion.image,
    command: checked?.command ?? [companion.imageExecutable],
    ...(checked?.args ? { args: checked.args } : {}),
    workingDir: COMPANION_POD_DIR,
    env:
      checked?.env ??
      (companion.keyVariable
        ? [{ name: companion.keyVariable, valueFrom: { secretKeyRef: { name: keySecret.name, key: keySecret.entry } } }]
        : []),
    ...(companion.port ? { ports: [{ containerPort: companion.port, protocol: 'TCP' }] } : {}),
    resources: COMMON.resources,
    volumeMounts: [
      { name: workVolume(companion), mountPath: COMPANION_POD_DIR },
      {
        name: 'config',
        mountPath: `${COMPANION_POD_DIR}/${companion.configFile}`,
        subPath: companionConfigEntry(companion.settings.name),
        readOnly: true,
      },
      ...(checked?.keyMounts ??
        (companion.keyVariable ? [] : [{ name: 'key', mountPath: POD_PATHS.keyDir, readOnly: true }])),
    ],
    securityContext: COMMON.securityContext,
  };
}

/**
 * A companion run from its own image (the monitoring client): its command and arguments, its state (the registration
 * secret) in its own folder of the node's data volume, which outlives the pod and every redeploy, and a scratch /tmp.
 * It gets nothing of the node's identity, and runs as a uid of its own (in the pod's group, which owns its folder).
 *
 * Residual risk: the containers of a pod share one network namespace, so its uid does not keep it off the loopback
 * ports of the others (the relay signer's 9001, Besu's RPC 4545 and WebSocket 4546), and a NetworkPolicy applies
 * between pods only. Only a pod of its own would keep it off them.
 */
function imageContainer(node: KubernetesNodeSettings, companion: ContainerCompanionDescription) {
  return {
    name: kubernetesNames(node.name).companionContainer(companion.settings.name),
    image: companion.image,
    command: [companion.command],
    args: companion.args,
    env: [{ name: companion.stateVariable, value: companion.stateMountPath }],
    resources: COMMON.resources,
    volumeMounts: [
      { name: 'data', mountPath: companion.stateMountPath, subPath: companionStateFolder(companion.settings.name) },
      { name: workVolume(companion), mountPath: '/tmp' },
    ],
    securityContext: { ...COMMON.securityContext, runAsUser: companion.podUid },
  };
}

/**
 * The init container that makes the state folders of the companions run from their own image, on the node's data
 * volume, before any container starts: as the pod's user, open to the pod's group only (the companion runs as a uid of
 * its own in that group), with what the pod's user wrote there before (a registration made when the companion still
 * ran as it) opened to the group too. Left to the kubelet, a missing subPath folder is made as root, and the
 * unprivileged companion could not write its registration there. It runs Besu's image (already on the worker) and
 * only `mkdir` and `chmod`; none when no such companion runs.
 */
export function companionStateInit(
  node: KubernetesNodeSettings,
  besuImage: string,
  companions: readonly CompanionDescription[],
) {
  const folders = companions
    .filter((c) => c.kind === 'container')
    .map((c) => `${POD_PATHS.dataDir}/${companionStateFolder(c.settings.name)}`);
  if (folders.length === 0) return [];
  return [
    {
      name: kubernetesNames(node.name).companionContainer('companion-state'),
      image: besuImage,
      command: [
        '/bin/sh',
        '-c',
        'mkdir -p "$@" && find "$@" -user "$(id -u)" ! -type l -exec chmod g+rwX,o-rwx {} +',
        'sh',
        ...folders,
      ],
      resources: COMMON.resources,
      volumeMounts: [{ name: 'data', mountPath: POD_PATHS.dataDir }],
      securityContext: COMMON.securityContext,
    },
  ];
}

/** The working-folder volumes of the node's companions. */
export function companionVolumes(companions: readonly CompanionDescription[]) {
  return companions.map((companion) => ({ name: workVolume(companion), emptyDir: {} }));
}

/** The ConfigMap entries of the node's released companions: `<companion>.toml` → its config.toml. */
export function companionConfigFiles(companions: readonly CompanionDescription[]): Record<string, string> {
  return Object.fromEntries(
    companions.flatMap((c) => (c.kind === 'release' ? [[companionConfigEntry(c.settings.name), c.configToml]] : [])),
  );
}

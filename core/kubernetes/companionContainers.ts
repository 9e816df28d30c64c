/**
 * The companion services of a Kubernetes node as containers of its pod: each runs its executable from the network's
 * image directly (the reference image's entry script prints the node key to the log, so it is not used), in an empty
 * working folder holding its config.toml from the node's ConfigMap, as the pod's unprivileged user on a read-only
 * root filesystem. The relay signer gets the node key from the key Secret in its environment (the one way it reads
 * it); the rotation client reads the Secret's file, mounted read-only. Neither is reachable from outside the pod: the
 * Service does not name their ports and the pod's NetworkPolicy admits none of them.
 */
import { COMPANION_POD_DIR, companionConfigEntry, kubernetesNames, POD_FILES, POD_PATHS } from '../catalog/kubernetes';
import type { CompanionDescription } from '../node/companions';
import type { KubernetesNodeSettings } from '../settings/model';

/** The name of a companion's working-folder volume. */
const workVolume = (companion: CompanionDescription) => `${companion.settings.name}-work`;

/** The containers of the node's companions. */
export function companionContainers(node: KubernetesNodeSettings, companions: readonly CompanionDescription[]) {
  const names = kubernetesNames(node.name);
  return companions.map((companion) => ({
    name: names.companionContainer(companion.settings.name),
    image: companion.settings.image,
    command: [companion.imageExecutable],
    workingDir: COMPANION_POD_DIR,
    env: companion.keyVariable
      ? [{ name: companion.keyVariable, valueFrom: { secretKeyRef: { name: names.keySecret, key: POD_FILES.key } } }]
      : [],
    ...(companion.port ? { ports: [{ containerPort: companion.port, protocol: 'TCP' }] } : {}),
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
    volumeMounts: [
      { name: workVolume(companion), mountPath: COMPANION_POD_DIR },
      {
        name: 'config',
        mountPath: `${COMPANION_POD_DIR}/${companion.configFile}`,
        subPath: companionConfigEntry(companion.settings.name),
        readOnly: true,
      },
      ...(companion.keyVariable ? [] : [{ name: 'key', mountPath: POD_PATHS.keyDir, readOnly: true }]),
    ],
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  }));
}

/** The working-folder volumes of the node's companions. */
export function companionVolumes(companions: readonly CompanionDescription[]) {
  return companions.map((companion) => ({ name: workVolume(companion), emptyDir: {} }));
}

/** The ConfigMap entries of the node's companions: `<companion>.toml` → its config.toml. */
export function companionConfigFiles(companions: readonly CompanionDescription[]): Record<string, string> {
  return Object.fromEntries(companions.map((c) => [companionConfigEntry(c.settings.name), c.configToml]));
}

/**
 * Rules on the images of the containers that receive the node key (Besu, the relay signer, the rotation client) or
 * touch the node's data (the backups: restic and kubectl): a tag can be moved, and a registry account taken over, so
 * such a container must run from an image pinned by its registry digest (`…@sha256:<digest>`). Production networks
 * always need it; on a test network a tag is flagged.
 *
 * What touches the node's data: an init container of the node's pod that mounts its data volume (the backup before a
 * release change), and every container and init container of a Job or CronJob whose pod mounts it or that is one of
 * the node's backups (the schedule, whose kubectl steps stop and start the node, and the Jobs of `npm run node`).
 */
import { CHECKED_KEY_VOLUME } from '../../core/kubernetes/keyCheck';
import { BACKUP_LABEL, BACKUP_TOOL, KUBECTL_IMAGE } from '../../core/catalog/backups';
import { BESU_IMAGE_REPOSITORY } from '../../core/catalog/besu';
import { KEY_SECRET_ANNOTATION, kubernetesNames } from '../../core/catalog/kubernetes';
import { at, BACKUP_TYPES, isOpaque, kubernetesNodeOf, labelsOf, PolicyResource, TYPES } from '../inspect';
import { describeResource, networkOf, remoteParameters, Rule } from './common';
import { COMPANIONS } from '../../core/catalog/companions';
import { companionParameterPrefix } from '../../core/remote/steps';
import { ETHSTATS_KEY } from '../../core/settings/companions';
import type { PolicyContext } from '../expectations';

/** A registry digest at the end of an image reference. */
const DIGEST = /@sha256:[0-9a-f]{64}$/;

/** A container of the pod (or an init container), as the rules read it. */
type Container = Record<string, unknown>;

/** The pod template of a StatefulSet or Job, or of a CronJob's Jobs. */
function podTemplate(resource: PolicyResource): unknown {
  return resource.type === BACKUP_TYPES.cronJob
    ? at(resource.inputs, 'spec', 'jobTemplate', 'spec', 'template')
    : at(resource.inputs, 'spec', 'template');
}

/** The containers, or the init containers, of the resource's pod. */
function podContainers(resource: PolicyResource, field: 'initContainers' | 'containers'): Container[] {
  const list = at(podTemplate(resource), 'spec', field);
  return Array.isArray(list) ? (list as Container[]) : [];
}

/** The volumes of the resource's pod. */
function podVolumes(resource: PolicyResource): unknown[] {
  const volumes = at(podTemplate(resource), 'spec', 'volumes');
  return Array.isArray(volumes) ? volumes : [];
}

/** The names of the pod's volumes that pass a test. */
function volumesWhere(resource: PolicyResource, test: (volume: unknown) => boolean): unknown[] {
  return podVolumes(resource)
    .filter(test)
    .map((volume) => at(volume, 'name'));
}

/** Whether a container mounts one of these volumes. */
function mountsOneOf(container: Container, volumes: unknown[]): boolean {
  const mounts = at(container, 'volumeMounts');
  return Array.isArray(mounts) && mounts.some((mount) => volumes.includes(at(mount, 'name')));
}

/**
 * Whether a Secret name is the node key's: the key Secret of the StatefulSet's node or the operator's it names, or,
 * where the node cannot be told, any Secret (never skipped).
 */
function keySecretTest(resource: PolicyResource): (name: unknown) => boolean {
  const node = kubernetesNodeOf(resource);
  if (node === undefined) return () => true;
  // The program's key Secret, and the operator's the StatefulSet names (key custody `secret`; the rule
  // key-secret-referenced holds that annotation to the settings).
  const operators = at(resource.inputs, 'metadata', 'annotations', KEY_SECRET_ANNOTATION);
  return (name) => name === kubernetesNames(node).keySecret || (operators !== undefined && name === operators);
}

/**
 * Whether a container gets the node key: it mounts a volume of the key Secret or the key check's copy of the key
 * (core/kubernetes/keyCheck.ts), or has a variable from the key Secret.
 */
function receivesKey(container: Container, resource: PolicyResource): boolean {
  const isKey = keySecretTest(resource);
  const keyVolumes = volumesWhere(resource, (volume) => {
    const projected = at(volume, 'projected', 'sources');
    return (
      at(volume, 'name') === CHECKED_KEY_VOLUME ||
      isKey(at(volume, 'secret', 'secretName')) ||
      (Array.isArray(projected) && projected.some((source) => isKey(at(source, 'secret', 'name'))))
    );
  });
  const env = at(container, 'env');
  const envFrom = at(container, 'envFrom');
  return (
    mountsOneOf(container, keyVolumes) ||
    (Array.isArray(env) && env.some((variable) => isKey(at(variable, 'valueFrom', 'secretKeyRef', 'name')))) ||
    (Array.isArray(envFrom) && envFrom.some((source) => isKey(at(source, 'secretRef', 'name'))))
  );
}

/**
 * The volumes of the pod that are the node's data: a claim of its data volume, or, where the node cannot be told,
 * any claim (never skipped).
 */
function dataVolumes(resource: PolicyResource): unknown[] {
  const node = kubernetesNodeOf(resource);
  const dataVolume = node === undefined ? undefined : kubernetesNames(node).dataVolume;
  return volumesWhere(resource, (volume) => {
    const claim = at(volume, 'persistentVolumeClaim', 'claimName');
    return claim !== undefined && (dataVolume === undefined || claim === dataVolume);
  });
}

/** Whether a Job or CronJob is one of the node's backups: the label on it or on its pod. */
function isBackup(resource: PolicyResource): boolean {
  const podLabels = at(podTemplate(resource), 'metadata', 'labels');
  return labelsOf(resource)[BACKUP_LABEL] !== undefined || at(podLabels, BACKUP_LABEL) !== undefined;
}

/** A container that must run from a digest, and why. */
interface Unpinned {
  name: string;
  image: string;
  /** `receives the node key`, `touches the node's data (…)`, or `is pulled onto the node's machine`. */
  why: string;
  /** How to pin it, where the why does not tell. */
  pin?: string;
}

/** Why a container must be pinned, or undefined when it need not be. */
function mustBePinned(resource: PolicyResource, container: Container, init: boolean): string | undefined {
  if (resource.type === TYPES.statefulSet) {
    if (receivesKey(container, resource)) return 'receives the node key';
    return init && mountsOneOf(container, dataVolumes(resource))
      ? "touches the node's data (it mounts the data volume)"
      : undefined;
  }
  // A Job or a CronJob: every container of a pod that touches the node's data.
  const data = dataVolumes(resource);
  if (mountsOneOf(container, data)) return "touches the node's data (it mounts the data volume)";
  const podTouchesData = [...podContainers(resource, 'initContainers'), ...podContainers(resource, 'containers')].some(
    (c) => mountsOneOf(c, data),
  );
  return podTouchesData || isBackup(resource) ? "touches the node's data (a step of the node's backups)" : undefined;
}

/** The containers of a resource that must run from a digest and run from a tag. */
function unpinnedContainers(resource: PolicyResource): Unpinned[] {
  const all = [
    ...podContainers(resource, 'initContainers').map((container) => ({ container, init: true })),
    ...podContainers(resource, 'containers').map((container) => ({ container, init: false })),
  ];
  return all.flatMap(({ container, init }) => {
    if (isOpaque(container.image) || DIGEST.test(String(container.image))) return [];
    const why = mustBePinned(resource, container, init);
    return why === undefined ? [] : [{ name: String(container.name), image: String(container.image), why }];
  });
}

/** Why a companion's image on a machine must run from a digest: the companions step pulls it there. */
const ON_MACHINE = "is pulled onto the node's machine";

/**
 * The images the companions step of an SSH node pulls by tag (the monitoring client without imageDigest, which the
 * settings allow on a test network only): the machine runs them beside Besu, on its network.
 */
function unpinnedStepImages(resource: PolicyResource): Unpinned[] {
  const step = remoteParameters(resource, ['companions']);
  if (!step) return [];
  const names = (step.parameters.COMPANIONS ?? '').split(' ');
  return COMPANIONS.filter((c) => names.includes(c.name)).flatMap((companion) => {
    const image = step.parameters[`${companionParameterPrefix(companion.name)}_IMAGE`];
    if (image === undefined || DIGEST.test(image)) return [];
    const pin = `pin it by its registry digest (lacchain:companions.${ETHSTATS_KEY}.imageDigest; npm run init reads it with podman or docker; docs/companions.md)`;
    return [{ name: companion.name, image, why: ON_MACHINE, pin }];
  });
}

/** The containers of a pod, or the images of a companions step, that must run from a digest and run from a tag. */
function unpinned(resource: PolicyResource): Unpinned[] {
  return resource.type === TYPES.command ? unpinnedStepImages(resource) : unpinnedContainers(resource);
}

/** Whether the resource's network lets a container holding the key run from a tag (test networks only). */
function allowsTags(resource: PolicyResource, context: PolicyContext): boolean {
  return networkOf(resource, context)?.allowsUnpinnedKeyImages === true;
}

/** How to pin an image that receives the node key. */
const HOW_TO_PIN =
  'pin it by its registry digest (values file deploy.imageDigest for Besu, lacchain:companions.<companion>.imageDigest for a companion; docs/kubernetes.md, "Pinning images")';

/** An image's repository: without its digest and tag. */
function repositoryOf(image: string): string {
  const name = image.split('@')[0];
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  return colon > slash ? name.slice(0, colon) : name;
}

/**
 * The values file's setting that pins an image touching the node's data, by the image's repository (Besu's: the init
 * container that makes the companions' state folders runs it).
 */
const DATA_IMAGE_PINS: [string, string][] = [
  [BESU_IMAGE_REPOSITORY, 'deploy.imageDigest'],
  [repositoryOf(BACKUP_TOOL.image), 'deploy.backupImageDigest'],
  [repositoryOf(KUBECTL_IMAGE), 'deploy.kubectlImageDigest'],
];

/** The values file's setting that pins an image touching the node's data (Besu's, restic's, kubectl's), if known. */
export function dataImageSetting(image: string): string | undefined {
  return DATA_IMAGE_PINS.find(([repository]) => repositoryOf(image) === repository)?.[1];
}

/** How to pin a container's image: the setting that pins it. */
function howToPin(container: Unpinned): string {
  if (container.pin) return container.pin;
  if (container.why === 'receives the node key') return HOW_TO_PIN;
  const setting =
    dataImageSetting(container.image) ?? 'deploy.backupImageDigest for restic, deploy.kubectlImageDigest for kubectl';
  return `pin it by its registry digest (values file ${setting}; docs/kubernetes.md, "Pinning images")`;
}

/** The resources these rules read: the node's pod, its backups' Jobs and CronJobs, and a machine's companions step. */
const PINNED_TYPES = [TYPES.statefulSet, BACKUP_TYPES.cronJob, BACKUP_TYPES.job, TYPES.command];

export const keyImagesPinned: Rule = {
  name: 'node-key-images-pinned',
  description:
    "Every container that receives the node key (Besu, the relay signer, the rotation client), every one that touches the node's data (the pod's init container on the data volume; each container of the backups' Jobs and CronJobs: restic, kubectl), and every image a machine's companions step pulls (the monitoring client), runs from an image pinned by its registry digest: a moved tag or a taken-over registry account would get the key, or the node's data and its StatefulSet, or a process on the node's machine.",
  types: PINNED_TYPES,
  check(resource, context) {
    if (allowsTags(resource, context)) return [];
    const where = describeResource(resource);
    return unpinned(resource).map(
      (c) => `${where}: container ${c.name} ${c.why} but runs image ${c.image} by tag: ${howToPin(c)}`,
    );
  },
};

export const keyImagesByTag: Rule = {
  name: 'node-key-images-by-tag',
  description:
    "Flags a test network's container that receives the node key, touches the node's data or runs on the node's machine (the monitoring client's image), and runs from an image tag without a registry digest.",
  types: PINNED_TYPES,
  advisory: true,
  check(resource, context) {
    if (!allowsTags(resource, context)) return [];
    const where = describeResource(resource);
    return unpinned(resource).map(
      (c) =>
        `${where}: container ${c.name} ${c.why} from image ${c.image}, a tag that can be moved: ${howToPin(c)} before this node holds anything of value`,
    );
  },
};

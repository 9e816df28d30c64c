/**
 * Rules on the images of the containers that receive the node key (Besu, the relay signer, the rotation client): a
 * tag can be moved, and a registry account taken over, so such a container must run from an image pinned by its
 * registry digest (`…@sha256:<digest>`). Production networks always need it; on a test network a tag is flagged.
 */
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { at, isOpaque, kubernetesNodeOf, PolicyResource, TYPES } from '../inspect';
import { describeResource, networkOf, Rule } from './common';
import type { PolicyContext } from '../expectations';

/** A registry digest at the end of an image reference. */
const DIGEST = /@sha256:[0-9a-f]{64}$/;

/** A container of the pod (or an init container), as the rules read it. */
type Container = Record<string, unknown>;

/** Every container and init container of a StatefulSet's pod. */
function podContainers(resource: PolicyResource): Container[] {
  const spec = at(resource.inputs, 'spec', 'template', 'spec');
  return ['initContainers', 'containers'].flatMap((field) => {
    const list = at(spec, field);
    return Array.isArray(list) ? (list as Container[]) : [];
  });
}

/**
 * Whether a Secret name is the node key's: the key Secret of the StatefulSet's node, or, where the node cannot be
 * told, any Secret (never skipped).
 */
function keySecretTest(resource: PolicyResource): (name: unknown) => boolean {
  const node = kubernetesNodeOf(resource);
  const keySecret = node === undefined ? undefined : kubernetesNames(node).keySecret;
  return (name) => keySecret === undefined || name === keySecret;
}

/** Whether a container gets the node key: it mounts a volume of the key Secret, or has a variable from it. */
function receivesKey(container: Container, resource: PolicyResource): boolean {
  const isKey = keySecretTest(resource);
  const volumes = at(resource.inputs, 'spec', 'template', 'spec', 'volumes');
  const keyVolumes = (Array.isArray(volumes) ? volumes : [])
    .filter((volume) => {
      const projected = at(volume, 'projected', 'sources');
      return (
        isKey(at(volume, 'secret', 'secretName')) ||
        (Array.isArray(projected) && projected.some((source) => isKey(at(source, 'secret', 'name'))))
      );
    })
    .map((volume) => at(volume, 'name'));
  const mounts = at(container, 'volumeMounts');
  const env = at(container, 'env');
  const envFrom = at(container, 'envFrom');
  return (
    (Array.isArray(mounts) && mounts.some((mount) => keyVolumes.includes(at(mount, 'name')))) ||
    (Array.isArray(env) && env.some((variable) => isKey(at(variable, 'valueFrom', 'secretKeyRef', 'name')))) ||
    (Array.isArray(envFrom) && envFrom.some((source) => isKey(at(source, 'secretRef', 'name'))))
  );
}

/** The containers of a StatefulSet that receive the node key and run from an image without a digest. */
function unpinnedKeyContainers(resource: PolicyResource): { name: string; image: string }[] {
  return podContainers(resource)
    .filter((container) => receivesKey(container, resource))
    .filter((container) => !isOpaque(container.image) && !DIGEST.test(String(container.image)))
    .map((container) => ({ name: String(container.name), image: String(container.image) }));
}

/** Whether the resource's network lets a container holding the key run from a tag (test networks only). */
function allowsTags(resource: PolicyResource, context: PolicyContext): boolean {
  return networkOf(resource, context)?.allowsUnpinnedKeyImages === true;
}

/** How to pin an image, in every message of these rules. */
const HOW_TO_PIN =
  'pin it by its registry digest (values file deploy.imageDigest for Besu, lacchain:companions.<companion>.imageDigest for a companion; docs/kubernetes.md, "Pinning images")';

export const keyImagesPinned: Rule = {
  name: 'node-key-images-pinned',
  description:
    'Every container that receives the node key (Besu, the relay signer, the rotation client) runs from an image pinned by its registry digest: a moved tag or a taken-over registry account would get the key.',
  types: [TYPES.statefulSet],
  check(resource, context) {
    if (allowsTags(resource, context)) return [];
    const where = describeResource(resource);
    return unpinnedKeyContainers(resource).map(
      (c) => `${where}: container ${c.name} receives the node key but runs image ${c.image} by tag: ${HOW_TO_PIN}`,
    );
  },
};

export const keyImagesByTag: Rule = {
  name: 'node-key-images-by-tag',
  description:
    "Flags a test network's container that receives the node key and runs from an image tag without a registry digest.",
  types: [TYPES.statefulSet],
  advisory: true,
  check(resource, context) {
    if (!allowsTags(resource, context)) return [];
    const where = describeResource(resource);
    return unpinnedKeyContainers(resource).map(
      (c) =>
        `${where}: container ${c.name} receives the node key from image ${c.image}, a tag that can be moved: ${HOW_TO_PIN} before this node holds anything of value`,
    );
  },
};

/**
 * Rules on what the node runs: a Besu release with on-chain permissioning (the core's release rule), and the network's
 * genesis by its pinned digest.
 */
import { BESU_IMAGE_REPOSITORY, lacksPermissioning, parseVersion, BESU_CHANGES } from '../../core/catalog/besu';
import { POD_FILES } from '../../core/catalog/kubernetes';
import { Network } from '../../core/catalog/networks';
import { sha256Hex } from '../../core/genesis';
import { at, isOpaque, placeholderDigest, TYPES } from '../inspect';
import { containersOf, describeResource, networkOf, remoteParameters, Rule } from './common';

/** Why a release cannot keep a node permissioned, or undefined when it can. */
function releaseProblem(version: string): string | undefined {
  if (!parseVersion(version)) return `"${version}" is not a release version <major>.<minor>.<patch>`;
  if (lacksPermissioning(version)) {
    return `Besu ${version} has no on-chain permissioning (removed in ${BESU_CHANGES.permissioningRemoved}), which the LACChain networks need: stay below ${BESU_CHANGES.permissioningRemoved}`;
  }
  return undefined;
}

/**
 * The release of a Besu image reference (`hyperledger/besu:23.4.1`, or pinned `hyperledger/besu:23.4.1@sha256:…`),
 * or the problem reading it. A digest without a tag names no release.
 */
function imageRelease(image: string): { version: string } | { problem: string } {
  const [named, digest] = image.split('@');
  const colon = named.lastIndexOf(':');
  const tag = colon > named.lastIndexOf('/') ? named.slice(colon + 1) : '';
  if (!tag && digest !== undefined) {
    return { problem: `image ${image} is pinned by digest without a release tag: its release cannot be checked` };
  }
  if (!tag) return { problem: `image ${image} has no release tag (it would run "latest")` };
  const version = /^(\d+\.\d+\.\d+)(?:$|[-+])/.exec(tag)?.[1];
  return version ? { version } : { problem: `image ${image}: tag "${tag}" is not a release version` };
}

/** True for an image of Besu (`hyperledger/besu`, with or without a registry). */
function isBesuImage(image: string): boolean {
  const repository = image.split('@')[0].replace(/:[^:/]*$/, '');
  return repository === BESU_IMAGE_REPOSITORY || repository.endsWith(`/${BESU_IMAGE_REPOSITORY}`);
}

export const besuVersionHasPermissioning: Rule = {
  name: 'besu-version-supports-permissioning',
  description: `The Besu release still has on-chain node permissioning (below ${BESU_CHANGES.permissioningRemoved}).`,
  types: [TYPES.statefulSet, TYPES.command],
  check(resource) {
    const where = describeResource(resource);
    if (resource.type === TYPES.command) {
      const step = remoteParameters(resource, ['release', 'start']);
      const version = step?.parameters.BESU_VERSION;
      if (version === undefined) return [];
      const problem = releaseProblem(version);
      return problem ? [`${where}: BESU_VERSION ${problem}`] : [];
    }
    const images = containersOf(resource)
      .map((c) => c.image)
      .filter((image): image is string => typeof image === 'string' && !isOpaque(image) && isBesuImage(image));
    if (images.length === 0 && containersOf(resource).length > 0) {
      return [`${where}: no container runs ${BESU_IMAGE_REPOSITORY}: the release cannot be checked`];
    }
    return images.flatMap((image) => {
      const release = imageRelease(image);
      if ('problem' in release) return [`${where}: ${release.problem}`];
      const problem = releaseProblem(release.version);
      return problem ? [`${where}: image ${image}: ${problem}`] : [];
    });
  },
};

/** Why a genesis text is not the network's pinned one, or undefined when it is. */
function genesisProblem(text: unknown, network: Network | undefined): string | undefined {
  if (!network) return 'the network is unknown, so the pinned genesis digest is too';
  if (typeof text !== 'string') return 'no genesis is given';
  const pinned = network.genesis.sha256;
  if (sha256Hex(text) === pinned || placeholderDigest(text) === pinned) return undefined;
  const named = placeholderDigest(text);
  return `the genesis has sha256 ${named ?? sha256Hex(text)}, not the digest pinned for ${network.name} (${pinned})`;
}

export const genesisDigestPinned: Rule = {
  name: 'genesis-digest-pinned',
  description:
    "The genesis the node starts from is the network's, by the SHA-256 pinned in the catalog (or, in the offline " +
    'plan, the placeholder naming that digest).',
  types: [TYPES.configMap, TYPES.command],
  check(resource, context) {
    const where = describeResource(resource);
    if (resource.type === TYPES.configMap) {
      const text = at(resource.inputs, 'data', POD_FILES.genesis);
      if (isOpaque(text) || isOpaque(at(resource.inputs, 'data'))) return [];
      const problem = genesisProblem(text, networkOf(resource, context));
      return problem ? [`${where}: ${POD_FILES.genesis}: ${problem}`] : [];
    }
    const files = remoteParameters(resource, ['node-files']);
    if (!files) return [];
    const { GENESIS_JSON: text, GENESIS_SHA256: digest } = files.parameters;
    const problem = genesisProblem(text, networkOf(resource, context));
    if (problem) return [`${where}: GENESIS_JSON: ${problem}`];
    // The step checks the file it writes against GENESIS_SHA256: it must be the digest of what is sent.
    return digest === sha256Hex(text)
      ? []
      : [`${where}: GENESIS_SHA256 ${String(digest)} is not the digest of the GENESIS_JSON sent (${sha256Hex(text)})`];
  },
};

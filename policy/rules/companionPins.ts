/**
 * The rule on what a machine installs beside Besu: the relay signer and the rotation client are executables
 * downloaded by the companions step and run with the node key, so each download is checked against a pin the step
 * is given: the operator's SHA-256, or the git blob id the catalog pins for a catalog release at the catalog's URL.
 */
import { companionReleaseUrl, RELEASED_COMPANIONS } from '../../core/catalog/companions';
import { companionParameterPrefix } from '../../core/remote/steps';
import { describeResource, remoteParameters, Rule } from './common';
import { TYPES } from '../inspect';

/** A SHA-256 as the step compares it: 64 hex digits. */
const SHA256 = /^[0-9a-f]{64}$/;

/** Why a released companion's download is not pinned as the catalog allows, or undefined when it is. */
function pinProblem(
  companion: (typeof RELEASED_COMPANIONS)[number],
  parameters: Record<string, string>,
): string | undefined {
  const prefix = companionParameterPrefix(companion.name);
  const [version, url, sha256, blob] = ['VERSION', 'URL', 'SHA256', 'GIT_BLOB'].map(
    (p) => parameters[`${prefix}_${p}`],
  );
  if (sha256 !== undefined && !SHA256.test(sha256)) return `${prefix}_SHA256 ${sha256} is not a SHA-256`;
  if (blob !== undefined) {
    const pinned = Object.hasOwn(companion.releaseBlobs, version) ? companion.releaseBlobs[version] : undefined;
    const catalogUrl = companionReleaseUrl(companion, companion.defaultReleaseUrl, version);
    if (blob !== pinned || url !== catalogUrl) {
      return `${prefix}_GIT_BLOB ${blob} is not the git blob id the catalog pins for release ${version} at ${catalogUrl} (${pinned ?? 'none'}; the step downloads ${url})`;
    }
  }
  if (sha256 === undefined && blob === undefined) {
    return `${url} would be installed unchecked: give lacchain:companions.<companion>.sha256, or a release the catalog pins (docs/companions.md)`;
  }
  return undefined;
}

export const companionExecutablesPinned: Rule = {
  name: 'companion-executables-pinned',
  description:
    "Every companion executable a machine downloads (the relay signer, the rotation client) is checked by the companions step against a pin: the operator's SHA-256, or the git blob id the catalog pins for its release at the catalog's URL.",
  types: [TYPES.command],
  check(resource) {
    const step = remoteParameters(resource, ['companions']);
    if (!step) return [];
    const names = (step.parameters.COMPANIONS ?? '').split(' ');
    const where = describeResource(resource);
    return RELEASED_COMPANIONS.filter((c) => names.includes(c.name)).flatMap((companion) => {
      const problem = pinProblem(companion, step.parameters);
      return problem ? [`${where}: ${companion.name}: ${problem}`] : [];
    });
  },
};

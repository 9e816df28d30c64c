/**
 * `lacchain:companions`, the network's companion services beside Besu: each one's settings with the reference's
 * defaults per network, which nodes run it, and the checks against those nodes (an SSH node needs the executable's
 * or the image's digest; a companion that calls Besu's HTTP RPC cannot log in to it; the rotation client needs the
 * IBFT API; the monitoring server registers only some node names).
 */
import {
  companionReleaseUrl,
  COMPANIONS,
  ETHSTATS,
  RELAY_SIGNER,
  RELEASED_COMPANIONS,
  ROTATION_VALIDATOR,
} from '../catalog/companions';
import { configKey } from '../catalog/defaults';
import type { Network } from '../catalog/networks';
import { rpcApisOf } from '../rpc/access';
import type { CompanionSettings, EthstatsSettings, NodeSettings, ReleasedCompanionSettings } from './model';
import type { Problem } from './problems';
import type { CompanionsInput } from './schema';

const COMPANIONS_KEY = configKey('companions');
/** The setting key of the monitoring client. */
/** The monitoring client's key under lacchain:companions. */
export const ETHSTATS_KEY = 'ethstats';

/** Each companion's setting key and the network contract it defaults to. */
const SETTING = {
  [RELAY_SIGNER.name]: { key: 'relaySigner', contract: (n: Network) => n.relayHubContract },
  [ROTATION_VALIDATOR.name]: { key: 'rotationValidator', contract: (n: Network) => n.validatorRotationContract },
} as const;

/** The stack's companion settings, with the defaults filled in (enabled or not), in the catalog's order. */
export function readCompanions(given: CompanionsInput | undefined, network: Network): CompanionSettings[] {
  const released = RELEASED_COMPANIONS.map((companion): ReleasedCompanionSettings => {
    const setting = SETTING[companion.name];
    const input = given?.[setting.key];
    const contract =
      input && 'relayHubContract' in input
        ? input.relayHubContract
        : input && 'rotationContract' in input
          ? input.rotationContract
          : undefined;
    const version = input?.version ?? companion.defaultVersion;
    const gitBlob = catalogBlob(companion, input?.releaseUrl, version);
    return {
      name: companion.name,
      key: setting.key,
      enabled: input?.enabled ?? true,
      version,
      releaseUrl: companionReleaseUrl(companion, input?.releaseUrl ?? companion.defaultReleaseUrl, version),
      ...(input?.sha256 ? { sha256: input.sha256 } : {}),
      ...(gitBlob ? { gitBlob } : {}),
      image: input?.image ?? companion.defaultImage,
      ...(input?.imageDigest ? { imageDigest: input.imageDigest } : {}),
      contract: contract ?? setting.contract(network),
    };
  });
  const input = given?.ethstats;
  const ethstats: EthstatsSettings = {
    name: ETHSTATS.name,
    key: ETHSTATS_KEY,
    enabled: input?.enabled ?? true,
    image: input?.image ?? ETHSTATS.defaultImage,
    ...(input?.imageDigest ? { imageDigest: input.imageDigest } : {}),
    serverUrl: input?.serverUrl ?? network.ethstatsUrl,
  };
  return [...released, ethstats];
}

/**
 * The git blob id the catalog pins for a release downloaded from the catalog's own URL (an operator's URL may serve
 * another file, so it takes a sha256), or undefined.
 */
function catalogBlob(
  companion: (typeof RELEASED_COMPANIONS)[number],
  url: string | undefined,
  version: string,
): string | undefined {
  if (url !== undefined && url !== companion.defaultReleaseUrl) return undefined;
  return Object.hasOwn(companion.releaseBlobs, version) ? companion.releaseBlobs[version] : undefined;
}

/** The companions a node runs: the enabled ones made for its node type. */
export function companionsOfNode(node: NodeSettings, companions: readonly CompanionSettings[]): CompanionSettings[] {
  return companions.filter(
    (c) => c.enabled && COMPANIONS.find((d) => d.name === c.name)?.nodeTypes.includes(node.typenode),
  );
}

/** The checks of the companions against the nodes that run them; one problem per setting, naming the nodes. */
export function checkCompanionsForNodes(nodes: readonly NodeSettings[], file: string, problems: Problem[]): void {
  const runners = (companion: CompanionSettings, where: (n: NodeSettings) => boolean) =>
    nodes.filter((n) => n.companions.some((c) => c.name === companion.name) && where(n)).map((n) => n.name);
  const seen = new Map<string, CompanionSettings>();
  for (const node of nodes) for (const c of node.companions) seen.set(c.name, c);
  for (const companion of seen.values()) {
    const key = `${COMPANIONS_KEY}.${companion.key}`;
    const ssh = runners(companion, (n) => n.target === 'ssh');
    if (companion.name === ETHSTATS.name) {
      checkEthstats(
        companion,
        key,
        runners(companion, (n) => n.target === 'ssh' && !n.network.allowsUnpinnedKeyImages),
        runners(companion, (n) => !ETHSTATS.nodeNamePattern.test(n.nodeName)),
      );
      continue;
    }
    if (ssh.length > 0 && !companion.sha256 && !companion.gitBlob) {
      problems.push({
        file,
        key: `${key}.sha256`,
        given: 'missing',
        allowed: `the SHA-256 of the executable at ${companion.releaseUrl} (sha256sum of a copy you have checked: nobody publishes one), which SSH node ${ssh.join(', ')} installs; or enabled: false${pinnedReleases(companion.name)}`,
      });
    }
    const withLogin = runners(companion, (n) => n.rpc.authentication !== undefined);
    if (withLogin.length > 0) {
      problems.push({
        file,
        key: `${key}.enabled`,
        given: `on for node ${withLogin.join(', ')}`,
        allowed: `enabled: false while the node's rpc.authentication is on: the ${companion.name} calls Besu's RPC without credentials`,
      });
    }
    if (companion.name === ROTATION_VALIDATOR.name) {
      const withoutIbft = nodes.filter(
        (n) => n.companions.some((c) => c.name === companion.name) && !rpcApisOf(n, n.rpc).includes('IBFT'),
      );
      if (withoutIbft.length > 0) {
        problems.push({
          file,
          key: `${key}.enabled`,
          given: `on for node ${withoutIbft.map((n) => n.name).join(', ')}, whose RPC lacks IBFT`,
          allowed: `IBFT on the node's RPC (the rotation client votes with ibft_proposeValidatorVote over it): keep the node's rpc.exposure internal (a validator's default: IBFT is never on an RPC reachable from outside unless ${withoutIbft.map((n) => `${n.rpc.nodeKey}.allowConsensusVotesFromOutside`).join(', ')} is true) and IBFT in its rpc.apis if you list them; or enabled: false`,
        });
      }
    }
  }

  /**
   * The monitoring client reads only Besu's WebSocket (never behind authentication), so RPC authentication does not
   * concern it; a production machine pulls its image by digest (a test network's may pull the tag, which the policy
   * flags), and the network's server registers only some names.
   */
  function checkEthstats(companion: EthstatsSettings, key: string, pinning: string[], badNames: string[]): void {
    if (pinning.length > 0 && !companion.imageDigest) {
      problems.push({
        file,
        key: `${key}.imageDigest`,
        given: 'missing',
        allowed: `the registry digest (sha256:…) of ${companion.image} that you have checked (npm run init reads it with podman or docker; or podman pull, then podman image inspect --format '{{.Digest}}'), which SSH node ${pinning.join(', ')} pulls by digest on a production network; or enabled: false`,
      });
    }
    if (badNames.length > 0) {
      const named = nodes.filter((n) => badNames.includes(n.name)).map((n) => `${n.name} (${n.nodeName})`);
      problems.push({
        file,
        key: `${key}.enabled`,
        given: `on for node ${named.join(', ')}, whose name the network's ethstats server does not register`,
        allowed: `node names of 3 to 64 letters, digits, hyphens and underscores (the ethstats server's rule), or enabled: false`,
      });
    }
  }
}

/** The releases whose executable the catalog pins, said after a missing digest: `; or release 1.0.1 …`, or nothing. */
function pinnedReleases(name: ReleasedCompanionSettings['name']): string {
  const companion = RELEASED_COMPANIONS.find((c) => c.name === name)!;
  const releases = Object.keys(companion.releaseBlobs);
  if (releases.length === 0) return '';
  return `; or release ${releases.join(', ')} from the catalog's URL (no releaseUrl), which the catalog pins by its git blob id`;
}

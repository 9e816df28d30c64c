/**
 * Hyperledger Besu releases: which ones this project deploys, what each needs and which options each accepts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { PROJECT_DIR } from '../projectDir';

/** A Besu release version, `<major>.<minor>.<patch>`. */
export type Version = [number, number, number];

/** The shape of a release version as an operator types it. */
export const VERSION_PATTERN = /^(\d+)\.(\d+)\.(\d+)$/;

/** Parses `<major>.<minor>.<patch>`; undefined when it is not that shape. */
export function parseVersion(text: string): Version | undefined {
  const match = VERSION_PATTERN.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Negative, zero or positive as a is older than, the same as or newer than b. */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  if (!x || !y) throw new Error(`not a release version: ${x ? b : a}`);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

/** True when version is at least `from`. */
export function atLeast(version: string, from: string): boolean {
  return compareVersions(version, from) >= 0;
}

/** Releases whose accepted option names we hold (read from Besu's sources at each tag). */
export const KNOWN_RELEASES = [
  '1.3.6',
  '1.4.4',
  '1.5.2',
  '1.5.3',
  '20.10.4',
  '21.1.6',
  '22.1.0',
  '23.4.1',
  '24.1.0',
  '25.5.0',
] as const;

/** Oldest release this project deploys. */
export const OLDEST_SUPPORTED_RELEASE = KNOWN_RELEASES[0];

/** Version thresholds that change what a config may contain (see the project's Besu facts). */
export const BESU_CHANGES = {
  /** `host-allowlist` replaces `host-whitelist`. */
  hostAllowlist: '1.5.2',
  /** `rpc-http-max-active-connections` exists. */
  maxActiveConnections: '21.1.2',
  /** Java 17 required. */
  java17: '23.1.0',
  /** `tx-pool-max-size` needs `tx-pool="legacy"`. */
  layeredTxPool: '23.10.0',
  /** Default storage becomes BONSAI: an existing FOREST database needs `data-storage-format="FOREST"`. */
  bonsaiDefault: '24.3.0',
  /** Java 21 required. */
  java21: '24.6.0',
  /** On-chain permissioning removed, which the LACChain networks need: deployments stay below it. */
  permissioningRemoved: '25.6.0',
} as const;

/**
 * The names of the files Besu reads, the same on both paths: in the node home and its data folder on a machine
 * (remote.ts NODE_HOME_LAYOUT, remote/paths.ts), in the ConfigMap, the key's volume and the RPC credentials' Secret in
 * a pod (kubernetes.ts POD_FILES, kubernetes/manifests.ts).
 */
export const BESU_FILES = {
  config: 'config.toml',
  genesis: 'genesis.json',
  key: 'key',
  /** The RPC credentials file (password authentication). */
  rpcCredentials: 'rpc-credentials.toml',
  /** The public key of the RPC's JWT authentication. */
  rpcJwtPublicKey: 'rpc-jwt-public-key.pem',
} as const;

/** Besu's JVM options on both paths (BESU_OPTS): the heap follows the memory the node is given. */
export const BESU_JVM_OPTIONS = '-XX:MaxRAMPercentage=60.0';

/** Major version of the Java runtime a release needs. */
export function javaMajorFor(version: string): number {
  if (atLeast(version, BESU_CHANGES.java21)) return 21;
  if (atLeast(version, BESU_CHANGES.java17)) return 17;
  return 11;
}

/** True for a release without on-chain node permissioning, which the LACChain networks need. */
export function lacksPermissioning(version: string): boolean {
  return atLeast(version, BESU_CHANGES.permissioningRemoved);
}

/** Why a release cannot be deployed, or undefined when it can (the settings' rule; the policy checks permissioning). */
export function unsupportedReason(version: string): string | undefined {
  if (!parseVersion(version)) return 'is not a release version <major>.<minor>.<patch>';
  if (!atLeast(version, OLDEST_SUPPORTED_RELEASE))
    return `is older than ${OLDEST_SUPPORTED_RELEASE}, the oldest release supported`;
  if (lacksPermissioning(version))
    return `has no on-chain permissioning (removed in ${BESU_CHANGES.permissioningRemoved}), which the LACChain networks need`;
  return undefined;
}

/**
 * Options that arrived in a release between two of KNOWN_RELEASES, whose option lists therefore lack them: accepted
 * from the release named (the project's Besu facts).
 */
const OPTIONS_SINCE: Readonly<Record<string, string>> = { 'tx-pool': BESU_CHANGES.layeredTxPool };

/**
 * The values the network's Helm chart writes into config.toml for options its Ansible roles leave out
 * (LACNetNetworks/besu-networks, helm/values/*.yml and the chart's configmap; it also turns revert reasons and account
 * permissioning on): offered as `besu` settings (core/settings/schema.ts), none written by default.
 */
export const HELM_CHART_OPTIONS = { txPoolRetentionHours: 999, txPoolMaxSize: 1024 } as const;

/** The release whose option list applies to a version: the newest known release not newer than it. */
export function optionListRelease(version: string): string {
  const candidates = KNOWN_RELEASES.filter((known) => atLeast(version, known));
  const release = candidates[candidates.length - 1];
  if (!release) throw new Error(`Besu ${version} is older than every release this project knows`);
  return release;
}

const optionCache = new Map<string, ReadonlySet<string>>();

/** Every option name (= config.toml key) that a release accepts. */
export function acceptedOptions(version: string): ReadonlySet<string> {
  const release = optionListRelease(version);
  let options = optionCache.get(release);
  if (!options) {
    const file = path.join(PROJECT_DIR, 'core', 'catalog', 'besu-options', `${release}.txt`);
    options = new Set(
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean),
    );
    optionCache.set(release, options);
  }
  const since = Object.keys(OPTIONS_SINCE).filter((name) => atLeast(version, OPTIONS_SINCE[name]));
  return since.length === 0 ? options : new Set([...options, ...since]);
}

/** The container image of a release. */
export const BESU_IMAGE_REPOSITORY = 'hyperledger/besu';

/**
 * The image reference of a release: `hyperledger/besu:<version>`, or pinned by the registry's digest
 * (`hyperledger/besu:<version>@sha256:…`: the runtime pulls the digest, the tag stays for readers and the policy).
 */
export function besuImage(version: string, digest?: string): string {
  return `${BESU_IMAGE_REPOSITORY}:${version}${digest ? `@${digest}` : ''}`;
}
/** The image's user and group: the pod runs as them. */
export const BESU_IMAGE_UID = 1000;

/**
 * Where release archives are downloaded from by default (the inventory's `release_url` when not set): each release's
 * published sources (releaseSources). As a template, `{version}` replaced: Besu's GitHub release assets.
 */
export const DEFAULT_RELEASE_URL =
  'https://github.com/hyperledger/besu/releases/download/{version}/besu-{version}.tar.gz';

/** The JFrog artifactory where Besu's changelog links each release's archive up to LAST_JFROG_RELEASE. */
const JFROG_RELEASE_URL = 'https://hyperledger.jfrog.io/artifactory/besu-binaries/besu/{version}/besu-{version}.tar.gz';

/** The last release whose archive Besu's changelog links on JFrog; from 24.3.0 it links GitHub's release assets. */
export const LAST_JFROG_RELEASE = '24.1.2';

/**
 * The archives the changelog links on another JFrog path than JFROG_RELEASE_URL's, as published (the project's
 * release digest facts).
 */
const PUBLISHED_JFROG_URLS: Readonly<Record<string, string>> = {
  '22.7.7': 'https://hyperledger.jfrog.io/hyperledger/besu-binaries/besu/22.7.7/besu-22.7.7.tar.gz',
  '23.1.3': 'https://hyperledger.jfrog.io/hyperledger/besu-binaries/besu/23.1.3/besu-23.1.3.tar.gz',
  '23.4.1': 'https://hyperledger.jfrog.io/hyperledger/besu-binaries/besu/23.4.1/besu-23.4.1.tar.gz',
};

/**
 * The sources a machine tries for a release's archive, in order, when the inventory names no mirror: up to 24.1.2
 * the JFrog URL its changelog published, then GitHub's release asset (whether GitHub serves those older archives is
 * not established: it is tried second); from 24.3.0 GitHub's alone. The pinned digest decides which is accepted.
 */
export function releaseSources(version: string): string[] {
  const github = releaseUrl(DEFAULT_RELEASE_URL, version);
  if (compareVersions(version, LAST_JFROG_RELEASE) > 0) return [github];
  return [PUBLISHED_JFROG_URLS[version] ?? releaseUrl(JFROG_RELEASE_URL, version), github];
}

/**
 * SHA-256 of each release archive `besu-<version>.tar.gz`, as the Besu project published it in its changelog (the
 * project's facts list where each comes from). The release step checks the download against it before unpacking;
 * a release without a published digest needs one in the inventory (`release_sha256`).
 */
export const RELEASE_ARCHIVE_SHA256: Readonly<Record<string, string>> = {
  '22.1.0': '232bd7f274691ca14c26289fdc289d3fcdf69426dd96e2fa1601f4d079645c2f',
  '22.1.3': 'f9f8d37353aa4b5d12e87c08dd86328c1cffc591c6fc9e076c0f85a1d4663dfe',
  '22.7.7': '161c52ba9be8508767e80dbce796b4ad2cc5b649f7ed15387c6359d1e15753f6',
  '23.1.3': '36898932a7535c4d126c1980443b33c9a4971f9354112992a18ee134c1777aa3',
  '23.4.1': '49d3a7a069cae307497093d834f873ce7804a46dd59207d5e8321459532d318e',
  '23.4.4': 'bd476d235b6fe1f236a62bc709f41c87deb68b72c47bb5b58e56b9d9283af2c4',
  '23.7.3': 'c12ca6a9861557e0bf8f27076f8c8afcce6f1564687e5f02bfdc96c2b18846ff',
  '23.10.3': '73c834cf32c7bbe255d7d8cc7ca5d1eb0df8430b9114935c8dcf3a675b2acbc2',
  '24.1.0': '602b04c0729a7b17361d1f0b39f4ce6a2ebe47932165add666560fe594d9ca99',
  '24.1.2': '082db8cf4fb67527aa0dd757e5d254b3b497f5027c23287f9c0a74a6a743bf08',
  '24.7.1': '59ac352a86fd887225737a5fe4dad1742347edd3c3fbed98b079177e4ea8d544',
};

/** The download URL of a release from a URL template holding `{version}`. */
export function releaseUrl(template: string, version: string): string {
  return template.split('{version}').join(version);
}

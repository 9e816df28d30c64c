/**
 * Test fixtures shared by the unit tests: valid settings to mutate, an in-memory file reader, the test genesis.
 */
import type { Fixes } from '../core/operations/causes';
import type { Observations } from '../core/operations/health';
import * as fs from 'fs';
import * as path from 'path';
import { NETWORKS, type PinnedGenesis } from '../core/catalog/networks';
import type { BesuConfigInput } from '../core/besu/configToml';
import { loadStack, type FileReader, type RawStackConfig } from '../core/settings/load';
import type { StackSettings } from '../core/settings/model';
import * as yaml from 'js-yaml';
import { EngineConfig, engineView } from '../core/settings/engineConfig';
import { SECRET_CONFIG_KEYS } from '../core/settings/schema';
import { TEST_PUBLIC_NETWORK } from './testNetworks';

/** The project's own small genesis (not a LACChain genesis), pinned by its own digest. */
export const TEST_GENESIS_FILE = path.join(__dirname, '..', 'tests', 'fixtures', 'genesis', 'test-genesis.json');
export const TEST_GENESIS: PinnedGenesis = {
  url: 'http://127.0.0.1/test-genesis.json',
  sha256: '66b3b52f8257ce90417e79f7a11720628bd0cf49db3a805e8d6f93dad3123ce4',
  bytes: 559,
};
export const testGenesisText = (): string => fs.readFileSync(TEST_GENESIS_FILE, 'utf8');

/** A throwaway SSH private key shape (never used to log in anywhere). */
export const FAKE_SSH_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n';

/** Private key 1 and its published identity (the generator point). */
export const KEY_ONE = `0x${'0'.repeat(63)}1`;
export const KEY_ONE_PUBLIC =
  '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8';
export const KEY_ONE_ADDRESS = '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf';

/** A throwaway SSH host key line (the public half of no machine's key), to pin in test inventories. */
export const FAKE_HOST_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBx6oY0Z3bQx4Yk1aNl2m7ZpQ0wq9yq7Lz3eT3d0aBcD';

/** A validator reached over SSH, as a `lacchain:nodes` entry; inventory fields may be changed or added. */
export function sshValidatorEntry(inventory: Record<string, unknown> = {}) {
  return {
    name: 'validator',
    typenode: 'validator',
    target: 'ssh',
    inventory: {
      host: '190.51.100.7',
      host_key: FAKE_HOST_KEY,
      node_ip: '190.51.100.7',
      node_name: 'org-validator',
      node_email: 'ops@example.org',
      ...inventory,
    },
  };
}

/**
 * A testnet stack of one SSH node (the validator of sshValidatorEntry by default), as the engine hands it over before
 * reading: its SSH key, the test companions' digests and the node key KEY_ONE; `extra` adds or replaces top-level keys.
 */
export function sshValidatorStack(
  entry: Record<string, unknown> = sshValidatorEntry(),
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [entry],
    'lacchain:sshPrivateKey': FAKE_SSH_KEY,
    'lacchain:companions': structuredClone(TEST_COMPANIONS),
    'lacchain:nodeKeys': { validator: KEY_ONE },
    ...extra,
  };
}

/**
 * The companion executables' and the monitoring client image's digests of the test stacks: SSH nodes that run a
 * companion need one (nobody publishes them). Made-up values: no test host downloads these (the end-to-end tests pin
 * their stand-ins' own digests).
 */
export const TEST_COMPANIONS = {
  relaySigner: { sha256: 'a1'.repeat(32) },
  rotationValidator: { sha256: 'b2'.repeat(32) },
  ethstats: { imageDigest: `sha256:${'c3'.repeat(32)}` },
};

/**
 * Registry digests that pin the images of the containers receiving the node key (Besu, the relay signer, the
 * rotation client), as a mainnet stack needs them: made up, for tests only, never in a file operators copy.
 */
export const TEST_KEY_IMAGE_DIGESTS = {
  besu: `sha256:${'d4'.repeat(32)}`,
  relaySigner: `sha256:${'e5'.repeat(32)}`,
  rotationValidator: `sha256:${'f6'.repeat(32)}`,
};

/**
 * Registry digests that pin the images of a cluster node's backups, which touch its data (restic: the pod's backup
 * before a release change, the backup Jobs, the schedule; kubectl: the schedule's steps), as a mainnet stack needs
 * them: the values file's deploy.backupImageDigest and deploy.kubectlImageDigest. Made up, for tests only.
 */
export const TEST_BACKUP_IMAGE_DIGESTS = {
  backupImageDigest: `sha256:${'a7'.repeat(32)}`,
  kubectlImageDigest: `sha256:${'b8'.repeat(32)}`,
};

/**
 * A public IPv4 address for the nodes of mainnet test stacks, which refuse the documentation ranges the testnet
 * fixtures use: outside every reserved range, made up for tests, never contacted (testing/testNetworks.ts keeps them on
 * this machine, testing/netGuard.js refuses what would leave it). `last` is its last number.
 */
export function testPublicIp(last: number): string {
  return `${TEST_PUBLIC_NETWORK.prefix}.${last}`;
}

/** The companion services off. */
export const COMPANIONS_OFF = {
  relaySigner: { enabled: false },
  rotationValidator: { enabled: false },
  ethstats: { enabled: false },
};

/**
 * `lacchain:companions` for a test stack whose `lacchain:rpc` is `rpc`: the relay signer and rotation client off with
 * authentication (they call Besu's HTTP RPC without credentials), the rotation client off when the APIs lack IBFT (it
 * votes through it), else on; the monitoring client (Besu's WebSocket only) always on.
 */
export function companionsForRpc(rpc: unknown): Record<string, unknown> {
  const given = (typeof rpc === 'object' && rpc !== null ? rpc : {}) as {
    authentication?: unknown;
    apis?: string[];
    exposure?: string;
  };
  if (given.authentication) return { ...structuredClone(COMPANIONS_OFF), ethstats: { ...TEST_COMPANIONS.ethstats } };
  const companions: Record<string, unknown> = structuredClone(TEST_COMPANIONS);
  // The rotation client needs IBFT, which a validator reachable from outside does not serve (nor a list without it).
  const reachable = given.exposure !== undefined && given.exposure !== 'internal';
  if (reachable || (given.apis && !given.apis.includes('IBFT'))) {
    companions.rotationValidator = COMPANIONS_OFF.rotationValidator;
  }
  return companions;
}

/** A valid testnet stack config: a writer on Kubernetes and a validator over SSH. */
export function validTestnetConfig(): Record<string, unknown> {
  return {
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [
      { name: 'writer', typenode: 'writer', target: 'kubernetes' },
      sshValidatorEntry({ user: 'ubuntu' }),
    ],
    'lacchain:sshPrivateKey': FAKE_SSH_KEY,
    'lacchain:companions': structuredClone(TEST_COMPANIONS),
  };
}

/** A valid writer values file for open-protestnet. */
export function validWriterValues(): Record<string, unknown> {
  return {
    deploy: {
      network: 'open-protest-net',
      typenode: 'writer',
      publicIP: '190.113.0.10',
      p2p: { host: '190.113.0.10', port: 60606 },
      workerName: 'worker-1',
      nodeName: 'org-writer',
      nodeEmail: 'ops@example.org',
    },
  };
}

/** A file reader over in-memory files (paths relative to /project). */
export function memoryFiles(files: Record<string, string>): FileReader {
  return (absolutePath) => files[path.relative('/project', absolutePath)];
}

/**
 * A raw stack config exactly as the engine gives it to the program: the stack file's mapping (YAML types, `{secure}`
 * values standing for `--secret` ones, given here as `{ secure: <plain text> }`) turned into the engine's strings.
 * The settings that must be secrets are taken as set with `--secret` (secretSettings); `asWritten` keeps them as
 * given, for the tests of plain-text secrets.
 */
export function rawConfig(
  values: Record<string, unknown>,
  file = 'Pulumi.testnet.yaml',
  options: { asWritten?: boolean } = {},
): RawStackConfig {
  return { file, baseDir: '/project', ...engineConfigOf(options.asWritten ? values : secretSettings(values)) };
}

/** The engine's view of a stack file's config mapping; `{ secure: text }` is a secret holding `text`. */
export function engineConfigOf(values: Record<string, unknown>): EngineConfig {
  return engineView(values, (keyPath) => {
    const found = secureAt(values, keyPath);
    if (typeof found !== 'string') throw new Error(`no secret text at ${keyPath}`);
    return found;
  });
}

/** The config with every value of the settings that must be secrets as `pulumi config set --secret` stores it. */
export function secretSettings(values: Record<string, unknown>): Record<string, unknown> {
  const secure = (v: unknown): unknown =>
    typeof v === 'string'
      ? { secure: v }
      : typeof v === 'object' && v !== null && !Array.isArray(v) && !('secure' in v)
        ? Object.fromEntries(Object.entries(v).map(([k, item]) => [k, secure(item)]))
        : v;
  const out = { ...values };
  for (const key of SECRET_CONFIG_KEYS) if (key in out) out[key] = secure(out[key]);
  return out;
}

/** The `secure` text at a path such as `lacchain:nodeKeys.writer` or `lacchain:nodes[0].inventory.x`. */
function secureAt(values: Record<string, unknown>, keyPath: string): unknown {
  let at: unknown = values;
  for (const part of keyPath.match(/[^.[\]]+/g) ?? []) at = (at as Record<string, unknown>)[part];
  return (at as { secure?: unknown }).secure;
}

/** What `check` observes of a healthy node answering with `enode`, the stack's: a test changes what it needs. */
export function healthyObservations(enode: string): Observations {
  return {
    service: { running: true, detail: 'started' },
    peerCount: 3,
    blockFirst: 10,
    blockSecond: 14,
    windowSeconds: 10,
    syncing: false,
    lastImportAgeSeconds: 2,
    reportedEnode: enode,
    expectedEnode: enode,
  };
}

/** Each fix in a word, so a test sees which one a verdict names. */
export const FIXES: Fixes = {
  request: 'send the request',
  restart: 'restart the node',
  nodeKey: 'put the key back',
  p2pHost: 'set the p2p address',
  p2pPort: 'open the p2p port',
  clock: 'synchronise the clock',
  disk: 'give the data room',
};

/** The alerts the issue asks for and the one on a failing push, as the tests expect them (not read from the code). */
export const EXPECTED_ALERTS = [
  'BesuDown',
  'BesuNoPeers',
  'BesuHeadStalled',
  'BesuBehind',
  'BesuDiskLow',
  'BesuRestarting',
  'CompanionDown',
  'MetricsPushFailing',
] as const;

/**
 * A testnet stack as `pulumi up` loads it (its settings and secrets) from its stack file's `config`
 * (validTestnetConfig unless given), beside the valid writer values file (values/writer.yml: validWriterValues).
 */
export function loadTestnetStack(config: Record<string, unknown> = validTestnetConfig()) {
  const files = memoryFiles({ 'values/writer.yml': yaml.dump(validWriterValues()) });
  return loadStack('testnet', rawConfig(config), files);
}

/** A testnet stack's settings, as loadTestnetStack loads them. */
export function loadTestnet(config: Record<string, unknown> = validTestnetConfig()): StackSettings {
  return loadTestnetStack(config).settings;
}

/** What config.toml is written from, for an open-protestnet writer on `releaseVersion`, with `more` over it. */
export function writerConfigInput(releaseVersion: string, more: Partial<BesuConfigInput> = {}): BesuConfigInput {
  return {
    network: NETWORKS['open-protestnet'],
    typenode: 'writer',
    releaseVersion,
    nodeName: 'org-node',
    p2pHost: '190.113.0.10',
    p2pPort: 60606,
    rpcHosts: ['190.113.0.10'],
    paths: { dataPath: '/data', genesisFile: '/config/genesis.json', nodeKeyFile: '/key/key' },
    ...more,
  };
}

/**
 * The network's companion services: processes beside Besu that make a node a complete member of a LACChain network.
 * Facts about each (what it is, where a release comes from, what it listens on); the contracts they use are per
 * network, in networks.ts. Read from the network's reference deployment (LACNetNetworks/besu-networks and the
 * services' own repositories); nothing of theirs is shipped here.
 */
import type { NodeType } from './nodeTypes';
import { PORTS } from './ports';

/** The writer's relay signer of the gas model (LACNetNetworks/gas-management, "gas-relay-signer"). */
export const RELAY_SIGNER = {
  /** The name of its systemd service beside the node's own (`<node service>-relay-signer`) and of its container. */
  name: 'relay-signer',
  /** Who runs it. */
  nodeTypes: ['writer'] as readonly NodeType[],
  /** It listens here, on the loopback only: the writer's proxy is its one way in. */
  port: PORTS.relaySigner,
  /** The release the reference deployment installs on a machine (a tag of gas-management). */
  defaultVersion: '1.0.1',
  /**
   * Where a release's executable is downloaded from; `{ref}` is replaced by the commit releaseCommits pins for the
   * release (a tag can be moved, a commit cannot), or else by the release's tag `v{version}`. The project publishes no
   * digest of it, but commits the executable at each tag: see releaseBlobs.
   */
  defaultReleaseUrl: 'https://raw.githubusercontent.com/LACNetNetworks/gas-management/{ref}/gas-relay-signer',
  /** The commit each catalog release's tag named when the facts were read (`git rev-list -n1 v1.0.1`). */
  releaseCommits: { '1.0.1': '8dd1b69b9cce0af1a70025bd9351085eff6a16c1' } as Readonly<Record<string, string>>,
  /**
   * The git blob id of the executable each catalog release's tag holds (what `git hash-object` prints for it), by
   * release: the companions step checks a download from defaultReleaseUrl against it, so an operator pins no digest
   * for these releases (another release or URL takes `lacchain:companions.relaySigner.sha256`).
   */
  releaseBlobs: { '1.0.1': 'd06aed7593325647c80aec3353a828327e7509d5' } as Readonly<Record<string, string>>,
  /** The container image the reference runs on a cluster, and where its executable is inside it (its entrypoint
   * prints the key to the log, so the pod runs the executable itself). */
  defaultImage: 'lacnetnetworks/relay-signer-lacchain:1.0.2',
  imageExecutable: '/opt/lacchain/gas-relay-signer/gas-relay-signer',
  /** Its executable's file name. */
  executable: 'gas-relay-signer',
  /**
   * It reads `config.toml` from its working directory, and its key only from the environment variable WRITER_KEY
   * (`0x` + 64 hex, as Besu writes data/key); the config's nodeKeyPath is not read by it.
   */
  configFile: 'config.toml',
  keyVariable: 'WRITER_KEY',
  /** Its own log, relative to its working directory. */
  logDir: 'log',
  /** The relay signer checks senders against an account contract only when asked; the networks do not ask it. */
  permissionsEnabled: false,
  /** How long systemd waits before starting it again after a failure (it exits until Besu's RPC answers). */
  restartSeconds: 10,
} as const;

/** The validator's rotation client (LACNetNetworks/rotation-validator, its `client`). */
export const ROTATION_VALIDATOR = {
  /** The name of its systemd service beside the node's own (`<node service>-rotation-validator`) and of its container. */
  name: 'rotation-validator',
  /** Who runs it. */
  nodeTypes: ['validator'] as readonly NodeType[],
  /** The version of the reference's container image; on a machine the release below is the one it installs. */
  defaultVersion: '1.0.0',
  /**
   * The repository has no tags: the reference installs whatever its default branch holds, so the default download
   * pins the commit the network's facts were read at (`{version}` is not used in it).
   */
  defaultReleaseUrl:
    'https://raw.githubusercontent.com/LACNetNetworks/rotation-validator/d0c133f1df9d3e629352b332ea05c73c338adead/client/client',
  /**
   * The git blob id of `client/client` at that commit (`git ls-tree d0c133f1 client/client`), for the default release:
   * the companions step checks the download against it, so an operator pins no digest for it (as RELAY_SIGNER's).
   */
  releaseBlobs: { '1.0.0': '5bd0b6a60e25ad7aa66ccda8acfd0cf4ddd876f0' } as Readonly<Record<string, string>>,
  /** The URL names its commit itself. */
  releaseCommits: {} as Readonly<Record<string, string>>,
  /** The container image the reference runs on a cluster, and where its executable is inside it. */
  defaultImage: 'lacnetnetworks/rotation-lacchain:1.0.0',
  imageExecutable: '/opt/lacchain/rotation-validator/client',
  /** Its executable's file name. */
  executable: 'client',
  /** It reads `config.toml` from its working directory; the node key from the file its nodeKeyPath names. */
  configFile: 'config.toml',
  /** Its own log, relative to its working directory. */
  logDir: 'log',
  /** Seconds it waits for an RPC answer (the reference's value). */
  rpcTimeoutSeconds: 5,
  /** How long systemd waits before starting it again after a failure (it exits when Besu's WebSocket closes). */
  restartSeconds: 10,
} as const;

/**
 * The network's monitoring client on every node: the reference `ethstats-cli` (Alethio/ethstats-cli 2.5.3), which
 * registers the node with the network's ethstats server under its name and e-mail and then reports its blocks and
 * peers. It reads Besu's WebSocket RPC and nothing of the node's identity. Nobody publishes a release of it to run on
 * a machine (Node 8 to 10 with native add-ons), so both paths run the reference's container image: on a cluster in
 * the node's pod, on a machine with podman.
 */
export const ETHSTATS = {
  /** The name of its systemd service beside the node's own (`<node service>-ethstats`) and of its container. */
  name: 'ethstats',
  /** Who runs it: every node. */
  nodeTypes: ['writer', 'validator', 'bootnode'] as readonly NodeType[],
  /** The image the reference runs (its Ansible roles `docker run` it, its chart deploys it), tag included. */
  defaultImage: 'docker.io/alethio/ethstats-cli:latest',
  /**
   * The client inside the image, and how it is run. The image's entrypoint adds -d (debug), which logs every message
   * it sends, the login with the registration secret among them; -v (verbose) logs what it does without the payloads.
   */
  imageExecutable: '/ethstats-cli/bin/ethstats-cli.js',
  logLevelFlag: '-v',
  /**
   * It keeps its registration (node name and secret, configstore's `configstore/ethstats-cli.json`) under the folder
   * this environment variable names; the folder is kept across restarts and redeploys (losing the secret means asking
   * the network's operator to reset the name).
   */
  stateVariable: 'XDG_CONFIG_HOME',
  /** Where that folder is mounted in the container. */
  stateMountPath: '/var/lib/ethstats-cli',
  /**
   * On a machine it runs as a system user of its own (made by the companions step: no login shell, no home), not as
   * Besu's: the nftables fences then keep it off the relay signer's port and let it reach Besu's WebSocket only.
   */
  systemUser: 'lacchain-ethstats',
  /** In a pod it runs as a uid of its own too, distinct from Besu's (1000) and the proxy's (65534). */
  podUid: 10001,
  /** The node names the network's server registers (Alethio ethstats-network-server's rule). */
  nodeNamePattern: /^[a-zA-Z0-9_-]{3,64}$/,
  /** How long systemd waits before starting it again after a failure. */
  restartSeconds: 10,
} as const;

/** Every companion a node may run, in the order they are declared. */
export const COMPANIONS = [RELAY_SIGNER, ROTATION_VALIDATOR, ETHSTATS] as const;
/** The companions installed on a machine from a released executable (the others run from a container image). */
export const RELEASED_COMPANIONS = [RELAY_SIGNER, ROTATION_VALIDATOR] as const;
export type CompanionName = (typeof COMPANIONS)[number]['name'];
export type ReleasedCompanionName = (typeof RELEASED_COMPANIONS)[number]['name'];

/**
 * The download URL of a companion's release from a URL template: `{ref}` becomes the commit the catalog pins for the
 * release (its tag `v{version}` when it pins none), then `{version}` the release.
 */
export function companionReleaseUrl(
  companion: (typeof RELEASED_COMPANIONS)[number],
  template: string,
  version: string,
): string {
  const ref = Object.hasOwn(companion.releaseCommits, version) ? companion.releaseCommits[version] : 'v{version}';
  return template.split('{ref}').join(ref).split('{version}').join(version);
}

/** The shape of a contract address, as written in the network facts (checksummed or lower case). */
export const CONTRACT_ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

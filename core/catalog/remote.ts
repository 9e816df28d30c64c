/**
 * Remote-machine facts (the supported systems are checked by scripts/remote/preflight.sh): file locations relative to the node home, packages per package manager.
 */
import { BESU_FILES } from './besu';
import { SYSTEM_TOP_FOLDERS } from './systemFolders';

/**
 * The folder of the markers and locks of a machine's steps and operations (the backup's lock, the marker of a node a
 * backup stopped): root's only (mode 0700), under /run (emptied at a boot). Never /run/lock, where any user may write.
 */
export const MACHINE_RUN_DIR = '/run/lacchain';

/** Files and folders under the node home. */
export const NODE_HOME_LAYOUT = {
  config: BESU_FILES.config,
  dataDir: 'data',
  key: `data/${BESU_FILES.key}`,
  nodeAddress: 'data/nodeAddress',
  /** The node's enode as the program computed it, for the day-2 checks. */
  enode: 'data/enode',
  genesis: `data/${BESU_FILES.genesis}`,
  /**
   * With machine custody, the public key the node-key step accepted, recorded by root in the node home (root's): the
   * key's pin from then on, as a pinned `publicKey` is, which the service user cannot change.
   */
  machineKeyRecord: 'machine-public-key',
  /**
   * The health gate's record of a rollout (scripts/remote/gate.sh), root's: waiting, passed or failed, since when and
   * what it saw last, for `npm run node -- status`.
   */
  rolloutRecord: 'rollout-gate',
  logsDir: 'logs',
  binDir: 'bin',
  /** The launcher systemd runs: refuses to start without the key, then runs Besu into the info log. */
  launcher: 'bin/start-node.sh',
  tlsDir: 'tls',
  /** Besu releases, one folder each, with `current` and `previous` links. */
  releasesDir: 'releases',
  /**
   * The companion services, one folder each: a released one's config.toml, log/, releases/<version>/ and a `current`
   * link; a container one's state/ (the monitoring client's registration, kept across redeploys).
   */
  companionsDir: 'companions',
  /** The launcher of a companion service (reads the node key into its environment where it needs it). */
  companionLauncher: 'bin/start-companion.sh',
  /** The launcher of a companion service that runs from a container image (podman, as the service user). */
  containerCompanionLauncher: 'bin/start-container-companion.sh',
  /** A released companion's releases, one folder each beside a `current` link, inside its own folder. */
  companionReleasesDir: 'releases',
  /** A container companion's state folder, inside its own folder. */
  companionStateDir: 'state',
  /** A listening companion's nftables rules (its port fenced to the loopback), inside its own folder. */
  companionFence: 'fence.nft',
  /** The nftables rules that let only the companions' users reach Besu's WebSocket on the loopback. */
  webSocketFence: 'companions/websocket-fence.nft',
} as const;

/** The info log the operator tails to see block sync: logs/<service>_info.log. */
export function infoLogPath(nodeHome: string, serviceName: string): string {
  return `${nodeHome}/${NODE_HOME_LAYOUT.logsDir}/${serviceName}_info.log`;
}

/**
 * The container runtime of the companions that run from an image (the monitoring client): podman, daemonless, so
 * systemd supervises the container's process itself. The package of that name on Debian, Ubuntu and EL, and where it
 * puts the executable.
 */
export const CONTAINER_RUNTIME = { package: 'podman', path: '/usr/bin/podman' } as const;

/**
 * The packet filter that fences a listening companion (the relay signer, which listens on every address) to the
 * loopback where systemd's own IP firewall cannot (it needs cgroup v2): nftables, the package of that name and its
 * executable. Its table for a companion is `lacchain_<service>_<companion>` (hyphens as underscores).
 */
export const PACKET_FILTER = { package: 'nftables', path: '/usr/sbin/nft' } as const;

/**
 * The user nginx's workers run as on Debian and Ubuntu (the distribution's nginx.conf): the writer's proxy, which a
 * writer runs on an apt system only. The one user besides root that the relay signer's fence lets reach its port.
 */
export const PROXY_WORKER_USER = 'www-data';

/** Exit code of the launcher when the key is missing (EX_CONFIG): systemd does not restart on it. */
export const MISSING_KEY_EXIT_CODE = 78;

/**
 * The launchers (scripts/start-node.sh, scripts/start-companion.sh) are installed byte for byte: they read that exit
 * code from this environment variable, which the systemd units (and the Besu container on Kubernetes) set.
 */
export const MISSING_KEY_EXIT_VARIABLE = 'MISSING_KEY_EXIT_CODE';

/** The environment entry that gives a launcher the missing key's exit code. */
export const MISSING_KEY_ENVIRONMENT = `${MISSING_KEY_EXIT_VARIABLE}=${MISSING_KEY_EXIT_CODE}`;

/** Log rotation of the info log: size and how many to keep (the reference keeps 30 days of 10 MB files). */
export const LOG_ROTATION = { size: '10M', keep: 30 } as const;

/**
 * How long the start step waits, by default, for the node to answer its enode after a (re)start: opening a large
 * database takes minutes (inventory start_timeout_seconds changes it, within the bounds below).
 */
export const START_TIMEOUT_SECONDS = 900;
export const MIN_START_TIMEOUT_SECONDS = 30;
export const MAX_START_TIMEOUT_SECONDS = 86_400;

/**
 * TLS of the proxy: TLS 1.2 and 1.3 with forward-secret AEAD ciphers only (Mozilla's "intermediate" list; TLS 1.3's
 * own suites are all modern).
 */
export const TLS_POLICY = {
  protocols: 'TLSv1.2 TLSv1.3',
  ciphers: [
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
} as const;

/** The self-signed certificate of the TLS proxy: RSA-2048, ten years. */
export const CERTIFICATE = { bits: 2048, days: 3650 } as const;

/**
 * The lines the proxy step prints at every run about the certificate in use, which the program reads from the step's
 * output (core/remote/tlsIdentity.ts): its SHA-256 fingerprint (colon-separated hex, as `openssl x509 -fingerprint
 * -sha256` prints it) and its public key's pin (`sha256//<base64>`, as `curl --pinnedpubkey` takes it).
 */
export const TLS_IDENTITY_LINES = {
  certificateSha256: 'proxy: tls certificate sha256',
  publicKeyPin: 'proxy: tls public key pin',
} as const;

/**
 * Folders a node home may not be, nor be inside: the system's own, home folders, and world-writable ones (a root
 * step there could follow another user's symlink).
 */
export const SYSTEM_FOLDERS = [
  ...SYSTEM_TOP_FOLDERS,
  '/home',
  '/media',
  '/mnt',
  '/root',
  '/var/lib',
  '/var/log',
  '/var/run',
  '/var/tmp',
  '/var/spool',
  '/var/cache',
  '/var/mail',
] as const;

/** Top-level folders a node home may be inside but not be itself. */
export const SHARED_TOP_FOLDERS = ['/', '/opt', '/srv', '/var', '/data'] as const;

/**
 * The longest systemd service name a node may have: its companions' units add `-<companion>` to it (systemd allows 255
 * characters), and the log file and the nginx and logrotate files are named after it.
 */
export const MAX_NODE_SERVICE_LENGTH = 32;

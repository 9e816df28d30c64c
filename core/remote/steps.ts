/**
 * The provisioning of a remote node as an ordered list of steps: each one a script under scripts/remote/ and its
 * parameters. The RemoteNode component runs them in this order with remote.Command; the offline plan writes them out;
 * the end-to-end test runs them over real SSH on a real host.
 */
import { supportedSystemsParameter, supportedSystemsText } from '../catalog/systems';
import { DEFAULT_RELEASE_URL, javaMajorFor, releaseSources, releaseUrl } from '../catalog/besu';
import { pinnedJavaHome, pinnedRuntimeFor } from '../catalog/java';
import { DEFAULT_SERVICE_USER } from '../catalog/defaults';
import { NODE_TYPE_FACTS } from '../catalog/nodeTypes';
import { LOOPBACK, PORTS } from '../catalog/ports';
import { configDigest, NodeDescription } from '../node/description';
import { reachablePorts } from '../rpc/access';
import { CERTIFICATE, CONTAINER_RUNTIME, PACKET_FILTER, TLS_IDENTITY_LINES } from '../catalog/remote';
import type { SshNodeSettings } from '../settings/model';
import { nodePaths } from './paths';
import { COMPANIONS } from '../catalog/companions';
import { METRICS_RELAY_SCRIPT, readScript, START_COMPANION_SCRIPT, START_CONTAINER_COMPANION_SCRIPT } from '../scripts';
import { metricsRelayPaths, metricsRelayUnit, metricsTokenCheckFile } from './metricsRelay';
import { METRICS } from '../catalog/metrics';
import {
  companionFence,
  companionPaths,
  companionsLogrotate,
  companionUnit,
  containerStateDir,
  webSocketFence,
} from './companionService';
import { logrotateConf, systemdUnit } from './serviceFiles';
import { backupPaths, backupsStepParameters } from './backups';
import { BACKUP_REASONS, BACKUP_TOOL, BEFORE_RESTORE_SUFFIX } from '../catalog/backups';
import { BACKUP_PASSWORD_DERIVATION_LABEL, NODE_PUBLIC_KEY_LINE } from '../catalog/keyCustody';

/**
 * The pinned Java runtime archives the packages step may unpack, one line each, "<arch> <url> <sha256>": the
 * operator's own (inventory java_runtime_url, for any architecture: "*"), else the catalog's for the release's Java.
 */
export function javaRuntimeArchives(node: SshNodeSettings): string {
  if (node.javaRuntime) return `* ${node.javaRuntime.url} ${node.javaRuntime.sha256}`;
  const runtime = pinnedRuntimeFor(node.releaseVersion);
  if (!runtime) return '';
  return Object.entries(runtime.archives)
    .map(([arch, archive]) => `${arch} ${archive.url} ${archive.sha256}`)
    .join('\n');
}

/** The steps, in the order they run. */
export const REMOTE_STEP_NAMES = [
  'preflight',
  'packages',
  'release',
  'node-files',
  'node-key',
  'backups',
  'proxy',
  'firewall',
  'start',
  'companions',
] as const;
export type RemoteStepName = (typeof REMOTE_STEP_NAMES)[number];

export {
  BACKUP_PASSWORD_PARAMETER,
  BACKUP_S3_PARAMETERS,
  METRICS_TOKEN_PARAMETER,
  NODE_KEY_PARAMETER,
  RPC_CREDENTIALS_PARAMETER,
} from './secretParameters';

/** One step: its script and parameters. Values the program learns late (identity, genesis) are of type V. */
export interface RemoteStep<V = string> {
  name: RemoteStepName;
  /** The script file under scripts/remote/. */
  scriptFile: string;
  /** Its non-secret parameters, in the order they are exported. */
  env: Record<string, string | V>;
  /** Whether the step also receives the node key (and so runs with command logging off). */
  takesNodeKey: boolean;
}

/** The name of the parameter every step gets: its own name, which starts its messages (scripts/remote/lib.sh). */
const STEP_NAME_PARAMETER = 'STEP_NAME';

/** One step: its script under scripts/remote/ (named after it) and its parameters, its own name first. */
export function remoteStep<V>(
  name: RemoteStepName,
  env: Record<string, string | V>,
  takesNodeKey = false,
): RemoteStep<V> {
  return { name, scriptFile: `remote/${name}.sh`, env: { [STEP_NAME_PARAMETER]: name, ...env }, takesNodeKey };
}

/** Values of a node that the program knows only once the identity and genesis are resolved. */
export interface RemoteNodeValues<V> {
  /** The verified genesis text and its SHA-256. */
  genesis: V;
  genesisSha256: V;
  /** The enode the node must answer with, and its address. */
  enode: V;
  address: V;
}

/** The certificate's subject alternative names: the node IP, its DNS name, localhost and 127.0.0.1. */
export function certificateNames(node: SshNodeSettings): string {
  return [`IP:${node.p2pHost}`, ...(node.dnsName ? [`DNS:${node.dnsName}`] : []), 'DNS:localhost', 'IP:127.0.0.1'].join(
    ',',
  );
}

/** The files a machine's node needs, from its description. */
export function remoteNodeFiles(description: NodeDescription<SshNodeSettings>) {
  const { node, files } = description;
  const serviceUser = DEFAULT_SERVICE_USER;
  const paths = nodePaths(node);
  const tls = description.proxyServers[0]?.tls;
  if (!tls || files.proxyConfig === undefined) throw new Error(`node ${node.name}: a machine's node has a TLS proxy`);
  return {
    serviceUser,
    tls,
    /** The RPC credentials file (password authentication). */
    rpcCredentialsFile: files.paths.rpcCredentialsFile,
    /** The JWT public key file and its text (jwt authentication). */
    rpcJwtPublicKey:
      files.jwtPublicKey !== undefined ? { file: paths.rpcJwtPublicKey, text: files.jwtPublicKey } : undefined,
    configToml: files.configToml,
    launcher: files.launcher,
    systemdUnit: systemdUnit(node, serviceUser),
    logrotate: logrotateConf(node, serviceUser),
    proxySite: files.proxyConfig,
  };
}

/** The provisioning steps of a node, in order. */
export function remoteSteps<V>(
  description: NodeDescription<SshNodeSettings>,
  values: RemoteNodeValues<V>,
): RemoteStep<V>[] {
  const { node, reachable } = description;
  const paths = nodePaths(node);
  const files = remoteNodeFiles(description);
  const network = node.network;
  const writer = NODE_TYPE_FACTS[node.typenode].reverseProxy;
  const mib = (gib: number) => String(gib * 1024);
  const override = description.rpc.unsafeOverride;
  const javaMajor = javaMajorFor(node.releaseVersion);
  const javaArchives = javaRuntimeArchives(node);
  const digest = configDigest(description, files.systemdUnit, network.genesis.sha256);
  const step = (name: RemoteStepName, env: Record<string, string | V>, takesNodeKey = false) =>
    remoteStep(name, env, takesNodeKey);
  const machineCustody = node.keyCustody === 'machine';
  return [
    step('preflight', {
      NETWORK: network.name,
      NODE_HOME: paths.home,
      MIN_CPU: String(network.minimumHardware.cpu),
      MIN_MEMORY_MIB: mib(network.minimumHardware.memoryGiB),
      MIN_DISK_GIB: String(network.minimumHardware.diskGiB),
      RECOMMENDED_CPU: String(network.recommendedHardware.cpu),
      RECOMMENDED_MEMORY_MIB: mib(network.recommendedHardware.memoryGiB),
      RECOMMENDED_DISK_GIB: String(network.recommendedHardware.diskGiB),
      ENFORCE_MINIMUM: String(network.enforceMinimumHardware && !node.allowBelowMinimumHardware),
      BESU_VERSION: node.releaseVersion,
      JAVA_MAJOR: String(javaMajor),
      JAVA_RUNTIME_ARCHIVES: javaArchives,
      SUPPORTED_SYSTEMS: supportedSystemsParameter(),
      SUPPORTED_SYSTEMS_TEXT: supportedSystemsText(),
    }),
    step('packages', {
      JAVA_MAJOR: String(javaMajor),
      JAVA_RUNTIME_ARCHIVES: javaArchives,
      JAVA_HOME_LINK: pinnedJavaHome(javaMajor),
      // A proxy routing JSON-RPC by method (a writer's: the gas model) runs on nginx's Lua module and cjson.
      GAS_MODEL: String(description.proxyServers.some((server) => server.gasModel !== undefined)),
      // A companion that runs from a container image (the monitoring client) runs on podman.
      CONTAINER_RUNTIME: description.companions.some((c) => c.kind === 'container') ? CONTAINER_RUNTIME.package : '',
      // Besu's WebSocket is fenced to the companions, and a companion that listens (the relay signer) to the loopback,
      // with nftables.
      PACKET_FILTER: description.companions.length > 0 ? PACKET_FILTER.package : '',
      // The node's backups (the backups step, the start step before a release change, the timer, npm run node).
      BACKUP_TOOL: BACKUP_TOOL.package,
    }),
    step('release', {
      BESU_VERSION: node.releaseVersion,
      ...releaseSourceParameters(node),
      RELEASE_SHA256: node.releaseSha256,
      RELEASES_DIR: paths.releasesDir,
    }),
    step('node-files', {
      NODE_HOME: paths.home,
      DATA_DIR: paths.dataDir,
      LOGS_DIR: paths.logsDir,
      BIN_DIR: paths.binDir,
      CONFIG_FILE: paths.config,
      GENESIS_FILE: paths.genesis,
      NODE_ADDRESS_FILE: paths.nodeAddress,
      ENODE_FILE: paths.enode,
      LAUNCHER_FILE: paths.launcher,
      INFO_LOG: paths.infoLog,
      SERVICE_NAME: node.serviceName,
      BEFORE_RESTORE_SUFFIX,
      SERVICE_USER: files.serviceUser,
      CONFIG_TOML: files.configToml,
      GENESIS_JSON: values.genesis,
      GENESIS_SHA256: values.genesisSha256,
      // The identity the stack knows, for the review and the policy (a machine holding its key reports its own); the
      // node-key step writes its files, once the key on the machine is the one it names.
      ...(machineCustody ? {} : { NODE_ADDRESS: values.address, NODE_ENODE: values.enode }),
      LAUNCHER: files.launcher,
      SYSTEMD_UNIT: files.systemdUnit,
      LOGROTATE_CONF: files.logrotate,
      // The metrics relay: Besu's metrics to the network's gateway, the machine's beside them.
      METRICS_RELAY: readScript(METRICS_RELAY_SCRIPT),
      METRICS_RELAY_FILE: metricsRelayPaths(node).script,
      METRICS_RELAY_SERVICE: metricsRelayPaths(node).service,
      METRICS_RELAY_UNIT: metricsRelayUnit(node, files.serviceUser),
      ...(files.rpcJwtPublicKey
        ? { RPC_JWT_PUBLIC_KEY_FILE: files.rpcJwtPublicKey.file, RPC_JWT_PUBLIC_KEY: files.rpcJwtPublicKey.text }
        : {}),
      // The operator's explicit override of the RPC safety rules, for the plan and the policy to flag.
      ...(override.length > 0 ? { UNSAFE_RPC_OVERRIDE: override.join(',') } : {}),
    }),
    step(
      'node-key',
      {
        NODE_HOME: paths.home,
        KEY_FILE: paths.key,
        SERVICE_USER: files.serviceUser,
        ...(files.rpcCredentialsFile
          ? { RPC_CREDENTIALS_FILE: files.rpcCredentialsFile, SERVICE_NAME: node.serviceName }
          : {}),
        BACKUP_ENV_FILE: backupPaths(node).environment,
        BACKUP_REPOSITORY: node.backups.repository,
        BEFORE_RESTORE_SUFFIX,
        // The metrics endpoint's token check (its token is a secret parameter), when there is an endpoint.
        ...(node.metricsEndpoint ? { METRICS_TOKEN_CHECK_FILE: metricsTokenCheckFile(node) } : {}),
        KEY_CUSTODY: node.keyCustody,
        NODE_ADDRESS_FILE: paths.nodeAddress,
        ENODE_FILE: paths.enode,
        ...(machineCustody
          ? machineKeyParameters(node, javaMajor)
          : { NODE_ADDRESS: values.address, NODE_ENODE: values.enode }),
      },
      true,
    ),
    step('backups', backupsStepParameters(node)),
    step('proxy', {
      SITE_NAME: `lacchain-${node.serviceName}`,
      PROXY_SITE: files.proxySite,
      TLS_CERTIFICATE: files.tls.certificateFile,
      TLS_KEY: files.tls.keyFile,
      CERT_SANS: certificateNames(node),
      CERT_CN: node.dnsName ?? node.p2pHost,
      CERT_BITS: String(CERTIFICATE.bits),
      CERT_DAYS: String(CERTIFICATE.days),
      CERT_FINGERPRINT_LABEL: TLS_IDENTITY_LINES.certificateSha256,
      PUBLIC_KEY_PIN_LABEL: TLS_IDENTITY_LINES.publicKeyPin,
      DISABLE_DEFAULT_SITE: String(writer),
      // Without an endpoint, the token check an earlier one left (it holds the former token) goes.
      ...(node.metricsEndpoint ? {} : { STALE_TOKEN_CHECK_FILE: metricsTokenCheckFile(node) }),
    }),
    step('firewall', {
      // What the description says is reachable from outside, and nothing else.
      TCP_PORTS: [
        node.p2pPort,
        ...(reachable.rpc ? [PORTS.rpcHttp] : []),
        ...(reachable.proxyHttps ? [PORTS.reverseProxyHttps] : []),
        ...(reachable.proxyHttp ? [PORTS.reverseProxyHttp] : []),
        ...(node.metricsEndpoint ? [METRICS.endpointPort] : []),
      ].join(' '),
      UDP_PORTS: String(node.p2pPort),
    }),
    step('start', {
      SERVICE_NAME: node.serviceName,
      BESU_VERSION: node.releaseVersion,
      RELEASES_DIR: paths.releasesDir,
      DATA_DIR: paths.dataDir,
      EXPECTED_ENODE: values.enode,
      RPC_PORT: String(PORTS.rpcHttp),
      START_TIMEOUT: String(node.startTimeoutSeconds),
      CONFIG_DIGEST: digest,
      BACKUP_BEFORE_CHANGE: String(node.backups.beforeReleaseChange),
      BACKUP_COMMAND_FILE: backupPaths(node).command,
      BACKUP_REASON: BACKUP_REASONS.beforeReleaseChange,
    }),
    step('companions', companionParameters(description, files.serviceUser)),
  ];
}

/**
 * The node-key step's parameters with machine custody: where the identity files go, the release whose `besu
 * public-key` makes and reads the key there, the Java it runs on, and the lines it prints (the public key; the backup
 * password is derived there from the key when the stack gives none). With a pinned `publicKey`, the key it must hold.
 */
/**
 * Where the release step fetches the archive: the inventory's `release_url` alone, or without one the release's
 * published sources in order (core/catalog/besu.ts releaseSources), the pinned digest deciding which is accepted.
 */
function releaseSourceParameters(node: SshNodeSettings): Record<string, string> {
  const [first, ...fallbacks] =
    node.releaseUrl === DEFAULT_RELEASE_URL
      ? releaseSources(node.releaseVersion)
      : [releaseUrl(node.releaseUrl, node.releaseVersion)];
  return { RELEASE_URL: first, ...(fallbacks.length > 0 ? { RELEASE_FALLBACK_URLS: fallbacks.join(' ') } : {}) };
}

function machineKeyParameters(node: SshNodeSettings, javaMajor: number): Record<string, string> {
  const paths = nodePaths(node);
  return {
    DATA_DIR: paths.dataDir,
    KEY_RECORD_FILE: paths.machineKeyRecord,
    P2P_ENDPOINT: `${node.p2pHost}:${node.p2pPort}`,
    BESU_BINARY: `${paths.releasesDir}/besu-${node.releaseVersion}/bin/besu`,
    JAVA_HOME_LINK: pinnedJavaHome(javaMajor),
    PUBLIC_KEY_LABEL: NODE_PUBLIC_KEY_LINE,
    BACKUP_PASSWORD_LABEL: BACKUP_PASSWORD_DERIVATION_LABEL,
    ...(node.publicKey !== undefined ? { EXPECTED_PUBLIC_KEY: node.publicKey } : {}),
  };
}

/**
 * The parameters of the companions step: which companions run, and for each (its name in upper case with _ for -
 * as the prefix) its systemd unit and, for a released one, the release, its digest and its config file; for one run
 * from a container image, the image pinned by its digest.
 */
function companionParameters(description: NodeDescription<SshNodeSettings>, serviceUser: string) {
  const { node } = description;
  const paths = nodePaths(node);
  const env: Record<string, string> = {
    NODE_HOME: node.nodeHome,
    SERVICE_NAME: node.serviceName,
    SERVICE_USER: serviceUser,
    COMPANIONS: description.companions.map((c) => c.settings.name).join(' '),
    KNOWN_COMPANIONS: COMPANIONS.map((c) => c.name).join(' '),
    COMPANIONS_DIR: paths.companionsDir,
    LAUNCHER: readScript(START_COMPANION_SCRIPT),
    LAUNCHER_FILE: paths.companionLauncher,
    CONTAINER_LAUNCHER: readScript(START_CONTAINER_COMPANION_SCRIPT),
    CONTAINER_LAUNCHER_FILE: paths.containerCompanionLauncher,
    WEBSOCKET_FENCE_FILE: paths.webSocketFence,
    LOGROTATE_CONF: companionsLogrotate(node, serviceUser),
    NODE_IP: node.p2pHost,
  };
  const fence = webSocketFence(node, description.companions, serviceUser);
  if (fence) env.WEBSOCKET_FENCE = fence;
  for (const companion of description.companions) {
    const prefix = companionParameterPrefix(companion.settings.name);
    const unit = { [`${prefix}_UNIT`]: companionUnit(node, companion, serviceUser) };
    if (companion.kind === 'container') {
      const byTag = !companion.settings.imageDigest;
      if (byTag && !node.network.allowsUnpinnedKeyImages)
        throw new Error(
          `node ${node.name}: the ${companion.settings.name} has no image digest (the settings check it)`,
        );
      Object.assign(env, {
        [`${prefix}_IMAGE`]: companion.image,
        // A test network's machine may pull the tag (flagged by the policy, node-key-images-by-tag).
        ...(byTag ? { [`${prefix}_IMAGE_BY_TAG`]: 'yes' } : {}),
        [`${prefix}_USER`]: companion.systemUser,
        [`${prefix}_STATE_DIR`]: containerStateDir(node, companion),
        ...unit,
      });
      continue;
    }
    const { sha256, gitBlob } = companion.settings;
    if (!sha256 && !gitBlob)
      throw new Error(`node ${node.name}: the ${companion.settings.name} has no digest (the settings check it)`);
    const portFence = companionFence(node, companion);
    const files = companionPaths(node, companion);
    Object.assign(env, {
      [`${prefix}_VERSION`]: companion.settings.version,
      [`${prefix}_URL`]: companion.settings.releaseUrl,
      ...(sha256 ? { [`${prefix}_SHA256`]: sha256 } : {}),
      ...(gitBlob ? { [`${prefix}_GIT_BLOB`]: gitBlob } : {}),
      [`${prefix}_EXECUTABLE`]: companion.executable,
      [`${prefix}_CONFIG`]: companion.configToml,
      [`${prefix}_RELEASES_DIR`]: files.releasesDir,
      [`${prefix}_LOG_DIR`]: files.logDir,
      [`${prefix}_CONFIG_FILE`]: files.configFile,
      ...unit,
      ...(portFence
        ? {
            [`${prefix}_PORT`]: String(companion.port),
            [`${prefix}_FENCE`]: portFence,
            [`${prefix}_FENCE_FILE`]: files.fence,
          }
        : {}),
    });
  }
  return env;
}

/** The companions step's parameters of one companion start with its name in upper case, `_` for `-`: RELAY_SIGNER. */
export function companionParameterPrefix(name: string): string {
  return name.toUpperCase().replace(/-/g, '_');
}

/** The HTTPS URL of a remote node's RPC, through the TLS proxy (on the machine itself with exposure internal). */
export function remoteRpcUrl(node: SshNodeSettings): string {
  const host = reachablePorts(node, node.rpc).proxyHttps ? node.p2pHost : LOOPBACK;
  return `https://${host}:${PORTS.reverseProxyHttps}`;
}

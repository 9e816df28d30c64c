/**
 * The companion services a node runs beside Besu, described once for both paths: what each one reads (its
 * config.toml, the node key, its arguments), where it listens, how it is started again. The Kubernetes renderer turns
 * each into a container of the node's pod, the SSH renderer into a systemd service next to Besu's (the monitoring
 * client's runs its container image with podman).
 *
 * They talk to Besu on the loopback (the pod's or the machine's): JSON-RPC over HTTP on 4545 and the WebSocket on
 * 4546, which Besu then listens on at 127.0.0.1 only.
 */
import { stringify } from 'smol-toml';
import { ETHSTATS, RELAY_SIGNER, RELEASED_COMPANIONS, ROTATION_VALIDATOR } from '../catalog/companions';
import { LOOPBACK, PORTS } from '../catalog/ports';
import { reachablePorts } from '../rpc/access';
import type { EthstatsSettings, NodeSettings, ReleasedCompanionSettings } from '../settings/model';

/** What every companion service of a node has. */
interface CompanionDescriptionBase {
  /** Seconds before it is started again after a failure. */
  restartSeconds: number;
}

/** A companion installed from a released executable (the relay signer, the rotation client). */
export interface ReleasedCompanionDescription extends CompanionDescriptionBase {
  kind: 'release';
  settings: ReleasedCompanionSettings;
  /** Its config file's name in its working directory, and its text. */
  configFile: string;
  configToml: string;
  /** The environment variable it reads the node key from (the relay signer), if it reads it that way. */
  keyVariable?: string;
  /** The loopback port it listens on, if it serves anything (the relay signer, behind the writer's proxy). */
  port?: number;
  /** The container image reference a cluster runs it from, pinned by its digest when one is given. */
  image: string;
  /** The executable's file name on a machine, and its path inside the container image. */
  executable: string;
  imageExecutable: string;
  /** The folder it writes its own log to, relative to its working directory. */
  logDir: string;
}

/**
 * A companion run from its container image on both paths (the monitoring client): the image, what it runs with
 * which arguments, and the folder of its own state that must outlive the container.
 */
export interface ContainerCompanionDescription extends CompanionDescriptionBase {
  kind: 'container';
  settings: EthstatsSettings;
  /** The image reference, pinned by its digest when one is given. */
  image: string;
  /** The executable inside the image, and its arguments. */
  command: string;
  args: string[];
  /** The environment variable naming its state folder, and where that folder is mounted. */
  stateVariable: string;
  stateMountPath: string;
  /** The system user of its own it runs as on a machine (never Besu's). */
  systemUser: string;
  /** The uid it runs as in the node's pod (never Besu's). */
  podUid: number;
}

/** One companion service of a node. */
export type CompanionDescription = ReleasedCompanionDescription | ContainerCompanionDescription;

/** Where the companions find the node's identity files. */
export interface CompanionPaths {
  /** The node key file (the rotation client reads it; the relay signer gets it in its environment). */
  nodeKeyFile: string;
  /** data/nodeAddress, where the node has one. */
  nodeAddressFile?: string;
}

/** Besu's RPC as the companions reach it. */
const BESU_HTTP = `http://${LOOPBACK}:${PORTS.rpcHttp}`;
const BESU_WS = `ws://${LOOPBACK}:${PORTS.rpcWs}`;

/** The companions of a node, in the catalog's order. */
export function describeCompanions(node: NodeSettings, paths: CompanionPaths): CompanionDescription[] {
  return node.companions.map((settings) =>
    settings.name === ETHSTATS.name ? describeEthstats(node, settings) : describeReleased(node, settings, paths),
  );
}

/** The monitoring client: registers the node under its name and e-mail (once; then it logs in), reads Besu's WebSocket. */
function describeEthstats(node: NodeSettings, settings: EthstatsSettings): ContainerCompanionDescription {
  return {
    kind: 'container',
    settings,
    image: pinnedImage(settings.image, settings.imageDigest),
    command: ETHSTATS.imageExecutable,
    args: [
      ETHSTATS.logLevelFlag,
      '--register',
      '--account-email',
      node.nodeEmail,
      '--node-name',
      node.nodeName,
      '--server-url',
      settings.serverUrl,
      '--client-url',
      BESU_WS,
    ],
    stateVariable: ETHSTATS.stateVariable,
    stateMountPath: ETHSTATS.stateMountPath,
    systemUser: ETHSTATS.systemUser,
    podUid: ETHSTATS.podUid,
    restartSeconds: ETHSTATS.restartSeconds,
  };
}

/**
 * An image reference pinned by a registry digest: `repository@sha256:…` (the tag, which the digest supersedes, is
 * left out: every runtime accepts that form); the image as given without a digest.
 */
export function pinnedImage(image: string, digest: string | undefined): string {
  if (!digest) return image;
  const repository = image.replace(/@sha256:[0-9a-f]{64}$/, '').replace(/:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/, '');
  return `${repository}@${digest}`;
}

/** A companion installed from a released executable, with its config.toml. */
function describeReleased(
  node: NodeSettings,
  settings: ReleasedCompanionSettings,
  paths: CompanionPaths,
): ReleasedCompanionDescription {
  const facts = RELEASED_COMPANIONS.find((c) => c.name === settings.name);
  if (!facts) throw new Error(`no companion ${settings.name} in the catalog`);
  const identity = {
    nodeKeyPath: paths.nodeKeyFile,
    ...(paths.nodeAddressFile ? { nodeAddressPath: paths.nodeAddressFile } : {}),
  };
  const common = {
    kind: 'release' as const,
    settings,
    image: pinnedImage(settings.image, settings.imageDigest),
    configFile: facts.configFile,
    executable: facts.executable,
    imageExecutable: facts.imageExecutable,
    logDir: facts.logDir,
    restartSeconds: facts.restartSeconds,
  };
  if (settings.name === RELAY_SIGNER.name) {
    const config = {
      application: {
        nodeURL: BESU_HTTP,
        wsURL: BESU_WS,
        contractAddress: settings.contract,
        ...identity,
        port: RELAY_SIGNER.port,
      },
      security: { permissionsEnabled: RELAY_SIGNER.permissionsEnabled },
    };
    return {
      ...common,
      configToml: render(node, settings, config),
      keyVariable: RELAY_SIGNER.keyVariable,
      port: RELAY_SIGNER.port,
    };
  }
  const config = {
    application: {
      wsURL: BESU_WS,
      rpcURL: BESU_HTTP,
      timeout: ROTATION_VALIDATOR.rpcTimeoutSeconds,
      contractAddress: settings.contract,
      ...identity,
    },
  };
  return { ...common, configToml: render(node, settings, config) };
}

/** A companion's config.toml, with a header saying where it comes from. */
function render(node: NodeSettings, settings: ReleasedCompanionSettings, config: Record<string, unknown>): string {
  const header = `# The ${settings.name} of node ${node.nodeName} on ${node.network.name}, written by the lacchain-besu-node Pulumi program: edit lacchain:companions.${settings.key}, not this file.\n`;
  return `${header}${stringify(config)}\n`;
}

/**
 * The URL of a writer's gas model (its proxy's port 80, which sends the gas model's transactions to the relay signer),
 * when the node runs the relay signer: the node's public address, or the machine's loopback with exposure internal;
 * none for a cluster node with exposure internal (its Service has no port 80).
 */
export function gasModelUrl(node: NodeSettings): string | undefined {
  if (!node.companions.some((c) => c.name === RELAY_SIGNER.name)) return undefined;
  const port = PORTS.reverseProxyHttp;
  if (reachablePorts(node, node.rpc).proxyHttp) {
    return `http://${node.target === 'kubernetes' ? node.publicIP : node.p2pHost}:${port}`;
  }
  return node.target === 'ssh' ? `http://${LOOPBACK}:${port}` : undefined;
}

/** Whether Besu must serve its WebSocket RPC on the loopback for the node's companions. */
export function companionsNeedWebSocket(node: NodeSettings): boolean {
  return node.companions.length > 0;
}

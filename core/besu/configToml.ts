/**
 * Besu's config.toml for a node: one pure function from validated settings to the file's text, per Besu release.
 * It writes only keys the chosen release accepts (an unknown key stops Besu at start-up) and refuses to render
 * anything else.
 */
import { stringify } from 'smol-toml';
import { acceptedOptions, atLeast, BESU_CHANGES } from '../catalog/besu';
import { METRICS_PUSH_PORT, Network } from '../catalog/networks';
import { METRICS } from '../catalog/metrics';
import { NODE_TYPE_FACTS, NodeType } from '../catalog/nodeTypes';
import { BIND_ALL, LOCAL_HOSTS, LOOPBACK, PORTS } from '../catalog/ports';
import { CHECK_METHODS, RPC_DEFAULTS, RPC_OPTIONS } from '../catalog/rpc';
import type { BesuOptions } from '../settings/model';

/** Where the node's files are, as Besu sees them (inside the pod or on the machine). */
export interface BesuPaths {
  /** The chain database folder. */
  dataPath: string;
  /** The verified genesis file. */
  genesisFile: string;
  /** The node private key file (kept outside the data volume's fate on Kubernetes). */
  nodeKeyFile: string;
  /** The RPC credentials file (password authentication). */
  rpcCredentialsFile?: string;
  /** The JWT public key file (jwt authentication). */
  rpcJwtPublicKeyFile?: string;
}

/** The RPC choices of a node (from `lacchain:rpc`); defaults when absent. */
export interface BesuRpcInput {
  /** API groups; default the node type's. */
  apis?: readonly string[];
  /** Bind to every address (a pod, or a machine whose 4545 is public) or to 127.0.0.1 only (behind the proxy). */
  bindAll: boolean;
  /** Extra allowlisted hosts ('*' for any). */
  hostAllowlist?: readonly string[];
  corsOrigins?: readonly string[];
  /** Authentication method, when on. */
  authentication?: { method: 'password' } | { method: 'jwt'; algorithm?: string };
  /** Methods exempt from authentication, besides CHECK_METHODS. */
  noAuthMethods?: readonly string[];
  maxActiveConnections?: number;
  /** Serve the WebSocket RPC on 127.0.0.1 for the node's companion services (its default APIs: ETH, NET, WEB3). */
  webSocket?: boolean;
}

/** What the config of one node depends on. */
export interface BesuConfigInput {
  network: Network;
  typenode: NodeType;
  releaseVersion: string;
  /** The node's name on the network: the metrics job. */
  nodeName: string;
  /** The IP advertised to peers. */
  p2pHost: string;
  /** The enodes of the stack's own bootnodes, after the network's in `bootnodes` (writers and validators). */
  stackBootnodes?: readonly string[];
  p2pPort: number;
  /** Extra host names the RPC answers to besides localhost (public IP, DNS name). */
  rpcHosts: readonly string[];
  paths: BesuPaths;
  /** RPC access; without it: the node type's APIs, bound to every address, no authentication. */
  rpc?: BesuRpcInput;
  /**
   * Where Besu's metrics go: pushed by Besu itself to the network's gateway (`push`), or served on `host` for the
   * node's metrics relay, which pushes them on (`served`).
   */
  metrics?: { mode: 'push' } | { mode: 'served'; host: string };
  /** Besu options the network's Helm chart writes (the node's `besu` settings); none written when absent. */
  options?: BesuOptions;
}

/** A Besu config as key → value, in the order written. */
export type BesuConfig = Record<string, string | number | boolean | string[]>;

/** Release-dependent name of the RPC host allowlist. */
export function hostAllowlistKey(version: string): string {
  return atLeast(version, BESU_CHANGES.hostAllowlist) ? 'host-allowlist' : 'host-whitelist';
}

/** The config of a node as key → value. Throws if a key is not accepted by the release (a bug, not bad input). */
export function besuConfig(input: BesuConfigInput): BesuConfig {
  const { network, typenode, releaseVersion: version } = input;
  const config: BesuConfig = {
    'data-path': input.paths.dataPath,
    'genesis-file': input.paths.genesisFile,
    'network-id': network.networkId,
    'node-private-key-file': input.paths.nodeKeyFile,
    // Peer-to-peer: advertise the permissioned IP; no NAT detection, the address is fixed.
    'p2p-host': input.p2pHost,
    'p2p-interface': BIND_ALL,
    'p2p-port': input.p2pPort,
    'nat-method': 'NONE',
    'discovery-enabled': true,
    // The network's bootnodes of the node's type, then the stack's own (its nodes reach each other).
    bootnodes: unique([...network.bootnodes[typenode], ...(input.stackBootnodes ?? [])]),
  };
  const maxPeers = network.maxPeers[typenode];
  if (maxPeers !== undefined) config['max-peers'] = maxPeers;
  const rpc = input.rpc ?? { bindAll: true };
  Object.assign(config, {
    'min-gas-price': 0,
    // JSON-RPC: the node type's API set (ADMIN/DEBUG/TXPOOL only by the operator's recorded override); only the
    // listed hosts; CORS only for named origins.
    'rpc-http-enabled': true,
    'rpc-http-host': rpc.bindAll ? BIND_ALL : LOOPBACK,
    'rpc-http-port': PORTS.rpcHttp,
    'rpc-http-api': [...(rpc.apis ?? NODE_TYPE_FACTS[typenode].rpcApis)],
    [hostAllowlistKey(version)]: rpc.hostAllowlist?.includes('*')
      ? ['*']
      : unique([...LOCAL_HOSTS, ...input.rpcHosts, ...(rpc.hostAllowlist ?? [])]),
  });
  if (rpc.corsOrigins && rpc.corsOrigins.length > 0) config['rpc-http-cors-origins'] = [...rpc.corsOrigins];
  if (rpc.authentication) {
    config['rpc-http-authentication-enabled'] = true;
    if (rpc.authentication.method === 'password') {
      config['rpc-http-authentication-credentials-file'] = required(input.paths.rpcCredentialsFile, 'credentials');
    } else {
      config['rpc-http-authentication-jwt-public-key-file'] = required(input.paths.rpcJwtPublicKeyFile, 'JWT key');
      if (rpc.authentication.algorithm) config[RPC_OPTIONS.jwtAlgorithm] = rpc.authentication.algorithm;
    }
    // The start step's identity check and the day-2 checks call these read-only methods without a token.
    config[RPC_OPTIONS.noAuthMethods] = unique([...CHECK_METHODS, ...(rpc.noAuthMethods ?? [])]);
  }
  if (rpc.webSocket) {
    // Without authentication even when the HTTP RPC has it: the companions send no credentials. Its APIs stay Besu's
    // default ETH, NET, WEB3, which they read and send transactions with. On a machine nftables lets only their users
    // reach it (webSocketFence in core/remote/companionService.ts); in a pod, every container of the pod can.
    Object.assign(config, { 'rpc-ws-enabled': true, 'rpc-ws-host': LOOPBACK, 'rpc-ws-port': PORTS.rpcWs });
  }
  // Besu's own default is 80 (from 21.1.2): written only when the operator chose another limit, so that the files of
  // nodes deployed before the setting existed do not change (a change restarts the node).
  const maxActive = rpc.maxActiveConnections ?? RPC_DEFAULTS.maxActiveConnections;
  if (maxActive !== RPC_DEFAULTS.maxActiveConnections) config[RPC_OPTIONS.maxActiveConnections] = maxActive;
  const metrics = input.metrics ?? { mode: 'push' };
  Object.assign(
    config,
    metrics.mode === 'push'
      ? {
          // Monitoring: the network's push gateway, job = node name.
          'metrics-push-enabled': true,
          'metrics-push-host': network.metricsPushHost,
          'metrics-push-port': METRICS_PUSH_PORT,
          'metrics-push-interval': METRICS.pushIntervalSeconds,
          'metrics-push-prometheus-job': input.nodeName,
        }
      : {
          // Served for the node's metrics relay, which pushes them to the network's gateway (Besu cannot do both).
          'metrics-enabled': true,
          'metrics-host': metrics.host,
          'metrics-port': METRICS.besuPort,
        },
  );
  Object.assign(config, {
    // On-chain node permissioning.
    'permissions-nodes-contract-enabled': true,
    'permissions-nodes-contract-address': network.nodesPermissioningContract,
    logging: 'INFO',
  });
  Object.assign(config, helmChartOptions(input.options ?? {}, network, version));
  // From 24.3.0 the default storage is BONSAI; keep FOREST everywhere so an upgrade never meets an unreadable database.
  if (acceptedOptions(version).has('data-storage-format')) config['data-storage-format'] = 'FOREST';
  const rejected = Object.keys(config).filter((key) => !acceptedOptions(version).has(key));
  if (rejected.length > 0) throw new Error(`Besu ${version} does not accept: ${rejected.join(', ')}`);
  return config;
}

/**
 * The options of the network's Helm chart a node's settings turn on, for `version`: the transaction pool's need
 * `tx-pool="legacy"` from 23.10 (the layered pool refuses them). Only what is set is written.
 */
function helmChartOptions(options: BesuOptions, network: Network, version: string): BesuConfig {
  const config: BesuConfig = {};
  if (options.revertReason) config['revert-reason-enabled'] = true;
  const pool = {
    'tx-pool-retention-hours': options.txPoolRetentionHours,
    'tx-pool-max-size': options.txPoolMaxSize,
  };
  const poolSet = Object.entries(pool).filter((entry): entry is [string, number] => entry[1] !== undefined);
  if (poolSet.length > 0 && atLeast(version, BESU_CHANGES.layeredTxPool)) config['tx-pool'] = 'legacy';
  for (const [key, value] of poolSet) config[key] = value;
  if (options.accountPermissioning) {
    config['permissions-accounts-contract-enabled'] = true;
    config['permissions-accounts-contract-address'] = network.accountsPermissioningContract;
  }
  return config;
}

/** The config.toml text of a node. */
export function renderConfigToml(input: BesuConfigInput): string {
  const header =
    `# Besu configuration of node ${input.nodeName} (${input.typenode} on ${input.network.name}).\n` +
    '# Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.\n';
  return `${header}${stringify(besuConfig(input))}\n`;
}

function required(path: string | undefined, what: string): string {
  if (path === undefined) throw new Error(`no ${what} file path for RPC authentication`);
  return path;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

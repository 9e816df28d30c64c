/**
 * Besu's config.toml for a node: one pure function from validated settings to the file's text, per Besu release.
 * It writes only keys the chosen release accepts (an unknown key stops Besu at start-up) and refuses to render
 * anything else.
 */
import { stringify } from 'smol-toml';
import { acceptedOptions, atLeast, BESU_CHANGES } from '../catalog/besu';
import { METRICS_PUSH_PORT, Network } from '../catalog/networks';
import { NODE_TYPE_FACTS, NodeType } from '../catalog/nodeTypes';
import { BIND_ALL, LOCAL_HOSTS, PORTS } from '../catalog/ports';

/** Where the node's files are, as Besu sees them (inside the pod or on the machine). */
export interface BesuPaths {
  /** The chain database folder. */
  dataPath: string;
  /** The verified genesis file. */
  genesisFile: string;
  /** The node private key file (kept outside the data volume's fate on Kubernetes). */
  nodeKeyFile: string;
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
  p2pPort: number;
  /** Extra host names the RPC answers to besides localhost (public IP, DNS name). */
  rpcHosts: readonly string[];
  paths: BesuPaths;
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
    bootnodes: [...network.bootnodes[typenode]],
  };
  const maxPeers = network.maxPeers[typenode];
  if (maxPeers !== undefined) config['max-peers'] = maxPeers;
  Object.assign(config, {
    'min-gas-price': 0,
    // JSON-RPC: the node type's API set, never ADMIN/DEBUG/TXPOOL; only the listed hosts, no CORS.
    'rpc-http-enabled': true,
    'rpc-http-host': BIND_ALL,
    'rpc-http-port': PORTS.rpcHttp,
    'rpc-http-api': [...NODE_TYPE_FACTS[typenode].rpcApis],
    [hostAllowlistKey(version)]: unique([...LOCAL_HOSTS, ...input.rpcHosts]),
    // Monitoring: the network's push gateway, job = node name.
    'metrics-push-enabled': true,
    'metrics-push-host': network.metricsPushHost,
    'metrics-push-port': METRICS_PUSH_PORT,
    'metrics-push-interval': 5,
    'metrics-push-prometheus-job': input.nodeName,
    // On-chain node permissioning.
    'permissions-nodes-contract-enabled': true,
    'permissions-nodes-contract-address': network.nodesPermissioningContract,
    logging: 'INFO',
  });
  // From 24.3.0 the default storage is BONSAI; keep FOREST everywhere so an upgrade never meets an unreadable database.
  if (acceptedOptions(version).has('data-storage-format')) config['data-storage-format'] = 'FOREST';
  const rejected = Object.keys(config).filter((key) => !acceptedOptions(version).has(key));
  if (rejected.length > 0) throw new Error(`Besu ${version} does not accept: ${rejected.join(', ')}`);
  return config;
}

/** The config.toml text of a node. */
export function renderConfigToml(input: BesuConfigInput): string {
  const header =
    `# Besu configuration of node ${input.nodeName} (${input.typenode} on ${input.network.name}).\n` +
    '# Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.\n';
  return `${header}${stringify(besuConfig(input))}\n`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/**
 * What a node IS, decided once from its validated settings: Besu's files and where they are, its RPC (APIs, binding,
 * the hosts it answers to, authentication, how far it reaches), the ports reachable from outside, the reverse proxy,
 * the JVM settings, and the digest of what Besu reads. The Kubernetes renderer (core/kubernetes) and the SSH renderer
 * (core/remote) only translate it into manifests or remote steps; the policy pack's expectations read it too.
 *
 * Where the two paths differ by design (a pod mounts its files, a machine has a node home; docs/settings.md's exposure
 * table), the difference is decided here, in one place, by the node's target.
 */
import { createHash } from 'crypto';
import type { BesuPaths, BesuRpcInput } from '../besu/configToml';
import { renderNodeConfigToml } from '../besu/nodeConfig';
import { BESU_FILES, BESU_JVM_OPTIONS } from '../catalog/besu';
import { POD_FILES, POD_PATHS, PROXY_CONTAINER_PORT } from '../catalog/kubernetes';
import { RELAY_SIGNER } from '../catalog/companions';
import { NODE_TYPE_FACTS } from '../catalog/nodeTypes';
import { LOCAL_HOSTS, LOOPBACK, PORTS } from '../catalog/ports';
import { ProxyServer, renderNginxServers } from '../proxy/nginxConf';
import { nodePaths } from '../remote/paths';
import { metricsRelayPaths, metricsTokenCheckFile } from '../remote/metricsRelay';
import { METRICS } from '../catalog/metrics';
import {
  ClusterRpcPeers,
  clusterRpcPeers,
  proxyAccess,
  ReachablePorts,
  reachablePorts,
  rpcApisOf,
  unsafeRpcOverride,
} from '../rpc/access';
import { readScript, START_NODE_SCRIPT } from '../scripts';
import type { NodeSettings, RpcAuthentication } from '../settings/model';
import { CompanionDescription, companionsNeedWebSocket, describeCompanions } from './companions';

/** The node's JSON-RPC, as Besu and the proxy serve it. */
export interface RpcDescription {
  /** The API groups Besu enables. */
  apis: string[];
  /** Besu listens on every address (a pod, for its probes; a machine whose 4545 is public), else on 127.0.0.1. */
  bindAll: boolean;
  /** The node's own names its RPC answers to (besides localhost and the allowlist setting). */
  hosts: string[];
  /** Password or JWT authentication, when on. */
  authentication?: RpcAuthentication;
  /** Reachable from outside, directly or through the proxy. */
  publiclyReachable: boolean;
  /** Who may open 4545 over a cluster's network besides the pod itself (what the pod's NetworkPolicy admits). */
  clusterPeers: ClusterRpcPeers;
  /** What the operator's explicit override (`allowUnsafeApis`) covers on this node (`ADMIN`, `cors:*`); empty when none. */
  unsafeOverride: string[];
}

/** The files Besu (and the proxy) read, with their contents where the settings decide them. */
export interface NodeFiles {
  /** Where Besu finds each file (config.toml's paths). */
  paths: BesuPaths;
  /** Besu's config.toml. */
  configToml: string;
  /** The start step that refuses to start Besu without its key (scripts/start-node.sh). */
  launcher: string;
  /** The reverse proxy's nginx configuration, when the node has a proxy. */
  proxyConfig?: string;
  /** The JWT public key (jwt authentication). */
  jwtPublicKey?: string;
}

export type { ReachablePorts } from '../rpc/access';

/** One node, described independently of how it is deployed. */
export interface NodeDescription<N extends NodeSettings = NodeSettings> {
  /** The validated settings it was made from. */
  node: N;
  rpc: RpcDescription;
  reachable: ReachablePorts;
  files: NodeFiles;
  /** The reverse proxy's listening servers (none: no proxy). */
  proxyServers: ProxyServer[];
  /** JVM options for Besu (BESU_OPTS). */
  jvmOptions: string;
  /** The network's companion services the node runs beside Besu (`lacchain:companions`). */
  companions: CompanionDescription[];
}

/** Where Besu's files are: mounted in the pod, or in the node home on a machine. */
function besuPaths(node: NodeSettings, auth: RpcAuthentication | undefined): BesuPaths {
  if (node.target === 'kubernetes') {
    return {
      dataPath: POD_PATHS.dataDir,
      genesisFile: `${POD_PATHS.configDir}/${POD_FILES.genesis}`,
      nodeKeyFile: `${POD_PATHS.keyDir}/${POD_FILES.key}`,
      ...(auth?.method === 'password'
        ? { rpcCredentialsFile: `${POD_PATHS.rpcAuthDir}/${BESU_FILES.rpcCredentials}` }
        : {}),
      ...(auth?.method === 'jwt'
        ? { rpcJwtPublicKeyFile: `${POD_PATHS.configDir}/${BESU_FILES.rpcJwtPublicKey}` }
        : {}),
    };
  }
  const paths = nodePaths(node);
  return {
    dataPath: paths.dataDir,
    genesisFile: paths.genesis,
    nodeKeyFile: paths.key,
    ...(auth?.method === 'password' ? { rpcCredentialsFile: paths.rpcCredentials } : {}),
    ...(auth?.method === 'jwt' ? { rpcJwtPublicKeyFile: paths.rpcJwtPublicKey } : {}),
  };
}

/**
 * The proxy's servers: the writer's container port in a pod; 443 with TLS (and a writer's 80) on a machine. With RPC
 * authentication on, a machine's 80 refuses a request carrying credentials, redirects any other to https on 443, and
 * passes nothing to Besu, so no login or token is taken over plain HTTP (a pod has no TLS: the settings refuse
 * authentication while its plain port is reachable, see plainTextRpcPorts).
 *
 * A writer's servers route JSON-RPC by method (the LACChain gas model: the catalog's GAS_MODEL_METHODS to the relay
 * signer, the rest to Besu): the pod's port, a machine's 80, and a machine's 443 too, so the gas model also works
 * over TLS, and still works when 80 only redirects (authentication on: then 80 routes nothing).
 */
function proxyServersOf(node: NodeSettings): ProxyServer[] {
  const writer = NODE_TYPE_FACTS[node.typenode].reverseProxy;
  // The gas model's routing goes where the node runs the relay signer (a writer, unless the operator turned it off).
  const relaySigner = node.companions.some((c) => c.name === RELAY_SIGNER.name);
  const gasModel = writer && relaySigner ? { gasModel: { relaySignerPort: RELAY_SIGNER.port } } : {};
  if (node.target === 'kubernetes') return writer ? [{ port: PROXY_CONTAINER_PORT, ...gasModel }] : [];
  // exposure internal: the proxy answers on the machine only.
  const address = node.rpc.exposure === 'internal' ? LOOPBACK : undefined;
  const paths = nodePaths(node);
  const tls = {
    certificateFile: `${paths.tlsDir}/${node.serviceName}.crt`,
    keyFile: `${paths.tlsDir}/${node.serviceName}.key`,
  };
  // With lacchain:metricsToken: the machine's metrics for the operator's Prometheus, on every address (the RPC's
  // exposure does not apply: nothing there is JSON-RPC), with the token only.
  const metrics: ProxyServer[] = node.metricsEndpoint
    ? [
        {
          port: METRICS.endpointPort,
          tls,
          metrics: {
            tokenCheck: metricsTokenCheckFile(node),
            besuPort: METRICS.besuPort,
            machineFile: metricsRelayPaths(node).machineFile,
          },
        },
      ]
    : [];
  return [
    { port: PORTS.reverseProxyHttps, address, tls, ...gasModel },
    ...metrics,
    ...(writer
      ? [
          {
            port: PORTS.reverseProxyHttp,
            address,
            ...(node.rpc.authentication ? { redirectToHttps: PORTS.reverseProxyHttps } : gasModel),
          },
        ]
      : []),
  ];
}

/** The proxy's file: why it is there, its servers, and the same access rules as Besu. */
function proxyConfigOf(node: NodeSettings, servers: ProxyServer[], hosts: string[]): string | undefined {
  if (servers.length === 0) return undefined;
  const writer = NODE_TYPE_FACTS[node.typenode].reverseProxy;
  const purpose =
    node.target === 'kubernetes'
      ? `Reverse proxy of writer ${node.nodeName}: the gas-model entry point in front of Besu's JSON-RPC.`
      : !writer
        ? `Reverse proxy of node ${node.nodeName}: Besu's JSON-RPC over TLS.`
        : `Reverse proxy of writer ${node.nodeName}: JSON-RPC over TLS routed by method (the gas model), and on 80 ${node.rpc.authentication ? 'a redirect to it (RPC authentication is on)' : 'the gas-model entry point'}.`;
  const zone = node.target === 'kubernetes' ? 'lacchain_rpc' : `lacchain_${node.serviceName.replace(/-/g, '_')}`;
  return renderNginxServers({ purpose, servers, access: proxyAccess(node, [...LOCAL_HOSTS, ...hosts], zone) });
}

/** Describes a node from its validated settings. */
export function describeNode<N extends NodeSettings>(node: N): NodeDescription<N> {
  const auth = node.rpc.authentication;
  const reachable = reachablePorts(node, node.rpc);
  // The node's own names: its public IP (a pod's LoadBalancer), its p2p host, its DNS name.
  const hosts = [
    ...(node.target === 'kubernetes' ? [node.publicIP] : []),
    node.p2pHost,
    ...(node.dnsName ? [node.dnsName] : []),
  ];
  const rpc: RpcDescription = {
    apis: rpcApisOf(node, node.rpc),
    bindAll: node.target === 'kubernetes' || reachable.rpc,
    hosts,
    authentication: auth,
    publiclyReachable: reachable.rpc || reachable.proxyHttp || reachable.proxyHttps,
    clusterPeers: clusterRpcPeers(node, node.rpc),
    unsafeOverride: unsafeRpcOverride(node, node.rpc),
  };
  const paths = besuPaths(node, auth);
  const proxyServers = proxyServersOf(node);
  const besuRpc: BesuRpcInput = {
    apis: rpc.apis,
    bindAll: rpc.bindAll,
    hostAllowlist: node.rpc.hostAllowlist,
    corsOrigins: node.rpc.corsOrigins,
    authentication: !auth
      ? undefined
      : auth.method === 'password'
        ? { method: 'password' }
        : { method: 'jwt', ...(auth.algorithm ? { algorithm: auth.algorithm } : {}) },
    noAuthMethods: node.rpc.noAuthMethods,
    maxActiveConnections: node.rpc.maxActiveConnections,
    webSocket: companionsNeedWebSocket(node),
  };
  return {
    node,
    rpc,
    reachable,
    files: {
      paths,
      configToml: renderNodeConfigToml(node, hosts, paths, besuRpc),
      launcher: readScript(START_NODE_SCRIPT),
      proxyConfig: proxyConfigOf(node, proxyServers, hosts),
      ...(auth?.method === 'jwt' ? { jwtPublicKey: auth.publicKey } : {}),
    },
    proxyServers,
    jvmOptions: BESU_JVM_OPTIONS,
    companions: describeCompanions(node, {
      nodeKeyFile: paths.nodeKeyFile,
      ...(node.target === 'ssh' ? { nodeAddressFile: nodePaths(node).nodeAddress } : {}),
    }),
  };
}

/**
 * The digest of what the node runs with, besides its key: config.toml, the launcher, the file that starts Besu with
 * them (`serviceFile`: the proxy config in the pod, the systemd unit on a machine), the JWT public key and the
 * genesis digest. A change of it restarts Besu: the pod's checksum annotation rolls the pod, the start step's
 * parameter restarts the service. The RPC credentials are deliberately not in it: it is public (an annotation, a step
 * parameter, the plan), and the components roll the pod or run the node-key step on a password change from values
 * that carry the secret bcrypt salts (components/kubernetesNode.ts, components/remoteNode.ts).
 */
export function configDigest(description: NodeDescription, serviceFile: string, genesisSha256: string): string {
  const { files } = description;
  return createHash('sha256')
    .update(files.configToml)
    .update(files.launcher)
    .update(serviceFile)
    .update(files.jwtPublicKey ?? '')
    .update(genesisSha256)
    .digest('hex');
}

/**
 * The Kubernetes objects of one node, as plain manifests: pure functions of the validated settings.
 * The component turns them into resources; the offline plan writes them as YAML; the tests validate them against
 * the Kubernetes schemas. Values that only the engine knows (the key, the downloaded genesis) are passed in as
 * opaque values of type V and placed where they belong.
 */
import { companionContainers, companionStateInit, companionVolumes } from './companionContainers';
import { besuImage } from '../catalog/besu';
import {
  CONFIG_DIGEST_ANNOTATION,
  IDENTITY_ANNOTATIONS,
  KEY_SECRET_ANNOTATION,
  kubernetesNames,
  LABEL_KEYS,
  LABELS,
  POD_FILES,
  POD_PATHS,
  POD_SECURITY_LABELS,
  POD_STOP_GRACE_SECONDS,
  PROBES,
  PROXY_CONTAINER_PORT,
  PROXY_RUNTIME,
  proxyImage,
  STACK_LABEL,
} from '../catalog/kubernetes';
import { LOCAL_HOSTS, LOOPBACK, PORTS } from '../catalog/ports';
import { BESU_FILES } from '../catalog/besu';
import { MISSING_KEY_EXIT_CODE, MISSING_KEY_EXIT_VARIABLE } from '../catalog/remote';
import { reachablePorts } from '../rpc/access';
import type { NodeDescription } from '../node/description';
import type { KubernetesNodeSettings } from '../settings/model';
import { backupConfigEntries, beforeReleaseChangeInit } from './backups';
import { besuKeyMounts, keyCheckConfigEntries, keyCheckInit, keyCheckVolumes } from './keyCheck';
import { configCheckInit, configVolumes, nodeConfigDigest, nodeConfigMapName, type PodConfig } from './configCheck';
import { nodeKeySecret } from './nodeKeySecret';
import { loadBalancerFields } from './loadBalancer';
import { MAX_BLOCKS_BEHIND } from '../catalog/health';
import { stackOfNetwork } from '../catalog/networks';
import { METRICS_RELAY_VOLUME, metricsRelayContainer, scrapeAnnotations } from './monitoring';
import {
  BESU_POD_SECURITY,
  metadata,
  nodeLabels,
  nodeSecret,
  nodeVolumeClaim,
  overrideAnnotations,
  RESTRICTED_CONTAINER,
  selectorLabels,
} from './podBasics';

/**
 * The pod's labels: the node's, plus the Besu release it runs (only the pod changes with the release) and its stack
 * (which a scrape job by annotations labels the node's series with, as the alerts' runbooks name it).
 */
export function podLabels(node: KubernetesNodeSettings): Record<string, string> {
  return {
    ...nodeLabels(node),
    'app.kubernetes.io/version': node.releaseVersion,
    [STACK_LABEL]: stackOfNetwork(node.network),
  };
}

/** The namespace, enforcing the `restricted` Pod Security Standard on every pod in it. */
export function namespaceManifest(namespace: string) {
  return {
    apiVersion: 'v1' as const,
    kind: 'Namespace' as const,
    metadata: { name: namespace, labels: { [LABEL_KEYS.partOf]: LABELS.partOf, ...POD_SECURITY_LABELS } },
  };
}

/** The Secret holding the node key (outside the data volume, so losing the volume never loses the identity). */
export function keySecretManifest<V>(node: KubernetesNodeSettings, privateKey: V) {
  return nodeSecret(node, kubernetesNames(node.name).keySecret, { [POD_FILES.key]: privateKey });
}

/** The Secret holding the RPC credentials file (password authentication): bcrypt hashes, mounted read-only. */
export function rpcAuthSecretManifest<V>(node: KubernetesNodeSettings, credentials: V) {
  return nodeSecret(node, kubernetesNames(node.name).rpcAuthSecret, { [BESU_FILES.rpcCredentials]: credentials });
}

/** The files of the ConfigMap. */
export interface NodeConfigFiles<V> {
  /** Besu's config.toml. */
  configToml: string;
  /** The verified genesis. */
  genesis: V;
  /** The start step (scripts/start-node.sh). */
  startScript: string;
  /** The writer's proxy configuration. */
  proxyConfig?: string;
  /** The JWT public key (jwt authentication). */
  rpcJwtPublicKey?: string;
  /** The companion services' config files, by ConfigMap entry. */
  companionConfigs?: Record<string, string>;
  /** The pod's metrics relay (scripts/metrics-relay.java). */
  metricsRelay: string;
}

/** The ConfigMap's entries: config.toml, genesis, start step, (writers) proxy config, and the pod's scripts. */
function configData<V>(node: KubernetesNodeSettings, files: NodeConfigFiles<V>): Record<string, string | V> {
  const data: Record<string, string | V> = {
    [POD_FILES.config]: files.configToml,
    [POD_FILES.genesis]: files.genesis,
    [POD_FILES.startScript]: files.startScript,
    [POD_FILES.metricsRelay]: files.metricsRelay,
  };
  if (files.proxyConfig !== undefined) data[POD_FILES.proxyConfig] = files.proxyConfig;
  if (files.rpcJwtPublicKey !== undefined) data[BESU_FILES.rpcJwtPublicKey] = files.rpcJwtPublicKey;
  Object.assign(data, files.companionConfigs ?? {});
  // The backup before a release change (the pod's first init container).
  Object.assign(data, backupConfigEntries());
  // The key check of a node whose key is the operator's Secret.
  Object.assign(data, keyCheckConfigEntries(node));
  return data;
}

/**
 * What the StatefulSet names of the node's config: its ConfigMap and the digest of its files (configCheck.ts), the
 * genesis known by its SHA-256 `genesisSha256`.
 */
export function podConfig<V>(
  node: KubernetesNodeSettings,
  files: NodeConfigFiles<V>,
  genesisSha256: string,
): PodConfig {
  const digest = nodeConfigDigest(configData(node, files), genesisSha256);
  return { configMap: nodeConfigMapName(node, digest), digest };
}

/**
 * The ConfigMap: config.toml, genesis, start step and (writers) proxy config. Immutable and named by its content
 * (`config`, podConfig's; core/kubernetes/configCheck.ts): a change is a new ConfigMap.
 */
export function configMapManifest<V, N = string>(
  node: KubernetesNodeSettings,
  files: NodeConfigFiles<V>,
  config: PodConfig<N>,
) {
  const meta = metadata(node, '');
  return {
    apiVersion: 'v1' as const,
    kind: 'ConfigMap' as const,
    metadata: {
      ...meta,
      name: config.configMap,
      annotations: { ...meta.annotations, [CONFIG_DIGEST_ANNOTATION]: config.digest },
    },
    immutable: true,
    data: configData(node, files),
  };
}

/** The data volume: ReadWriteOnce (block storage binds it), the network's size. */
export function dataVolumeManifest(node: KubernetesNodeSettings) {
  return nodeVolumeClaim(node, kubernetesNames(node.name).dataVolume);
}

/** Health probe on Besu's RPC port, sending a Host header the allowlist accepts. */
function healthProbe(path: string, failureThreshold: number) {
  return {
    httpGet: { path, port: 'rpc', httpHeaders: [{ name: 'Host', value: LOCAL_HOSTS[0] }] },
    periodSeconds: PROBES.periodSeconds,
    timeoutSeconds: PROBES.timeoutSeconds,
    failureThreshold,
  };
}

/**
 * The StatefulSet: one replica, pinned to the chosen worker, running Besu (and, for writers, the proxy), with the
 * node's companion services beside it.
 */
/** The pod's volume of the node key: the key Secret's entry as the file Besu reads. */
function keyVolume(node: KubernetesNodeSettings) {
  const secret = nodeKeySecret(node);
  if (!secret.operators) return { name: 'key', secret: { secretName: secret.name, defaultMode: 0o440 } };
  // The operator's Secret may hold other entries: only the key's is mounted, under the name Besu reads.
  return {
    name: 'key',
    secret: { secretName: secret.name, defaultMode: 0o440, items: [{ key: secret.entry, path: POD_FILES.key }] },
  };
}

/** The StatefulSet's metadata, naming the operator's key Secret when the pod takes the key from one. */
function withKeySecretAnnotation<M extends { annotations?: Record<string, string> }>(
  meta: M,
  node: KubernetesNodeSettings,
): M {
  const secret = nodeKeySecret(node);
  if (!secret.operators) return meta;
  return { ...meta, annotations: { ...meta.annotations, [KEY_SECRET_ANNOTATION]: secret.name } };
}

export function statefulSetManifest<V = string>(
  description: NodeDescription<KubernetesNodeSettings>,
  checksum: string | V,
  config: PodConfig<V>,
) {
  const { node } = description;
  const passwordAuth = description.rpc.authentication?.method === 'password';
  const names = kubernetesNames(node.name);
  const hardware = node.network;
  // The start step. For a node whose key is the operator's Secret, the pod's init container checked it
  // (core/kubernetes/keyCheck.ts) and Besu reads the checked copy.
  const besu = {
    name: names.besuContainer,
    image: besuImage(node.releaseVersion, node.imageDigest),
    command: ['/bin/sh', `${POD_PATHS.configDir}/${POD_FILES.startScript}`],
    args: [POD_PATHS.besuBinary, description.files.paths.nodeKeyFile, `${POD_PATHS.configDir}/${POD_FILES.config}`],
    env: [
      { name: 'BESU_OPTS', value: description.jvmOptions },
      { name: MISSING_KEY_EXIT_VARIABLE, value: String(MISSING_KEY_EXIT_CODE) },
    ],
    ports: [
      { name: 'p2p-tcp', containerPort: node.p2pPort, protocol: 'TCP' },
      { name: 'p2p-udp', containerPort: node.p2pPort, protocol: 'UDP' },
      { name: 'rpc', containerPort: PORTS.rpcHttp, protocol: 'TCP' },
    ],
    resources: {
      requests: { cpu: String(hardware.minimumHardware.cpu), memory: `${hardware.minimumHardware.memoryGiB}Gi` },
      limits: { memory: `${hardware.podMemoryLimitGiB}Gi` },
    },
    startupProbe: {
      ...healthProbe('/liveness', PROBES.startupFailureThreshold),
      periodSeconds: PROBES.startupPeriodSeconds,
    },
    livenessProbe: healthProbe('/liveness', PROBES.livenessFailureThreshold),
    // Ready = has a peer and is in sync. The Service still routes p2p to a pod that is not ready
    // (publishNotReadyAddresses), or a node waiting for its first peer could never get one.
    readinessProbe: healthProbe(
      `/readiness?minPeers=1&maxBlocksBehind=${MAX_BLOCKS_BEHIND}`,
      PROBES.readinessFailureThreshold,
    ),
    volumeMounts: [
      { name: 'config', mountPath: POD_PATHS.configDir, readOnly: true },
      ...besuKeyMounts(node),
      ...(passwordAuth ? [{ name: 'rpc-auth', mountPath: POD_PATHS.rpcAuthDir, readOnly: true }] : []),
      { name: 'data', mountPath: POD_PATHS.dataDir },
      // The root filesystem is read-only; the JVM unpacks its native libraries (RocksDB) into /tmp.
      { name: 'besu-tmp', mountPath: '/tmp' },
    ],
    securityContext: RESTRICTED_CONTAINER,
  };
  const withProxy = description.proxyServers.length > 0;
  const containers = [
    besu,
    metricsRelayContainer(node, besu.image),
    ...(withProxy ? [proxyContainer(node)] : []),
    ...companionContainers(node, description.companions),
  ];
  const stateInit = companionStateInit(node, besu.image, description.companions);
  const beforeChange = beforeReleaseChangeInit(node, POD_PATHS.configDir);
  const volumes = [
    ...configVolumes(config),
    keyVolume(node),
    ...keyCheckVolumes(node),
    ...(passwordAuth ? [{ name: 'rpc-auth', secret: { secretName: names.rpcAuthSecret, defaultMode: 0o440 } }] : []),
    { name: 'data', persistentVolumeClaim: { claimName: names.dataVolume } },
    { name: 'besu-tmp', emptyDir: {} },
    METRICS_RELAY_VOLUME,
    ...beforeChange.volumes,
    ...(withProxy
      ? [
          { name: 'proxy-run', emptyDir: {} },
          { name: 'proxy-tmp', emptyDir: {} },
        ]
      : []),
    ...companionVolumes(description.companions),
  ];
  return {
    apiVersion: 'apps/v1' as const,
    kind: 'StatefulSet' as const,
    metadata: withKeySecretAnnotation(metadata(node, names.statefulSet), node),
    spec: {
      replicas: 1,
      serviceName: names.service,
      selector: { matchLabels: selectorLabels(node) },
      updateStrategy: { type: 'RollingUpdate' },
      template: {
        metadata: {
          labels: podLabels(node),
          annotations: {
            'lacchain.net/config-checksum': checksum,
            ...overrideAnnotations(node),
            ...scrapeAnnotations(node),
          },
        },
        spec: {
          // Pinned to one worker, so the node's egress IP (part of its permissioned identity) never changes.
          nodeName: node.workerName,
          securityContext: BESU_POD_SECURITY,
          // Nothing in the pod talks to the Kubernetes API.
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: POD_STOP_GRACE_SECONDS,
          // The config check first: every other container reads the checked copy of the config (configCheck.ts).
          initContainers: [
            configCheckInit(node, besu.image, config),
            beforeChange.container,
            ...keyCheckInit(node, besu.image),
            ...stateInit,
          ],
          containers,
          volumes,
        },
      },
    },
  };
}

function proxyContainer(node: KubernetesNodeSettings) {
  return {
    name: kubernetesNames(node.name).proxyContainer,
    image: proxyImage(node.proxyImageDigest),
    // OpenResty, as a user without privileges on a read-only root filesystem (see PROXY_RUNTIME).
    command: [...PROXY_RUNTIME.command],
    ports: [{ name: 'proxy', containerPort: PROXY_CONTAINER_PORT, protocol: 'TCP' }],
    resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { memory: '128Mi' } },
    volumeMounts: [
      {
        name: 'config',
        mountPath: PROXY_RUNTIME.serverFile,
        subPath: POD_FILES.proxyConfig,
        readOnly: true,
      },
      { name: 'proxy-run', mountPath: PROXY_RUNTIME.runDir },
      { name: 'proxy-tmp', mountPath: PROXY_RUNTIME.tmpDir },
    ],
    securityContext: {
      runAsUser: PROXY_RUNTIME.uid,
      runAsGroup: PROXY_RUNTIME.uid,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
  };
}

/**
 * The LoadBalancer Service on the node's static public IP, as its cloud reads it (core/kubernetes/loadBalancer.ts),
 * annotated with the node's identity. Its RPC ports follow
 * `lacchain:rpc.exposure`: public → 4545 and the writer's 80; tls-only → the writer's 80 only (TLS in front of it
 * is the operator's ingress); internal → none (p2p only).
 */
export function serviceManifest<V>(
  description: NodeDescription<KubernetesNodeSettings>,
  identity: { enode: V; address: V },
) {
  const { node, reachable } = description;
  const names = kubernetesNames(node.name);
  const ports = [
    { name: 'p2p-tcp', port: node.p2pPort, targetPort: 'p2p-tcp', protocol: 'TCP' },
    { name: 'p2p-udp', port: node.p2pPort, targetPort: 'p2p-udp', protocol: 'UDP' },
    ...(reachable.rpc ? [{ name: 'rpc', port: PORTS.rpcHttp, targetPort: 'rpc', protocol: 'TCP' }] : []),
    ...(reachable.proxyHttp
      ? [{ name: 'proxy', port: PORTS.reverseProxyHttp, targetPort: 'proxy', protocol: 'TCP' }]
      : []),
  ];
  const cloud = loadBalancerFields(node);
  return {
    apiVersion: 'v1' as const,
    kind: 'Service' as const,
    metadata: {
      ...metadata(node, names.service),
      annotations: {
        ...overrideAnnotations(node),
        ...cloud.annotations,
        [IDENTITY_ANNOTATIONS.enode]: identity.enode,
        [IDENTITY_ANNOTATIONS.address]: identity.address,
      },
    },
    spec: {
      type: 'LoadBalancer',
      ...(cloud.loadBalancerIP !== undefined ? { loadBalancerIP: cloud.loadBalancerIP } : {}),
      // Keep the peers' source addresses: on-chain node permissioning checks them.
      externalTrafficPolicy: 'Local',
      publishNotReadyAddresses: true,
      selector: selectorLabels(node),
      ports,
    },
  };
}

/**
 * The URL of the node's JSON-RPC: 4545 on its public IP (exposure public), the writer's proxy on 80 (tls-only), or
 * else 127.0.0.1:4545, reached through `kubectl port-forward pod/<pod> 4545`.
 */
export function kubernetesRpcUrl(node: KubernetesNodeSettings): string {
  const reachable = reachablePorts(node, node.rpc);
  if (reachable.rpc) return `http://${node.publicIP}:${PORTS.rpcHttp}`;
  if (reachable.proxyHttp) return `http://${node.publicIP}:${PORTS.reverseProxyHttp}`;
  return `http://${LOOPBACK}:${PORTS.rpcHttp}`;
}

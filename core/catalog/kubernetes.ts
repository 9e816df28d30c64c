/**
 * Kubernetes facts: object names (the reference Helm chart's), mount paths, labels, images and annotations.
 */
import { BESU_FILES } from './besu';

/** Prefix of the reference chart's object names: the pod is `besu-node-<node>-0`. */
export const CHART_PREFIX = 'besu-node';

/** How long a node's pod is given to stop when it is deleted (SIGTERM, then SIGKILL): Besu closes its database. */
export const POD_STOP_GRACE_SECONDS = 60;

/**
 * Names of a node's objects, from the node's name in the stack (what the reference chart calls its Helm release
 * name; here "release" always means a Besu release).
 */
export function kubernetesNames(node: string) {
  const base = `${CHART_PREFIX}-${node}`;
  return {
    statefulSet: base,
    service: base,
    /** The one pod of the StatefulSet. */
    pod: `${base}-0`,
    /** The prefix of the node's ConfigMaps, each named by its content (`<prefix>-<digest>`). */
    configMap: `${base}-config`,
    keySecret: `${base}-key`,
    /** The RPC credentials file (password authentication), apart from the kept key Secret. */
    rpcAuthSecret: `${base}-rpc-auth`,
    dataVolume: `${base}-data`,
    /** The Besu container (the reference's `<node>-besu`). */
    besuContainer: `${node}-besu`,
    /** The writer's reverse proxy container. */
    proxyContainer: `${node}-nginx`,
    /** The metrics relay's container: Besu's metrics to the network's gateway and the operator's scraper. */
    metricsRelayContainer: `${node}-metrics-relay`,
    /** The ClusterIP Service naming the pod's metrics port, for a ServiceMonitor. */
    metricsService: `${base}-metrics`,
    /** The ServiceMonitor and PrometheusRule of the node (with the Prometheus Operator). */
    monitoring: base,
    /** The NetworkPolicy admitting only what `lacchain:rpc.exposure` promises to the pod. */
    networkPolicy: base,
    /** A companion service's container (`<node>-relay-signer`, `<node>-rotation-validator`). */
    companionContainer: (companion: string) => `${node}-${companion}`,
  };
}

/** Where a companion container works: an empty folder holding its config.toml (from the ConfigMap) and its log. */
export const COMPANION_POD_DIR = '/var/lib/lacchain-companion';

/**
 * The folder of the node's data volume that keeps a companion's own state across restarts and redeploys (the
 * monitoring client's registration): `lacchain-companions/<companion>`, beside Besu's database.
 */
export function companionStateFolder(companion: string): string {
  return `lacchain-companions/${companion}`;
}

/** The ConfigMap entry of a companion's config.toml: `<companion>.toml`. */
export function companionConfigEntry(companion: string): string {
  return `${companion}.toml`;
}

/** Where things are inside the Besu container. */
export const POD_PATHS = {
  /**
   * The pod's checked copy of its ConfigMap (config.toml, genesis.json, the start script, the proxy config…), which
   * every container reads (core/kubernetes/configCheck.ts).
   */
  configDir: '/etc/besu/config',
  /** The node's ConfigMap itself, read by the config check alone. */
  configSourceDir: '/etc/besu/config-source',
  /**
   * Secret: the node key. With key custody `secret`, a memory volume holding the key that passed the key check
   * (core/kubernetes/keyCheck.ts), and the operator's Secret is mounted at `secretKeyDir` for the check alone.
   */
  keyDir: '/etc/besu/key',
  /** Key custody `secret`: the operator's Secret, read by the key check alone. */
  secretKeyDir: '/etc/besu/secret-key',
  /** Secret: the RPC credentials file. */
  rpcAuthDir: '/etc/besu/rpc-auth',
  /** The data volume. */
  dataDir: '/data',
  /** The Besu launcher inside the official image. */
  besuBinary: '/opt/besu/bin/besu',
} as const;

/** File names inside the ConfigMap and Secret. */
export const POD_FILES = {
  config: BESU_FILES.config,
  genesis: BESU_FILES.genesis,
  startScript: 'start-node.sh',
  proxyConfig: 'nginx.conf',
  key: BESU_FILES.key,
  /** The pod's metrics relay (scripts/metrics-relay.java), run by Java's source launcher. */
  metricsRelay: 'metrics-relay.java',
} as const;

/**
 * The writer's reverse proxy image: OpenResty (nginx with its Lua module and cjson built in, which the gas model's
 * routing needs), the official Alpine image. It listens on a high port (the Service maps port 80 to it).
 */
export const PROXY_IMAGE = 'openresty/openresty:1.27.1.2-alpine';

/** The proxy's image reference, pinned by the registry's digest when given (`…:1.27.1.2-alpine@sha256:…`). */
export function proxyImage(digest?: string): string {
  return `${PROXY_IMAGE}${digest ? `@${digest}` : ''}`;
}

/**
 * How the proxy runs as a user without privileges on a read-only root filesystem. The image's own main
 * configuration (`/usr/local/openresty/nginx/conf/nginx.conf`) includes the server file from `serverFile`, keeps its
 * temporary files in `runDir`, and logs to the container's output (its log files are links to /dev/stdout and
 * /dev/stderr); only the pid file would be written in the image, so the command puts it in /tmp (an emptyDir, as is
 * `runDir`).
 */
export const PROXY_RUNTIME = {
  /** The image's own user `nobody`: OpenResty needs no user of its own when it does not start as root. */
  uid: 65534,
  command: ['/usr/local/openresty/bin/openresty', '-g', 'daemon off; pid /tmp/nginx.pid;'],
  /** The server file (the ConfigMap's POD_FILES.proxyConfig), in place of the image's default server on port 80. */
  serverFile: '/etc/nginx/conf.d/default.conf',
  /** Where the image's configuration keeps request bodies and proxy buffers that do not fit in memory. */
  runDir: '/var/run/openresty',
  tmpDir: '/tmp',
} as const;
/** The port the proxy listens on inside the pod. */
export const PROXY_CONTAINER_PORT = 8080;

/** The `prometheus.io/*` pod annotations conventional scrape jobs read (core/kubernetes/monitoring.ts). */
export const SCRAPE_ANNOTATIONS = {
  scrape: 'prometheus.io/scrape',
  port: 'prometheus.io/port',
  path: 'prometheus.io/path',
} as const;

/** The pod's label naming the stack it belongs to (a scrape job by annotations reads it). */
export const STACK_LABEL = 'lacchain.net/stack';

/** The ConfigMap's annotation giving the digest of its files, which its name begins (core/kubernetes/configCheck.ts). */
export const CONFIG_DIGEST_ANNOTATION = 'lacchain.net/config-digest';

/** Annotations on the node's Service naming its identity, for the day-2 checks and for people reading the cluster. */
export const IDENTITY_ANNOTATIONS = { enode: 'lacchain.net/enode', address: 'lacchain.net/address' } as const;

/**
 * The StatefulSet's annotation naming the operator's Secret its pod takes the node key from (key custody `secret`),
 * so that the policy pack knows which containers receive the key.
 */
export const KEY_SECRET_ANNOTATION = 'lacchain.net/key-secret';

/** The recommended Kubernetes label keys the node's objects carry (and a scrape job by annotations reads). */
export const LABEL_KEYS = {
  name: 'app.kubernetes.io/name',
  instance: 'app.kubernetes.io/instance',
  partOf: 'app.kubernetes.io/part-of',
} as const;

/** The recommended labels' values that do not depend on the node. */
export const LABELS = {
  name: 'besu',
  partOf: 'lacchain',
  managedBy: 'pulumi',
} as const;

/**
 * The Pod Security Standard the node's namespace enforces (Kubernetes' built-in Pod Security admission): `restricted`,
 * the hardened profile the node's pod is written to (non-root, no privilege escalation, every capability dropped, the
 * runtime's seccomp profile, no host paths), so a pod that loses any of it is refused by the cluster itself. Also
 * warned about and audited at the same level.
 */
export const POD_SECURITY_LABELS = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/audit': 'restricted',
} as const;

/**
 * Health probes: timing. The node may take minutes to open its database on start: the startup probe allows it 600 s
 * (300 × 2 s), asked every 2 s so that a pod that started is seen started, and its readiness and liveness probed, within
 * 2 s of Besu answering, not up to 10 s later (every restart, release change, restore and config roll waited for it).
 */
export const PROBES = {
  startupPeriodSeconds: 2,
  startupFailureThreshold: 300,
  periodSeconds: 20,
  timeoutSeconds: 5,
  livenessFailureThreshold: 6,
  readinessFailureThreshold: 3,
} as const;

/**
 * Where a node's metrics go. The networks expect every node to push its metrics to their gateway (job = the node's
 * name, every 5 s, as Besu's own push does: POST, and DELETE when it stops); Besu cannot push and serve `/metrics` at
 * once. On both paths Besu serves them on the loopback and the node's metrics relay pushes the same series to the
 * gateway: on a machine it also writes the machine's own (free space, companions' state) beside them; in a pod it also
 * serves them on the pod's metrics port, for the operator's in-cluster Prometheus.
 */
import { LOOPBACK } from './ports';

export const METRICS = {
  /** Besu's metrics server (`metrics-port`). */
  besuPort: 9545,
  /** Besu's metrics server on a machine: the loopback only. */
  besuHost: LOOPBACK,
  /** How often the relay pushes, in seconds (the networks' `metrics-push-interval`). */
  pushIntervalSeconds: 5,
  /** The relay's name: its unit is `<service>-metrics-relay`. */
  relayName: 'metrics-relay',
  /** A machine's metrics endpoint for the operator's Prometheus (TLS, bearer token), with `lacchain:metricsToken`. */
  endpointPort: 9443,
  /** Where it serves Besu's series, and the machine's. */
  besuPath: '/metrics',
  machinePath: '/metrics/machine',
  /** The pod's metrics port (`metrics`): the pod's relay serves Besu's series there to the scraper the operator names. */
  podPort: 9546,
  /**
   * The relays' own series, beside Besu's (a pod's) or the machine's (a machine's): when the network's gateway last
   * took a push, Unix seconds (0 before the first). The alert on a failing push reads it.
   */
  lastPushSeries: 'lacchain_metrics_relay_last_push_timestamp_seconds',
  /** The pod's metrics port's name. */
  podPortName: 'metrics',
  /** How the pod's relay runs in Besu's image: Java's source launcher, small heap, no perf data file. */
  podRelayJavaOptions: ['-Xmx48m', '-Xss512k', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-XX:-UsePerfData'],
} as const;

/** The systemd states node_exporter's systemd collector reports, each a series of `node_systemd_unit_state`. */
export const UNIT_STATES = ['active', 'activating', 'deactivating', 'inactive', 'failed'] as const;

/**
 * Where `npm run monitoring` writes a stack's files unless told (`~` is the home folder): outside any repository.
 * (Here, with the file names, so that the tool's help reads them without the writer: core/monitoring/stackScrape.ts.)
 */
export const DEFAULT_MONITORING_FOLDER = '~/.lacchain-besu-node/monitoring';
/** The files it writes, in the folder. */
export const STACK_MONITORING_FILES = {
  machines: 'prometheus.yml',
  cluster: 'prometheus-kubernetes.yml',
  rules: 'alerts.yml',
  /** The bearer token's file, unless the operator names another. */
  token: 'metrics-token',
} as const;

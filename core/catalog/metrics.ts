/**
 * Where a node's metrics go. The networks expect every node to push its metrics to their gateway (job = the node's
 * name, every 5 s, as Besu's own push does: POST, and DELETE when it stops); Besu cannot push and serve `/metrics` at
 * once. On a machine Besu serves them on the loopback and the node's metrics relay pushes the same series to the
 * gateway, and writes the machine's own (free space, companions' state) beside them.
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
} as const;

/** The systemd states node_exporter's systemd collector reports, each a series of `node_systemd_unit_state`. */
export const UNIT_STATES = ['active', 'activating', 'deactivating', 'inactive', 'failed'] as const;

/**
 * The node's metrics relay on a machine (scripts/metrics-relay.sh): Besu serves its metrics on the loopback, and the
 * relay pushes them to the network's gateway as Besu's own push would, and writes the machine's series beside them.
 * A systemd unit started and stopped with Besu, run as the service user.
 */
import { METRICS, UNIT_STATES } from '../catalog/metrics';
import { metricsPushUrl } from '../node/metrics';
import type { SshNodeSettings } from '../settings/model';
import { companionServiceName } from './companionService';
import { nodePaths } from './paths';

/** Where the relay and what it writes live. */
export function metricsRelayPaths(node: SshNodeSettings) {
  const runtimeDir = `${node.serviceName}-metrics`;
  return {
    service: companionServiceName(node, METRICS.relayName),
    script: `${nodePaths(node).binDir}/${METRICS.relayName}`,
    /** systemd's runtime folder of the relay (under /run), readable by the proxy. */
    runtimeDir,
    /** The machine's series, in Prometheus' text format. */
    machineFile: `/run/${runtimeDir}/machine.prom`,
  };
}

/**
 * The metrics endpoint's token check: an nginx file the node-key step writes (root's, 0600: it holds the token) that
 * the endpoint's server includes, answering 401 to a request without `Authorization: Bearer <token>`.
 */
export function metricsTokenCheckFile(node: SshNodeSettings): string {
  return `/etc/nginx/lacchain-${node.serviceName}-metrics-token.conf`;
}

/** The relay's systemd unit: after Besu, stopped and restarted with it, wanted by it. */
export function metricsRelayUnit(node: SshNodeSettings, serviceUser: string): string {
  const paths = metricsRelayPaths(node);
  const units = [node.serviceName, ...node.companions.map((c) => companionServiceName(node, c.name))];
  return [
    '# Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.',
    '[Unit]',
    `Description=The metrics relay of Besu node ${node.nodeName} (${node.network.name}): its metrics to the network's gateway`,
    `After=${node.serviceName}.service`,
    `PartOf=${node.serviceName}.service`,
    '',
    '[Service]',
    'Type=simple',
    `User=${serviceUser}`,
    `RuntimeDirectory=${paths.runtimeDir}`,
    'RuntimeDirectoryMode=0755',
    `Environment=BESU_METRICS_URL=http://${METRICS.besuHost}:${METRICS.besuPort}${METRICS.besuPath}`,
    `Environment=PUSH_URL=${metricsPushUrl(node)}`,
    `Environment=INTERVAL=${METRICS.pushIntervalSeconds}`,
    `Environment=DATA_DIR=${nodePaths(node).dataDir}`,
    `Environment=MACHINE_FILE=${paths.machineFile}`,
    `Environment="UNITS=${units.join(' ')}"`,
    `Environment="UNIT_STATES=${UNIT_STATES.join(' ')}"`,
    `Environment=LAST_PUSH_SERIES=${METRICS.lastPushSeries}`,
    `ExecStart=${paths.script}`,
    'Restart=always',
    'RestartSec=5',
    '',
    '[Install]',
    `WantedBy=${node.serviceName}.service`,
    '',
  ].join('\n');
}

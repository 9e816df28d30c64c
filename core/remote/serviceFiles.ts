/**
 * The files that make a remote node a service: the systemd unit and the info log's rotation.
 */
import { BESU_JVM_OPTIONS, javaMajorFor } from '../catalog/besu';
import { pinnedJavaHome } from '../catalog/java';
import { LOG_ROTATION, MISSING_KEY_ENVIRONMENT, MISSING_KEY_EXIT_CODE, NODE_HOME_LAYOUT } from '../catalog/remote';
import type { SshNodeSettings } from '../settings/model';
import { nodePaths } from './paths';

/** The systemd unit: restart on failure (not when the key is missing), enabled at boot. */
export function systemdUnit(node: SshNodeSettings, serviceUser: string): string {
  const paths = nodePaths(node);
  return [
    '# Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.',
    '[Unit]',
    `Description=Hyperledger Besu node ${node.nodeName} (${node.typenode} on ${node.network.name})`,
    'Documentation=https://besu.hyperledger.org',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `User=${serviceUser}`,
    `WorkingDirectory=${node.nodeHome}`,
    `Environment=BESU_OPTS=${BESU_JVM_OPTIONS}`,
    `Environment=${MISSING_KEY_ENVIRONMENT}`,
    `Environment=LACCHAIN_JAVA_HOME=${pinnedJavaHome(javaMajorFor(node.releaseVersion))}`,
    `ExecStart=${paths.launcher} ${paths.besuBinary} ${paths.key} ${paths.config} ${paths.infoLog}`,
    'Restart=on-failure',
    'RestartSec=5',
    `RestartPreventExitStatus=${MISSING_KEY_EXIT_CODE}`,
    'TimeoutStopSec=60',
    'LimitNOFILE=65536',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** logrotate: the info log rolls at 10 MB, 30 kept, truncated in place (Besu keeps the file open). */
export function logrotateConf(node: SshNodeSettings, serviceUser: string): string {
  return logrotateFor(`${node.nodeHome}/${NODE_HOME_LAYOUT.logsDir}/*.log`, serviceUser);
}

/** A logrotate file for the logs matching `pattern`, rotated as the service user (never following its symlinks). */
export function logrotateFor(pattern: string, serviceUser: string): string {
  return [
    '# Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.',
    `${pattern} {`,
    `    su ${serviceUser} ${serviceUser}`,
    `    size ${LOG_ROTATION.size}`,
    `    rotate ${LOG_ROTATION.keep}`,
    '    missingok',
    '    notifempty',
    '    compress',
    '    delaycompress',
    '    copytruncate',
    '}',
    '',
  ].join('\n');
}

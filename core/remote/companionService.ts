/**
 * A companion service on a remote machine: where its files are, its systemd unit (started with Besu's service,
 * stopped and restarted with it, sandboxed so that it can write only its own log and talk to the loopback only) and
 * the rotation of its log.
 */
import { MISSING_KEY_EXIT_CODE, NODE_HOME_LAYOUT } from '../catalog/remote';
import type { CompanionDescription } from '../node/companions';
import type { SshNodeSettings } from '../settings/model';
import { nodePaths } from './paths';
import { logrotateFor } from './serviceFiles';

/** The folders and files of one companion under the node home (scripts/remote/companions.sh lays them out). */
function companionPaths(node: SshNodeSettings, companion: CompanionDescription) {
  const dir = `${node.nodeHome}/${NODE_HOME_LAYOUT.companionsDir}/${companion.settings.name}`;
  return {
    dir,
    logDir: `${dir}/${companion.logDir}`,
    /** The executable of the release in use, through the `current` link. */
    executable: `${dir}/releases/current/${companion.executable}`,
  };
}

/** The systemd service name of a companion: `<node service>-<companion>` (scripts/remote/companions.sh names it so). */
export function companionServiceName(node: SshNodeSettings, companion: string): string {
  return `${node.serviceName}-${companion}`;
}

/** The systemd unit of a companion service. */
export function companionUnit(node: SshNodeSettings, companion: CompanionDescription, serviceUser: string): string {
  const paths = companionPaths(node, companion);
  const launcher = `${node.nodeHome}/${NODE_HOME_LAYOUT.companionLauncher}`;
  const key = companion.keyVariable ? ` ${companion.keyVariable} ${nodePaths(node).key}` : '';
  const besu = `${node.serviceName}.service`;
  return [
    '# Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.',
    '[Unit]',
    `Description=The ${companion.settings.name} of Besu node ${node.nodeName} (${node.network.name})`,
    // Started after Besu, stopped and restarted with it.
    `After=${besu}`,
    `PartOf=${besu}`,
    '',
    '[Service]',
    'Type=simple',
    `User=${serviceUser}`,
    `WorkingDirectory=${paths.dir}`,
    `ExecStart=${launcher} ${paths.executable}${key}`,
    'Restart=on-failure',
    `RestartSec=${companion.restartSeconds}`,
    `RestartPreventExitStatus=${MISSING_KEY_EXIT_CODE}`,
    // Unprivileged and read-only: it may write its own log only (so the node key is read-only to it), and reach and
    // be reached on the loopback only (the writer's proxy is the relay signer's one way in).
    'NoNewPrivileges=yes',
    'UMask=0077',
    'ProtectSystem=strict',
    'ProtectHome=yes',
    'PrivateTmp=yes',
    'PrivateDevices=yes',
    `ReadWritePaths=${paths.logDir}`,
    'IPAddressDeny=any',
    'IPAddressAllow=localhost',
    '',
    '[Install]',
    `WantedBy=${besu}`,
    '',
  ].join('\n');
}

/** logrotate for the companions' own logs: the same rolls as Besu's info log. */
export function companionsLogrotate(node: SshNodeSettings, serviceUser: string): string {
  return logrotateFor(`${node.nodeHome}/${NODE_HOME_LAYOUT.companionsDir}/*/log/*.log`, serviceUser);
}

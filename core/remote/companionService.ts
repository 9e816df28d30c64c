/**
 * A companion service on a remote machine: where its files are, its systemd unit (started with Besu's service,
 * stopped and restarted with it; a released one sandboxed so that it can write only its own log and talk to the
 * loopback only, a container one run by podman as a system user of its own), the nftables fences of the loopback
 * ports (the relay signer's, Besu's WebSocket) and the rotation of the released ones' logs.
 */
import { PORTS } from '../catalog/ports';
import {
  CONTAINER_RUNTIME,
  MISSING_KEY_ENVIRONMENT,
  MISSING_KEY_EXIT_CODE,
  NODE_HOME_LAYOUT,
  PACKET_FILTER,
  PROXY_WORKER_USER,
} from '../catalog/remote';
import type {
  CompanionDescription,
  ContainerCompanionDescription,
  ReleasedCompanionDescription,
} from '../node/companions';
import type { SshNodeSettings } from '../settings/model';
import { nodePaths } from './paths';
import { logrotateFor } from './serviceFiles';

/** A companion's folder under the node home. */
function companionDir(node: SshNodeSettings, companion: CompanionDescription): string {
  return `${nodePaths(node).companionsDir}/${companion.settings.name}`;
}

/** The state folder of a container companion (its registration, kept across redeploys). */
export function containerStateDir(node: SshNodeSettings, companion: ContainerCompanionDescription): string {
  return `${companionDir(node, companion)}/${NODE_HOME_LAYOUT.companionStateDir}`;
}

/** The folders and files of one released companion under the node home (scripts/remote/companions.sh lays them out). */
export function companionPaths(node: SshNodeSettings, companion: ReleasedCompanionDescription) {
  const dir = companionDir(node, companion);
  const releasesDir = `${dir}/${NODE_HOME_LAYOUT.companionReleasesDir}`;
  return {
    dir,
    logDir: `${dir}/${companion.logDir}`,
    configFile: `${dir}/${companion.configFile}`,
    releasesDir,
    /** The executable of the release in use, through the `current` link. */
    executable: `${releasesDir}/current/${companion.executable}`,
    /** The nftables rules that fence its port to the loopback, for one that listens. */
    fence: `${dir}/${NODE_HOME_LAYOUT.companionFence}`,
  };
}

/**
 * The nftables rules that fence a listening companion's port (the relay signer's) to the loopback and to the proxy: a
 * table of its own that refuses TCP to the port (with a reset) at any address but the loopback's, IPv4 and IPv6, as if
 * it listened on the loopback only (so the machine's own addresses are refused too, which lets the companions step
 * check the fence from the machine), and, on the loopback, from any local user but root and nginx's workers (the
 * writer's proxy, its one way in): not Besu's user, not the monitoring client's. Loaded in one transaction that first
 * replaces the table, so loading it again changes nothing.
 */
export function companionFence(node: SshNodeSettings, companion: ReleasedCompanionDescription): string | undefined {
  if (companion.port === undefined) return undefined;
  return fenceTable(node, companion.settings.name, `the ${companion.settings.name} answers on the loopback only`, [
    '  chain input {',
    '    type filter hook input priority filter - 10; policy accept;',
    `    tcp dport ${companion.port} ip daddr != 127.0.0.0/8 reject with tcp reset`,
    `    tcp dport ${companion.port} ip6 daddr != ::1 reject with tcp reset`,
    '  }',
    ...onlyUsers(companion.port, ['root', PROXY_WORKER_USER]),
  ]);
}

/**
 * The nftables rules that let only the companions reach Besu's WebSocket on the loopback (it has no authentication,
 * and the companions could not send any: see core/besu/configToml.ts): root, Besu's user (the relay signer, the
 * rotation client) and each container companion's own user (the monitoring client). Every companion's service loads
 * them before it starts, so they are in force whenever Besu serves its WebSocket (only for its companions).
 */
export function webSocketFence(
  node: SshNodeSettings,
  companions: readonly CompanionDescription[],
  serviceUser: string,
): string | undefined {
  if (companions.length === 0) return undefined;
  const users = ['root', serviceUser, ...companions.flatMap((c) => (c.kind === 'container' ? [c.systemUser] : []))];
  return fenceTable(node, 'websocket', "Besu's WebSocket answers its companions only", onlyUsers(PORTS.rpcWs, users));
}

/** An output chain refusing TCP to a port (with a reset) from every local user but the ones named. */
function onlyUsers(port: number, users: readonly string[]): string[] {
  return [
    '  chain output {',
    '    type filter hook output priority filter - 10; policy accept;',
    `    tcp dport ${port} meta skuid != { ${[...new Set(users)].join(', ')} } reject with tcp reset`,
    '  }',
  ];
}

/** A fence's nftables file: its table `lacchain_<service>_<what>` replaced in one transaction by the chains given. */
function fenceTable(node: SshNodeSettings, what: string, purpose: string, chains: string[]): string {
  const table = `lacchain_${companionServiceName(node, what)}`.replace(/-/g, '_');
  return [
    `# Written by the lacchain-besu-node Pulumi program: on node ${node.nodeName}, ${purpose}.`,
    `table inet ${table}`,
    `delete table inet ${table}`,
    `table inet ${table} {`,
    ...chains,
    '}',
    '',
  ].join('\n');
}

/** The path of the WebSocket fence's file on the machine. */
function webSocketFencePath(node: SshNodeSettings): string {
  return nodePaths(node).webSocketFence;
}

/** The ExecStartPre line that loads a fence as root (`+`) before the service starts; a failure stops the start. */
function loadFence(file: string): string {
  return `ExecStartPre=+${PACKET_FILTER.path} -f ${file}`;
}

/** The systemd service name of a companion: `<node service>-<companion>` (scripts/remote/companions.sh names it so). */
export function companionServiceName(node: SshNodeSettings, companion: string): string {
  return `${node.serviceName}-${companion}`;
}

/** The systemd unit of a companion service. */
export function companionUnit(node: SshNodeSettings, companion: CompanionDescription, serviceUser: string): string {
  return companion.kind === 'container' ? containerUnit(node, companion) : releasedUnit(node, companion, serviceUser);
}

/** The unit's [Unit] section: started after Besu, stopped and restarted with it. */
function unitSection(node: SshNodeSettings, companion: CompanionDescription): string[] {
  return [
    '# Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.',
    '[Unit]',
    `Description=The ${companion.settings.name} of Besu node ${node.nodeName} (${node.network.name})`,
    `After=${node.serviceName}.service`,
    `PartOf=${node.serviceName}.service`,
  ];
}

/** The unit's [Install] section: wanted by Besu's service. */
function installSection(node: SshNodeSettings): string[] {
  return ['[Install]', `WantedBy=${node.serviceName}.service`, ''];
}

/**
 * The unit of a companion run from its container image: podman runs it in the foreground through the launcher, which
 * drops it to its own system user (podman itself runs as root); a container left by a crash is removed after it
 * stops.
 */
function containerUnit(node: SshNodeSettings, companion: ContainerCompanionDescription): string {
  const name = companionServiceName(node, companion.settings.name);
  const launcher = nodePaths(node).containerCompanionLauncher;
  const state = containerStateDir(node, companion);
  const command = [
    launcher,
    name,
    companion.systemUser,
    state,
    companion.stateVariable,
    companion.stateMountPath,
    companion.image,
    companion.command,
    ...companion.args,
  ];
  return [
    ...unitSection(node, companion),
    '',
    '[Service]',
    'Type=simple',
    loadFence(webSocketFencePath(node)),
    `ExecStart=${command.map(systemdArgument).join(' ')}`,
    `ExecStopPost=-${CONTAINER_RUNTIME.path} rm --force --ignore ${name}`,
    // As the reference runs it (`--restart always`): it is meant to run for as long as the node does.
    'Restart=always',
    `RestartSec=${companion.restartSeconds}`,
    '',
    ...installSection(node),
  ].join('\n');
}

/**
 * One argument of a systemd command line: as it is when it is plain, else in double quotes; `%` and `$` doubled so
 * that systemd reads them literally (they start specifiers and variables).
 */
export function systemdArgument(value: string): string {
  const literal = value.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  if (/^[A-Za-z0-9@%$._:/+=,-]+$/.test(literal)) return literal;
  return `"${literal.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The unit of a released companion: its executable through the launcher, sandboxed to its log and the loopback. */
function releasedUnit(node: SshNodeSettings, companion: ReleasedCompanionDescription, serviceUser: string): string {
  const paths = companionPaths(node, companion);
  const launcher = nodePaths(node).companionLauncher;
  const key = companion.keyVariable ? ` ${companion.keyVariable} ${nodePaths(node).key}` : '';
  return [
    ...unitSection(node, companion),
    '',
    '[Service]',
    'Type=simple',
    `User=${serviceUser}`,
    `WorkingDirectory=${paths.dir}`,
    // Besu's WebSocket fenced to the companions, and its own port to the loopback and the proxy, by nftables before
    // it starts (as root), where systemd's own IP firewall below cannot (cgroup v1): without them it does not start.
    loadFence(webSocketFencePath(node)),
    ...(companion.port !== undefined ? [loadFence(paths.fence)] : []),
    `Environment=${MISSING_KEY_ENVIRONMENT}`,
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
    ...installSection(node),
  ].join('\n');
}

/** logrotate for the companions' own logs: the same rolls as Besu's info log. */
export function companionsLogrotate(node: SshNodeSettings, serviceUser: string): string {
  return logrotateFor(`${node.nodeHome}/${NODE_HOME_LAYOUT.companionsDir}/*/log/*.log`, serviceUser);
}

/**
 * The exact client commands of the day-2 operations, as argument lists: `kubectl` for a Kubernetes node (the seed's
 * commands, with the names the program created), `ssh` plus a remote shell command for an SSH node.
 */
import { MACHINE_MOVE_FILES } from '../catalog/move';
import { DEFAULT_SERVICE_USER, DEFAULT_SSH_PORT } from '../catalog/defaults';
import { kubernetesNames, POD_PATHS } from '../catalog/kubernetes';
import { diskUsageCommand } from './disk';
import { PORTS } from '../catalog/ports';
import { RPC_ANSWER_SECONDS } from '../catalog/rpc';
import { companionServiceName } from '../remote/companionService';
import { nodePaths } from '../remote/paths';
import { backupPaths } from '../remote/backups';
import { shellQuote } from '../remote/shell';
import type { KubernetesNodeSettings, SshNodeSettings } from '../settings/model';
import { rpcRequest } from './rpc';

/** How long kubectl waits for a recreated pod to be ready (`start`), or for a stopped one to be gone (seconds). */
const POD_WAIT_SECONDS = 300;
/** That wait as kubectl's --timeout. */
export const POD_READY_TIMEOUT = `${POD_WAIT_SECONDS}s`;
/** How long a client lets kubectl run such a wait: its own time-out and a little more, so kubectl says why it stopped. */
export const POD_WAIT_CLIENT_MS = (POD_WAIT_SECONDS + 30) * 1000;
/** Lines of the info log shown by `logs` and read by `check`. */
export const LOG_LINES = 100;
/** How much of the end of a node's log a day-2 command reads at most (the log lines shown are among them). */
const LOG_READ_BYTES = 1024 * 1024;
/** How much of data/enode is read at most: an enode is under 200 bytes. */
const ENODE_READ_BYTES = 512;
/** How long a read of a service user's file may take (a FIFO planted there would make it wait for ever). */
const SERVICE_FILE_READ_SECONDS = 10;
/** How long kubectl waits for the cluster's answer when an operation first looks at a node. */
export const REACH_TIMEOUT_SECONDS = 10;

/** kubectl argument lists for a Kubernetes node. */
export function kubectlCommands(node: KubernetesNodeSettings, context?: string) {
  const names = kubernetesNames(node.name);
  const ns = ['-n', node.namespace];
  const withContext = (args: string[]) => (context ? ['--context', context, ...args] : args);
  return {
    /**
     * Whether the node is deployed, and the cluster answers: its StatefulSet, read once before an operation. A raw GET
     * needs no discovery (which kubectl would retry five times, each logged, against a cluster that does not answer).
     */
    statefulSet: withContext([
      'get',
      '--raw',
      `/apis/apps/v1/namespaces/${node.namespace}/statefulsets/${names.statefulSet}`,
      `--request-timeout=${REACH_TIMEOUT_SECONDS}s`,
    ]),
    /** The seed's: stream the Besu container's log. */
    logs: withContext(['logs', names.pod, '-c', names.besuContainer, '-f', ...ns]),
    /** The recent log, for the check. */
    recentLog: withContext(['logs', names.pod, '-c', names.besuContainer, `--tail=${LOG_LINES * 2}`, ...ns]),
    /** Start and restart: delete the pod, the StatefulSet recreates it. */
    deletePod: withContext(['delete', 'pod', names.pod, ...ns]),
    /** Start and restart of a node without a pod (its StatefulSet scaled to 0): one replica again. */
    scaleUp: withContext(['scale', `statefulset/${names.statefulSet}`, '--replicas=1', ...ns]),
    waitReady: withContext([
      'wait',
      '--for=condition=Ready',
      `pod/${names.pod}`,
      ...ns,
      `--timeout=${POD_READY_TIMEOUT}`,
    ]),
    /**
     * The pod as JSON: its phase, its containers' readiness, Besu's image and start, its worker, all from one read
     * (core/operations/podAnswers.ts).
     */
    pod: withContext(['get', 'pod', names.pod, ...ns, '-o', 'json']),
    /** The data volume's size and free space, read in the Besu container. */
    diskUsage: withContext([
      'exec',
      names.pod,
      '-c',
      names.besuContainer,
      ...ns,
      '--',
      'sh',
      '-c',
      diskUsageCommand(POD_PATHS.dataDir),
    ]),
    /** A worker's addresses as `<type>=<address>` lines (ExternalIP, InternalIP, Hostname). */
    workerAddresses: (worker: string) =>
      withContext(['get', 'node', worker, '-o', 'jsonpath={range .status.addresses[*]}{.type}={.address}{"\\n"}{end}']),
    /** The pod's clock (epoch seconds with nanoseconds), read in the Besu container. */
    clock: withContext(['exec', names.pod, '-c', names.besuContainer, ...ns, '--', 'date', '+%s.%N']),
    /**
     * The node's Service as JSON: the enode recorded on it, the enode the node had before it moved into the cluster,
     * what the cloud gave it, all from one read (core/operations/serviceAnswers.ts).
     */
    service: withContext(['get', 'service', names.service, ...ns, '-o', 'json']),
  };
}

/** What `ssh` is given to reach a node: a private key file, extra options, and the pinned host key's file. */
export interface SshArgumentsInput {
  /** A private key file (ssh -i). */
  keyFile?: string;
  /** Extra ssh options (ssh -o), after the program's own. */
  options: readonly string[];
  /** A known_hosts file holding the node's pinned host key (inventory host_key), when it has one. */
  knownHostsFile?: string;
  /** The socket of the one connection every session of the command shares (ssh ControlPath), when it has one. */
  sharedConnection?: string;
}

/**
 * How often ssh asks a quiet connection whether the machine is still there (seconds): with SSH_ALIVE_COUNT_MAX, a
 * connection that died without a word (a network down, a machine gone) ends in about a minute, never a command (a
 * move's carry, a pipe with no time limit of its own) waiting on it for ever.
 */
export const SSH_ALIVE_INTERVAL_SECONDS = 15;
/** How many of those asks may go unanswered before ssh ends the connection (exit 255). */
export const SSH_ALIVE_COUNT_MAX = 4;

/** How long a shared connection outlives its last session when the command that made it could not close it. */
export const SHARED_CONNECTION_IDLE_SECONDS = 60;

/** A known_hosts line pinning `hostKey` for the machine at `host`:`port` (a port other than 22 in brackets). */
export function knownHostsLine(host: string, port: number, hostKey: string): string {
  return `${port === DEFAULT_SSH_PORT ? host : `[${host}]:${port}`} ${hostKey}\n`;
}

/**
 * The ssh options of every ssh the tools open to a node, before the destination: non-interactive, a dead connection
 * ended in about a minute (SSH_ALIVE_INTERVAL_SECONDS), forwarding nothing
 * (no agent, no ports, no X display, no Kerberos credentials), on the command's own connection or none shared; with a
 * pinned host key, that key
 * alone (no global known_hosts file, no KnownHostsCommand: nothing else on the operator's machine can vouch for another
 * key); without one (the operator's explicit inventory accept_any_host_key), no check at all.
 */
export function sshArguments(input: SshArgumentsInput): string[] {
  // Nothing of the operator's machine is handed to the node: no agent, no forwarded port, no X display, no tunnel,
  // no Kerberos credentials, whatever ~/.ssh/config says (ssh takes the first value given for an option, and these
  // come before the operator's own).
  const args = [
    '-o',
    'BatchMode=yes',
    '-o',
    'ConnectTimeout=15',
    '-o',
    `ServerAliveInterval=${SSH_ALIVE_INTERVAL_SECONDS}`,
    '-o',
    `ServerAliveCountMax=${SSH_ALIVE_COUNT_MAX}`,
    '-o',
    'ForwardAgent=no',
    '-o',
    'ClearAllForwardings=yes',
    ...['-o', 'ForwardX11=no', '-o', 'ForwardX11Trusted=no', '-o', 'Tunnel=no', '-o', 'GSSAPIDelegateCredentials=no'],
  ];
  if (input.keyFile) args.push('-i', input.keyFile);
  if (input.knownHostsFile) {
    args.push(
      '-o',
      `UserKnownHostsFile=${input.knownHostsFile}`,
      '-o',
      'GlobalKnownHostsFile=/dev/null',
      '-o',
      'KnownHostsCommand=none',
      '-o',
      'StrictHostKeyChecking=yes',
    );
  } else {
    args.push('-o', 'UserKnownHostsFile=/dev/null', '-o', 'StrictHostKeyChecking=no');
  }
  for (const option of input.options) args.push('-o', option);
  // One connection for all of a command's sessions (a check asks a dozen questions): a session over it takes
  // milliseconds, a new connection a handshake and a login each. After the operator's options, so theirs win.
  if (input.sharedConnection) {
    args.push(
      '-o',
      'ControlMaster=auto',
      '-o',
      `ControlPath=${input.sharedConnection}`,
      '-o',
      `ControlPersist=${SHARED_CONNECTION_IDLE_SECONDS}`,
    );
  } else {
    // A connection of its own: never a master connection of ~/.ssh/config's ControlPath (opened to another host key,
    // perhaps with the agent forwarded), which would carry this session whatever the options above say.
    args.push('-o', 'ControlMaster=no', '-o', 'ControlPath=none');
  }
  return args;
}

/** The ssh destination and the remote shell commands for an SSH node. */
export function sshCommands(node: SshNodeSettings) {
  const paths = nodePaths(node);
  const sudo = node.user === 'root' ? '' : 'sudo -n ';
  const service = shellQuote(node.serviceName);
  const backup = backupPaths(node).command;
  /**
   * A command run as the service user: its own files are read with its rights alone (docs/security.md, "What the
   * service user can write, and how root treats it"), so whatever it plants there (a symlink, a hard link) leads
   * nowhere it could not read itself.
   */
  const asServiceUser =
    node.user === 'root' ? `runuser -u ${DEFAULT_SERVICE_USER} -- ` : `sudo -n -u ${DEFAULT_SERVICE_USER} `;
  /** The end of the service user's log, as that user reads it: at most LOG_READ_BYTES, and never waiting on a FIFO. */
  const logEnd = `${asServiceUser}timeout ${SERVICE_FILE_READ_SECONDS} tail -c ${LOG_READ_BYTES} -- ${shellQuote(paths.infoLog)}`;
  return {
    destination: ['-p', String(node.sshPort), `${node.user}@${node.host}`],
    /** Whether the node's service is installed (`deployed` or `missing`), looked at once before an operation. */
    deployed: `if systemctl cat -- ${service} >/dev/null 2>&1; then echo deployed; else echo missing; fi`,
    serviceState: `systemctl is-active ${service}`,
    /** The state of each companion service, one line each, in the order of `node.companions`. */
    companionStates: node.companions
      .map((c) => `systemctl is-active ${shellQuote(companionServiceName(node, c.name))}`)
      .join('; '),
    start: `${sudo}systemctl start ${service}`,
    restart: `${sudo}systemctl restart ${service}`,
    logs: `${logEnd} | tail -n ${LOG_LINES}`,
    followLogs: `${asServiceUser}tail -n ${LOG_LINES} -F ${shellQuote(paths.infoLog)}`,
    recentLog: `${logEnd} | tail -n ${LOG_LINES * 2}`,
    /** The enode recorded in data/enode, as the service user reads it: no link followed, no FIFO waited on, bounded. */
    recordedEnode: `${asServiceUser}dd if=${shellQuote(paths.enode)} iflag=nofollow,nonblock bs=${ENODE_READ_BYTES} count=1 status=none`,
    /** The record of the node's move to this machine, once its data was restored (root's; `from-enode=`). */
    moveRecord: `${sudo}cat ${shellQuote(`${MACHINE_MOVE_FILES.movedIn(node.serviceName)}.taken-in`)}`,
    /** The release folder `releases/current` points at: the release in use. */
    releaseInUse: `${sudo}readlink ${shellQuote(`${paths.releasesDir}/current`)}`,
    /** The health gate's record of the last rollout that restarted the node (scripts/remote/gate.sh), root's. */
    rolloutRecord: `${sudo}cat ${shellQuote(paths.rolloutRecord)}`,
    clock: 'date +%s',
    /** The data's size and its filesystem's free space and size, read as root (the data folder is the service user's). */
    diskUsage: `${sudo}sh -c ${shellQuote(diskUsageCommand(paths.dataDir))}`,
    /** The node's backup command (installed by the backups step), as root. */
    backup: (reason: string) => `${sudo}${shellQuote(backup)} backup ${shellQuote(reason)}`,
    listBackups: `${sudo}${shellQuote(backup)} list`,
    /** The enode recorded in a backup (its data/enode). */
    backupEnode: (id: string) => `${sudo}${shellQuote(backup)} recorded-enode ${shellQuote(id)}`,
    /** Restores a backup; with the node key on standard input when the machine lost it. */
    restore: (id: string, release: string, head: number | undefined, keyOnInput: boolean) =>
      `${sudo}env KEY_FROM_STDIN=${keyOnInput} ${shellQuote(backup)} restore ${shellQuote(id)} ${shellQuote(release)} ${shellQuote(head === undefined ? '' : String(head))}`,
    /** Exits 0 when a release is unpacked on the machine. */
    releaseInstalled: (version: string) => `test -x ${shellQuote(`${paths.releasesDir}/besu-${version}/bin/besu`)}`,
    /** Where the RPC is asked on the machine, for messages. */
    rpcAddress: `http://127.0.0.1:${PORTS.rpcHttp}/ on ${node.host}`,
    rpc: (method: string, params: readonly unknown[] = []) =>
      `curl -s --max-time ${RPC_ANSWER_SECONDS} -H 'Host: localhost' -H 'Content-Type: application/json' --data ${shellQuote(rpcRequest(method, params))} http://127.0.0.1:${PORTS.rpcHttp}/`,
    /** When the service last started, epoch seconds (empty when it never did). */
    startedAt: `t=$(systemctl show -p ActiveEnterTimestamp --value ${service}); [ -n "$t" ] && date -d "$t" +%s`,
    /** The address the machine leaves from towards an address: the source of its route there. */
    egress: (towards: string) => `ip -o route get ${shellQuote(towards)}`,
    /** The machine's clock (epoch seconds with nanoseconds), then whether it says it is synchronised (yes or no). */
    clockState: 'date +%s.%N; timedatectl show -p NTPSynchronized --value 2>/dev/null || true',
  };
}

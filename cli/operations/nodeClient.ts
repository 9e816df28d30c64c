/**
 * One node seen from the operator's machine: the same questions asked through ssh (SSH node, here) or kubectl and the
 * node's RPC URL (Kubernetes node, clusterNodeClient.ts). Used by `npm run node`.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { knownHostsLine, sshArguments, sshCommands } from '../../core/operations/clients';
import { nodePaths } from '../../core/remote/paths';
import { withoutControlSequences } from '../../core/operations/terminalText';
import { rpcResult } from '../../core/operations/rpc';
import { parseDiskUsage } from '../../core/operations/disk';
import type { NodeSettings, SshNodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import { ANSWER_LIMITS } from '../../core/catalog/answers';
import { attachClient, streamClient, runClient } from './process';
import { parseResticSnapshots, STOPPED_WHILE_COPIED } from '../../core/operations/backups';
import type { BackupClient } from './backupClient';
import { RELEASE_ARCHIVE_SHA256, releaseUrl } from '../../core/catalog/besu';
import { remoteStep } from '../../core/remote/steps';
import { stepCommand, stepInput, stepScript } from '../../core/remote/shell';
import { lastMeaningfulLine, machineNotDeployed, machineUnreachable } from '../../core/operations/reach';
import { clusterNodeClient } from './clusterNodeClient';
import type { ClientContext, NodeClient } from './nodeClientTypes';
import { clockOffset } from './nodeClock';
import { gateRecordState } from '../../core/operations/rolloutState';
import { NodeUnreachable, whenClientMissing } from './nodeUnreachable';

/** The client of `node`: through ssh (here) or kubectl (clusterNodeClient.ts). */
export function nodeClient(node: NodeSettings, context: ClientContext): NodeClient {
  const restartHint = `npm run node -- restart --stack ${context.stack} --node ${node.name}`;
  return node.target === 'ssh' ? sshClient(node, context, restartHint) : clusterNodeClient(node, context, restartHint);
}

/** What is undone when the command ends, however it ends (process.exit included): one exit listener for all nodes. */
const AT_EXIT: Array<() => void> = [];

/** Runs `cleanup` when the command ends. */
function atExit(cleanup: () => void): void {
  if (AT_EXIT.length === 0) process.once('exit', () => AT_EXIT.splice(0).forEach((each) => each()));
  AT_EXIT.push(cleanup);
}

function sshClient(node: SshNodeSettings, context: ClientContext, restartHint: string): NodeClient {
  const options = context.ssh;
  const commands = sshCommands(node);
  if (!node.hostKey && !node.acceptAnyHostKey) {
    throw new ToolFailure(`node ${node.name}: no pinned SSH host key (inventory host_key): refusing to connect`);
  }
  // The command's own folder: the pinned host key's file and the shared connection's socket.
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-ssh-'));
  const sharedConnection = path.join(folder, 'connection');
  let knownHostsFile: string | undefined;
  if (node.hostKey) {
    // The pinned host key is the only one accepted, as in `pulumi up`.
    knownHostsFile = path.join(folder, 'known_hosts');
    fs.writeFileSync(knownHostsFile, knownHostsLine(node.host, node.sshPort, node.hostKey));
  } else {
    // The operator's explicit opt-out (test networks only), as in `pulumi up`: said every time.
    process.stderr.write(
      `warning: node ${node.name}: the SSH host key of ${node.host} is not checked (inventory accept_any_host_key)\n`,
    );
  }
  const args = sshArguments({ keyFile: options.keyFile, options: options.options, knownHostsFile, sharedConnection });
  // The shared connection is closed and the folder removed when the command ends, however it ends (process.exit too).
  atExit(() => {
    if (fs.existsSync(sharedConnection)) {
      spawnSync('ssh', [...args, '-O', 'exit', ...commands.destination], { stdio: 'ignore', timeout: 10_000 });
    }
    fs.rmSync(folder, { recursive: true, force: true });
  });
  const place = {
    node: node.name,
    stack: context.stack,
    destination: `${node.user}@${node.host}:${node.sshPort}`,
    serviceName: node.serviceName,
  };
  let first: Promise<unknown> | undefined;
  // Every read is bounded (ANSWER_LIMITS): `limit`, the most a command's answer may be.
  const ssh = async (command: string, input?: string, limit?: number) => {
    const session = () =>
      runClient('ssh', [...args, ...commands.destination, command], input, undefined, limit ?? ANSWER_LIMITS.client);
    // The first session makes the shared connection; the sessions asked meanwhile wait for it, so that only one does.
    const asked = first ? first.then(session) : session();
    first ??= asked.catch(() => undefined);
    const result = await asked;
    if (result.code === 255) throw new NodeUnreachable(machineUnreachable(place, result.stderr));
    return result;
  };
  return {
    where: `${place.destination}, service ${node.serviceName}`,
    async reach() {
      const result = await ssh(commands.deployed).catch(whenClientMissing(node.name, 'ssh'));
      if (result.stdout.trim() === 'missing') throw new NodeUnreachable(machineNotDeployed(place));
    },
    async serviceState() {
      const state = (await ssh(commands.serviceState)).stdout.trim();
      return { running: state === 'active', detail: state === 'active' ? 'started' : state || 'unknown' };
    },
    async companionStates() {
      if (node.companions.length === 0) return [];
      const states = (await ssh(commands.companionStates)).stdout.trim().split('\n');
      return node.companions.map((c, i) => {
        const state = states[i]?.trim() || 'unknown';
        return { name: c.name, running: state === 'active', detail: state === 'active' ? 'started' : state };
      });
    },
    async rpc(method, params) {
      const result = await ssh(commands.rpc(method, params), undefined, ANSWER_LIMITS.rpc);
      if (result.code !== 0) {
        throw new Error(`${method}: no answer from ${commands.rpcAddress} (curl exit ${result.code})`);
      }
      return rpcResult(method, result.stdout, commands.rpcAddress);
    },
    async releaseInUse() {
      const result = await ssh(commands.releaseInUse);
      const folder = path.basename(result.stdout.trim());
      return result.code === 0 && folder
        ? `${folder.replace(/^besu-/, '')} (the release in use, releases/${folder})`
        : undefined;
    },
    async recordedEnode() {
      const result = await ssh(commands.recordedEnode, undefined, ANSWER_LIMITS.enode);
      return result.code === 0 ? result.stdout.trim() || undefined : undefined;
    },
    async movedFrom() {
      const result = await ssh(commands.moveRecord, undefined, ANSWER_LIMITS.enode);
      return result.code === 0 ? /^from-enode=(enode:\/\/\S+)$/m.exec(result.stdout)?.[1] : undefined;
    },
    async rolloutState() {
      // The record's times are the machine's: compared with its clock.
      const [result, clock] = await Promise.all([
        ssh(commands.rolloutRecord, undefined, ANSWER_LIMITS.rolloutRecord),
        ssh(commands.clock),
      ]);
      return result.code === 0 ? gateRecordState(result.stdout, Number(clock.stdout.trim())) : undefined;
    },
    async recentLog() {
      return (await ssh(commands.recentLog)).stdout;
    },
    async startedAt() {
      const result = await ssh(commands.startedAt);
      const seconds = Number(result.stdout.trim());
      return result.code === 0 && seconds > 0 ? seconds : undefined;
    },
    async egress(towards) {
      const result = await ssh(commands.egress(towards));
      const source = / src (\S+)/.exec(result.stdout)?.[1];
      return result.code === 0 && source
        ? { addresses: [source], how: `the source of its route to ${towards}` }
        : undefined;
    },
    async clock() {
      const before = Date.now();
      const result = await ssh(commands.clockState);
      const after = Date.now();
      const [seconds, synchronised] = result.stdout.trim().split('\n');
      if (result.code !== 0 || !Number.isFinite(Number(seconds))) return undefined;
      return {
        offsetSeconds: clockOffset(Number(seconds), before, after),
        ...(synchronised === 'yes' || synchronised === 'no' ? { synchronised: synchronised === 'yes' } : {}),
      };
    },
    async now() {
      return Number((await ssh(commands.clock)).stdout.trim());
    },
    async diskUsage() {
      const result = await ssh(commands.diskUsage);
      const disk = parseDiskUsage(result.stdout);
      if (result.code !== 0 || !disk)
        throw new Error(`cannot read the data's disk: ${lastMeaningfulLine(result.stderr) || `exit ${result.code}`}`);
      return disk;
    },
    showLogs(follow) {
      return attachClient(
        'ssh',
        [...args, ...commands.destination, follow ? commands.followLogs : commands.logs],
        withoutControlSequences,
      );
    },
    async start() {
      const result = await ssh(commands.start);
      if (result.code !== 0) {
        throw new ToolFailure(`cannot start ${node.serviceName}: ${lastMeaningfulLine(result.stderr)}`);
      }
    },
    async restart() {
      const result = await ssh(commands.restart);
      if (result.code !== 0) {
        throw new ToolFailure(`cannot restart ${node.serviceName}: ${lastMeaningfulLine(result.stderr)}`);
      }
    },
    restartHint,
    backups: sshBackups(node, commands, ssh, (command, onLine, input) =>
      streamClient('ssh', [...args, ...commands.destination, command], onLine, withoutControlSequences, input),
    ),
  };
}

/** The backups of a machine's node, through its backup command (scripts/remote/node-backup.sh). */
function sshBackups(
  node: SshNodeSettings,
  commands: ReturnType<typeof sshCommands>,
  ssh: (command: string, input?: string, limit?: number) => Promise<{ code: number; stdout: string; stderr: string }>,
  stream: (
    command: string,
    onLine: (line: string) => void,
    input?: string,
  ) => Promise<{ code: number; stderr: string }>,
): BackupClient {
  const failure = (what: string, result: { code: number; stderr: string }) =>
    new ToolFailure(
      `${what} (exit ${result.code})${result.stderr.trim() ? `: ${lastMeaningfulLine(result.stderr)}` : ''}`,
    );
  return {
    where: `${node.backups.repository} (restic, on ${node.host})`,
    consistency: STOPPED_WHILE_COPIED,
    async take(reason, onLine) {
      const result = await stream(commands.backup(reason), onLine);
      if (result.code !== 0) throw failure(`the backup of node ${node.name} failed`, result);
    },
    async list() {
      const result = await ssh(commands.listBackups);
      if (result.code !== 0) throw failure(`cannot list the backups of node ${node.name}`, result);
      return parseResticSnapshots(result.stdout);
    },
    async recordedEnode(backup) {
      const result = await ssh(commands.backupEnode(backup.id), undefined, ANSWER_LIMITS.enode);
      return result.code === 0 ? result.stdout.trim() || undefined : undefined;
    },
    async prepareRelease(version) {
      if ((await ssh(commands.releaseInstalled(version))).code === 0) return;
      const sha256 =
        RELEASE_ARCHIVE_SHA256[version] ?? (version === node.releaseVersion ? node.releaseSha256 : undefined);
      if (!sha256) {
        throw new ToolFailure(
          `Besu ${version} is no longer on ${node.host}, and the catalog pins no digest for its archive: unpack it there (releases/besu-${version}) and run this again`,
        );
      }
      const step = remoteStep('release', {
        BESU_VERSION: version,
        RELEASE_URL: releaseUrl(node.releaseUrl, version),
        RELEASE_SHA256: sha256,
        RELEASES_DIR: nodePaths(node).releasesDir,
      });
      const input = stepInput(
        `npm run node: Besu ${version} for node ${node.name}`,
        step.env as Record<string, string>,
        stepScript(step.scriptFile),
      );
      const result = await ssh(stepCommand(node.user), input);
      if (result.code !== 0) throw failure(`cannot put Besu ${version} back on ${node.host}`, result);
    },
    async restore(backup, nodeKey, onLine) {
      const result = await stream(
        commands.restore(backup.id, backup.release, backup.head, nodeKey !== undefined),
        onLine,
        nodeKey,
      );
      if (result.code !== 0) throw failure(`the restore of backup ${backup.id} on node ${node.name} failed`, result);
    },
  };
}

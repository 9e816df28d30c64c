/**
 * `npm run node -- move --from-kubernetes`: a cluster node onto a machine, with its key and its data (docs/moving.md),
 * once the operator wrote its `target: ssh` entry and inventory in the stack file. In order: the pod stops and is kept
 * from starting again (its StatefulSet at no pod and annotated moved, its backup schedule suspended); its last backup is
 * taken (a restic Job into its backups volume, the pod not started after it); the repository is carried to the new
 * machine (a read pod's tar piped into ssh through this process's memory only; a key of the operator's Secret the same
 * way, root's only there); `pulumi up` brings the node up there, its start step restoring that backup before the
 * node's first start (the backups of both places share one password: lacchain:backupPassword, or the key's), and
 * removes the node's cluster objects but its volumes and key Secret; the new node's health is waited for. The pod and
 * the new node never run at once.
 */
import * as fs from 'fs';
import * as path from 'path';
import { BACKUP_REASONS } from '../../core/catalog/backups';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import {
  MACHINE_FROM_CLUSTER_STEPS,
  MACHINE_MOVE_FILES,
  MachineFromClusterStep,
  MOVED_TO_ANNOTATION,
} from '../../core/catalog/move';
import { backupJobManifest, backupNames } from '../../core/kubernetes/backups';
import { moveReadCommand, moveReadPodManifest, moveReadPodName } from '../../core/kubernetes/moveFill';
import { nodePlace } from '../../core/node/place';
import { POD_READY_TIMEOUT, POD_WAIT_CLIENT_MS } from '../../core/operations/clients';
import { nodePaths } from '../../core/remote/paths';
import { shellQuote } from '../../core/remote/shell';
import type { KubernetesNodeSettings, SshNodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import { machine, Machine, moveParameters, waitForMovedMachine } from './move';
import { moveEnded, MoveResult, movePlanLines, pipeClients, say } from './moveShared';
import { sayStep, whatTheNodeSays, withCutLine } from './moveShared';
import { Cluster, clusterOf } from './moveToCluster';
import {
  POD_STOP_WORDS,
  STOP_LOOK_TIMEOUT_MS,
  StopReached,
  stopReachedInCluster,
  stopReachedLine,
} from './moveStopReached';
import { nodeClient } from './nodeClient';
import type { SshOptions } from './nodeClientTypes';
import { runClient } from './process';

/** How long the last backup's Job may run. */
const BACKUP_JOB_MS = 24 * 3600 * 1000;
/** How long the read pod may take to start. */
const READ_POD_READY = '300s';

/** What a move out of the cluster is given. */
export interface MachineMoveRequest {
  stack: string;
  /** The node in the cluster now, and on its machine as the stack file says. */
  from: KubernetesNodeSettings;
  to: SshNodeSettings;
  kubeContext?: string;
  /** The stack file (naming the machine already), and the text it had with the node in the cluster. */
  configFile: string;
  clusterText: string;
  ssh: SshOptions;
  /** The pod's RPC (e.g. a port-forward), as `--rpc-url` gives it; its Service's URL when not given. */
  rpcUrl?: string;
}

/** How the new machine is brought up: `pulumi up` of the stack file, the move's own run. */
export interface MachineMoveDeps {
  bringUp: (stack: string, configFile: string, node: string) => Promise<void>;
}

/** The lines of the plan of a move out of the cluster, printed before it starts. */
export function machineMovePlan(request: Pick<MachineMoveRequest, 'from' | 'to' | 'kubeContext'>): string[] {
  const { from, to } = request;
  return movePlanLines(
    { from, to, fromPlace: nodePlace(from, request.kubeContext), toPlace: nodePlace(to) },
    Object.values(MACHINE_FROM_CLUSTER_STEPS),
    'the pod is gone before the new node first starts',
  );
}

/**
 * The line a move out of the cluster cut at `step` ends with: which place is runnable and how to go on; at the stop,
 * what the look at the cluster saw the stop reach (`stopReached`: unknown when it did not answer).
 */
export function machineMoveCutLine(
  stack: string,
  node: string,
  step: MachineFromClusterStep,
  stopReached: StopReached = 'unknown',
): string {
  const again = `npm run node -- move --stack ${stack} --node ${node} --from-kubernetes`;
  const where = `the move stopped at "${MACHINE_FROM_CLUSTER_STEPS[step]}"`;
  switch (step) {
    case 'stopOld':
    case 'lastBackup':
    case 'carry':
      return stopReachedLine(where, step === 'stopOld' ? stopReached : 'kept', POD_STOP_WORDS, `run ${again} again`);
    case 'bringUp':
    case 'health':
      return `${where}: the StatefulSet is kept at no pod, the new machine runs the node only once its data is restored; fix the cause above and run ${again} again to go on`;
    case 'removeOld':
      return `${where}: the new node runs; run ${again} again to remove the cluster's StatefulSet`;
  }
}

/**
 * How far the pod's stop got, after a move ended in its stop step: one `kubectl get` of its StatefulSet, backup
 * schedule and pod; `unknown` when the cluster does not answer.
 */
export async function stopReachedOfPod(cluster: Cluster, node: string): Promise<StopReached> {
  const names = kubernetesNames(node);
  const result = await runClient(
    'kubectl',
    cluster.withContext([
      'get',
      `statefulset/${names.statefulSet}`,
      `cronjob/${backupNames(node).cronJob}`,
      `pod/${names.pod}`,
      '--ignore-not-found',
      '-o',
      'json',
    ]),
    undefined,
    STOP_LOOK_TIMEOUT_MS,
  ).catch(() => undefined);
  return result?.code === 0 ? stopReachedInCluster(result.stdout) : 'unknown';
}

/** Runs a Job of the node to its end; throws with its log's last line when it fails. */
async function runJob(cluster: Cluster, manifest: object, name: string): Promise<void> {
  await cluster.run(['create', '-f', '-'], `create Job ${name}`, JSON.stringify(manifest));
  const deadline = Date.now() + BACKUP_JOB_MS;
  let state = '';
  while (Date.now() < deadline) {
    state = await cluster.run(
      ['get', `job/${name}`, '-o', 'jsonpath={.status.succeeded}/{.status.failed}'],
      `read Job ${name}`,
    );
    if (state.startsWith('1/') || state.endsWith('/1')) break;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  if (!state.startsWith('1/')) {
    const log = await runClient('kubectl', cluster.withContext(['logs', `job/${name}`]));
    throw new ToolFailure(`Job ${name} failed: ${log.stdout.trim().split('\n').pop() ?? log.stderr.trim()}`);
  }
}

/**
 * The cluster's restic repository onto the new machine, at its repository's folder (root's, 0700): a read pod of the
 * backups volume, its tar piped into ssh. A folder there already is replaced only when it is the same repository (its
 * config file the same: a move run again); otherwise the move stops before anything is written.
 */
async function carryRepository(cluster: Cluster, target: Machine, from: KubernetesNodeSettings, to: SshNodeSettings) {
  const repository = to.backups.repository;
  if (!repository.startsWith('/')) {
    throw new ToolFailure(
      `the new machine's backup repository ${repository} is not on its disk: a move out of the cluster carries the backups to a folder there (lacchain:backups.repository)`,
    );
  }
  const pod = moveReadPodName(from.name);
  await cluster.run(['delete', 'pod', pod, '--ignore-not-found', '--wait=true'], `remove an earlier read pod ${pod}`);
  await cluster.run(['create', '-f', '-'], `create the read pod ${pod}`, JSON.stringify(moveReadPodManifest(from)));
  try {
    await cluster.run(
      ['wait', '--for=condition=Ready', `pod/${pod}`, `--timeout=${READ_POD_READY}`],
      `see the read pod ${pod} ready`,
    );
    const config = (file: string) => `sha256sum ${file} 2>/dev/null | cut -d' ' -f1`;
    const source = (
      await cluster.run(['exec', pod, '-c', 'move', '--', '/bin/sh', '-c', config('/backups/config')], 'read')
    ).trim();
    const quoted = shellQuote(repository);
    const there = (
      await target.run(
        `${target.sudo}sh -c ${shellQuote(`[ -e ${quoted} ] && [ -n "$(ls -A ${quoted})" ] && { ${config(`${quoted}/config`)}; echo taken; } || true`)}`,
        'looking at the repository folder',
      )
    ).trim();
    if (there !== '' && !there.startsWith(source)) {
      throw new ToolFailure(
        `the repository folder ${repository} on ${target.where} holds another repository: name a new lacchain:backups.repository for the node there (or move that folder aside) and run the move again`,
      );
    }
    const incoming = shellQuote(`${repository}.incoming`);
    const parent = shellQuote(path.posix.dirname(repository));
    await pipeClients(
      ['kubectl', cluster.withContext(['exec', pod, '-c', 'move', '--', ...moveReadCommand()])],
      [
        'ssh',
        [
          ...target.args,
          `${target.sudo}sh -c ${shellQuote(
            `umask 077 && install -d -m 0755 -o root -g root ${parent} && rm -rf ${incoming} && ` +
              `install -d -m 0700 -o root -g root ${incoming} && tar -C ${incoming} --no-same-owner -xf - && ` +
              `rm -rf ${quoted} && mv -T ${incoming} ${quoted}`,
          )}`,
        ],
      ],
      'carrying the backup repository',
    );
  } finally {
    await cluster.run(['delete', 'pod', pod, '--ignore-not-found', '--wait=true'], `remove the read pod ${pod}`);
  }
}

/**
 * Key custody secret in the cluster, machine on the new machine: the key of the operator's Secret, read with kubectl
 * into this process's memory and written root's only on the new machine (the node-key step takes it in): never on
 * this machine's disk, nor in the state.
 */
async function carrySecretKey(cluster: Cluster, target: Machine, from: KubernetesNodeSettings, to: SshNodeSettings) {
  if (!from.keySecret) throw new ToolFailure(`node ${from.name}: key custody secret names no Secret (keySecret)`);
  const secret = JSON.parse(
    await cluster.run(['get', 'secret', from.keySecret.name, '-o', 'json'], `read the Secret ${from.keySecret.name}`),
  ) as { data?: Record<string, string> };
  const encoded = secret.data?.[from.keySecret.entry];
  if (!encoded) throw new ToolFailure(`the Secret ${from.keySecret.name} has no entry ${from.keySecret.entry}`);
  const file = MACHINE_MOVE_FILES.incomingKey(to.serviceName);
  await target.run(
    `${target.sudo}sh -c ${shellQuote(`umask 077 && install -d -m 0755 /etc/lacchain && cat >${file}.new && test -s ${file}.new && mv -f ${file}.new ${file}`)}`,
    'carrying the key',
    Buffer.from(encoded, 'base64').toString(),
  );
  say(`  carried the node key root to root (key custody secret -> machine)`);
}

/** The StatefulSet's replicas and moved-to annotation ('' when it is not there). */
async function statefulSetState(cluster: Cluster, node: string): Promise<{ there: boolean; movedTo: string }> {
  const result = await runClient(
    'kubectl',
    cluster.withContext([
      'get',
      'statefulset',
      kubernetesNames(node).statefulSet,
      '--ignore-not-found',
      '-o',
      `jsonpath={.metadata.name} {.metadata.annotations.${MOVED_TO_ANNOTATION.replace(/\./g, '\\.')}}`,
    ]),
  );
  const [name, movedTo] = result.stdout.trim().split(' ');
  return { there: result.code === 0 && Boolean(name), movedTo: movedTo ?? '' };
}

/** Runs a move of a cluster node onto a machine, step by step; a failed step throws the line saying how to go on. */
export async function moveNodeFromCluster(request: MachineMoveRequest, deps: MachineMoveDeps): Promise<MoveResult> {
  const started = Date.now();
  const { from, to, stack } = request;
  const custody = `${from.keyCustody}->${to.keyCustody}`;
  if (!['stack->stack', 'secret->machine'].includes(custody)) {
    throw new ToolFailure(
      `node ${from.name}: key custody ${from.keyCustody} in the cluster moves to keyCustody ${from.keyCustody === 'secret' ? 'machine' : 'stack'} on a machine (the same key): set it in the stack file`,
    );
  }
  if (from.volumeSnapshotClass) {
    throw new ToolFailure(
      `node ${from.name} backs up by VolumeSnapshots (volumeSnapshotClass): a move out of the cluster carries a restic repository; remove volumeSnapshotClass from its values file first`,
    );
  }
  const target = machine(to, request.ssh);
  const cluster = clusterOf(from, request.kubeContext);
  const names = kubernetesNames(from.name);
  let step: MachineFromClusterStep = 'stopOld';
  try {
    const running =
      (
        await target.run(`systemctl is-active ${shellQuote(to.serviceName)} || true`, 'looking at the new machine')
      ).trim() === 'active';
    const before = await statefulSetState(cluster, from.name);
    const phase = await cluster.podPhase();
    if (running && (phase !== '' || (before.there && before.movedTo === ''))) {
      throw new ToolFailure(
        `${to.serviceName} already runs on ${target.where} while the node's StatefulSet in the cluster was not moved out: refusing to move node ${from.name} there (two nodes, one key); stop it first`,
      );
    }
    const resumed = running;
    const oldClient = nodeClient(from, {
      stack,
      configFile: request.configFile,
      kubeContext: request.kubeContext,
      ssh: request.ssh,
      rpcUrl: request.rpcUrl,
    });
    const { oldEnode, headBefore } = await whatTheNodeSays(oldClient);
    machineMovePlan(request).forEach(say);
    const announce = (s: MachineFromClusterStep) => {
      step = s;
      sayStep(MACHINE_FROM_CLUSTER_STEPS, s);
    };
    let stoppedAt = '';
    let backupId = '';
    if (resumed) say(`  ${to.serviceName} already runs on ${target.where}, the pod moved out: finishing the move`);
    else {
      announce('stopOld');
      const place = nodePlace(to);
      // Nothing starts the pod again: the StatefulSet at no pod (annotated: where the node went), the schedule
      // (which scales it back up after its backup) suspended.
      await cluster.run(
        ['annotate', '--overwrite', `statefulset/${names.statefulSet}`, `${MOVED_TO_ANNOTATION}=${place}`],
        'mark the StatefulSet moved',
      );
      await cluster
        .run(
          ['patch', 'cronjob', backupNames(from.name).cronJob, '-p', '{"spec":{"suspend":true}}'],
          'suspend the backup schedule',
        )
        .catch((error: Error) => {
          if (!/not found|NotFound/.test(error.message)) throw error;
        });
      await cluster.run(['scale', `statefulset/${names.statefulSet}`, '--replicas=0'], 'scale the node to 0');
      say(`  the StatefulSet ${names.statefulSet} is at no pod: waiting for the pod ${names.pod} to stop`);
      await cluster.run(
        ['wait', '--for=delete', `pod/${names.pod}`, `--timeout=${POD_READY_TIMEOUT}`],
        'see the pod stop',
        undefined,
        POD_WAIT_CLIENT_MS,
      );
      stoppedAt = new Date().toISOString();
      say(`  the pod ${names.pod} is gone at ${stoppedAt}; its StatefulSet is kept at no pod`);

      announce('lastBackup');
      const name = `${names.statefulSet}-backup-move-${Date.now().toString(36)}`;
      const record = {
        release: from.releaseVersion,
        reason: BACKUP_REASONS.move,
        ...(headBefore !== undefined ? { head: headBefore } : {}),
      };
      await runJob(cluster, backupJobManifest(from, name, record), name);
      const backup = (await oldClient.backups.list()).filter((b) => b.reason === BACKUP_REASONS.move).pop();
      if (!backup) throw new ToolFailure(`the last backup of node ${from.name} is not in its repository's list`);
      backupId = backup.id;
      say(`  backup ${backup.id} (Besu ${backup.release}) in ${backupNames(from.name).volume}`);
      if (backup.release !== to.releaseVersion) {
        throw new ToolFailure(
          `backup ${backup.id} was taken on Besu ${backup.release}, the inventory says ${to.releaseVersion}: set node_release_version to ${backup.release} and run the move again`,
        );
      }

      announce('carry');
      await carryRepository(cluster, target, from, to);
      say(`  carried the repository to ${to.backups.repository} on ${target.where}`);
      if (from.keyCustody === 'secret') await carrySecretKey(cluster, target, from, to);
      await target.step(
        {
          ...moveParameters(to, 'arrive'),
          BACKUP_ID: backup.id,
          FROM_ENODE: oldEnode ?? '',
          // A cluster's backup holds the data volume's contents at its root (restic-backup.sh backs up `.` there).
          BACKUP_PATH: '/',
        },
        'recording the backup to restore',
      );

      announce('bringUp');
      const kept = `${request.configFile}.before-move`;
      if (!fs.existsSync(kept)) fs.writeFileSync(kept, request.clusterText);
      await deps.bringUp(stack, request.configFile, from.name);
    }

    announce('health');
    const newClient = nodeClient(to, { stack, configFile: request.configFile, ssh: request.ssh });
    const expected = await waitForMovedMachine(newClient, headBefore, to, target);

    announce('removeOld');
    // pulumi up removed the node's cluster objects (but its volumes and key Secret); what a run elsewhere left goes.
    await cluster.run(
      ['delete', `statefulset/${names.statefulSet}`, `cronjob/${backupNames(from.name).cronJob}`, '--ignore-not-found'],
      "remove the cluster's StatefulSet",
    );
    say(
      `  the StatefulSet ${names.statefulSet} is gone; its volumes ${names.dataVolume} and ${backupNames(from.name).volume} stay in namespace ${from.namespace}`,
    );

    return moveEnded(
      to,
      { stoppedAt, backupId, headBefore, oldEnode, newEnode: expected, started },
      `; its data on the machine: ${nodePaths(to).dataDir}`,
    );
  } catch (error) {
    const reached = step === 'stopOld' ? await stopReachedOfPod(cluster, from.name) : undefined;
    throw withCutLine(error, machineMoveCutLine(stack, from.name, step, reached));
  } finally {
    target.dispose();
  }
}

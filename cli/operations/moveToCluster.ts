/**
 * `npm run node -- move --to-kubernetes`: an SSH node into the stack's cluster, with its key and its data
 * (docs/moving.md). In order: the old node stops and is kept from starting again; its last backup is taken; the stack
 * file names the node a cluster node and a first `pulumi up` makes its objects with the StatefulSet held at no pod
 * (MOVE_HOLD_VARIABLE); a short-lived pod fills the new data volume from that backup, streamed from the old machine
 * through this process's memory only (and, key custody machine, the key goes the same way into the operator's Secret);
 * a second `pulumi up` starts the pod on that data; the new node's health is waited for; only then is the old
 * machine's service removed (its data kept). The old node and the pod never run at once.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import { BACKUP_REASONS } from '../../core/catalog/backups';
import { DEFAULT_SERVICE_USER } from '../../core/catalog/defaults';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import {
  CLUSTER_MOVE_STEPS,
  ClusterMoveStep,
  MACHINE_MOVE_FILES,
  MOVE_HOLD_VARIABLE,
  MOVED_FROM_ENODE_ANNOTATION,
  MOVING_NODE_VARIABLE,
} from '../../core/catalog/move';
import { moveFillCommand, moveFillPodManifest, moveFillPodName } from '../../core/kubernetes/moveFill';
import { nodePlace } from '../../core/node/place';
import { POD_READY_TIMEOUT, POD_WAIT_CLIENT_MS } from '../../core/operations/clients';
import { lastMeaningfulLine } from '../../core/operations/reach';
import { backupPaths } from '../../core/remote/backups';
import { nodePaths } from '../../core/remote/paths';
import { shellQuote } from '../../core/remote/shell';
import type { KubernetesNodeSettings, SshNodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import { machine, Machine, moveParameters, removeOldService, stopReachedOn } from './move';
import { moveEnded, MoveResult, movePlanLines, pipeClients, say } from './moveShared';
import { sayStep, waitForMovedNode, whatTheNodeSays, withCutLine } from './moveShared';
import { machineStopWords, StopReached, stopReachedLine } from './moveStopReached';
import { nodeClient } from './nodeClient';
import type { SshOptions } from './nodeClientTypes';
import { runClient } from './process';

/** How long the new pod may take to answer with its enode at the old head, after the second `pulumi up`. */
const HEALTH_WAIT_SECONDS = 300;
/** How long the fill pod may take to start (its image pulled on the worker). */
const FILL_POD_READY = '300s';

/** What a move into the cluster is given. */
export interface ClusterMoveRequest {
  stack: string;
  /** The node on its machine now, and as it will run in the cluster. */
  from: SshNodeSettings;
  to: KubernetesNodeSettings;
  /** The stack's kube context (`lacchain:kubeContext`; kubectl's current one when not given). */
  kubeContext?: string;
  /** The stack file, and its text with the node in the cluster (written before the first `pulumi up`). */
  configFile: string;
  movedText: string;
  ssh: SshOptions;
  /** The new node's RPC (e.g. a port-forward), as `--rpc-url` gives it; its Service's URL when not given. */
  rpcUrl?: string;
}

/** How the cluster side is brought up: `pulumi up` of the stack file, `held` the first time (the pod not started). */
export interface ClusterMoveDeps {
  bringUp: (stack: string, configFile: string, node: string, held: boolean) => Promise<void>;
}

/** The lines of the plan of a move into the cluster, printed before it starts. */
export function clusterMovePlan(request: Pick<ClusterMoveRequest, 'from' | 'to' | 'kubeContext'>): string[] {
  const { from, to } = request;
  return movePlanLines(
    { from, to, fromPlace: nodePlace(from), toPlace: nodePlace(to, request.kubeContext) },
    Object.values(CLUSTER_MOVE_STEPS),
    'the old node is stopped before the pod first starts',
  );
}

/**
 * The line a move into the cluster cut at `step` ends with: which place is runnable and how to go on; at the stop, what
 * the look at the old machine saw the stop reach (`stopReached`: unknown when it did not answer).
 */
export function clusterMoveCutLine(
  stack: string,
  node: string,
  step: ClusterMoveStep,
  stopReached: StopReached = 'unknown',
): string {
  const again = `npm run node -- move --stack ${stack} --node ${node} --to-kubernetes`;
  const where = `the move stopped at "${CLUSTER_MOVE_STEPS[step]}"`;
  switch (step) {
    case 'stopOld':
    case 'lastBackup':
    case 'prepare':
    case 'carry':
      return stopReachedLine(
        where,
        step === 'stopOld' ? stopReached : 'kept',
        machineStopWords('the cluster runs no pod of it'),
        `run ${again} again`,
      );
    case 'bringUp':
    case 'health':
      return `${where}: the old node is kept from starting, the pod starts only on the filled data volume; fix the cause above and run ${again} again to go on`;
    case 'removeOld':
      return `${where}: the pod runs; run ${again} again to remove the old machine's service`;
  }
}

/** The kubectl of the move: the stack's context, the node's namespace; throws with kubectl's last line. */
export function clusterOf(to: KubernetesNodeSettings, kubeContext: string | undefined) {
  const withContext = (args: string[]) => [
    ...(kubeContext ? ['--context', kubeContext] : []),
    '-n',
    to.namespace,
    ...args,
  ];
  return {
    withContext,
    async run(args: string[], what: string, input?: string, timeoutMs = 600_000) {
      const result = await runClient('kubectl', withContext(args), input, timeoutMs);
      if (result.code !== 0) {
        throw new ToolFailure(`kubectl cannot ${what}: ${lastMeaningfulLine(result.stderr) || `exit ${result.code}`}`);
      }
      return result.stdout;
    },
    /** The phase of the node's pod, or '' when there is none. */
    async podPhase() {
      const names = kubernetesNames(to.name);
      const result = await runClient(
        'kubectl',
        withContext(['get', 'pod', names.pod, '--ignore-not-found', '-o', 'jsonpath={.status.phase}']),
      );
      if (result.code !== 0) return '';
      return result.stdout.trim();
    },
  };
}
export type Cluster = ReturnType<typeof clusterOf>;

/** Pipes an ssh command's output into a kubectl command's input. */
function pipeInto(from: Machine, command: string, kubectlArgs: string[], what: string): Promise<void> {
  return pipeClients(['ssh', [...from.args, command]], ['kubectl', kubectlArgs], what);
}

/**
 * Fills the node's new data volume with backup `backupId` of the old machine: the fill pod started on the node's worker
 * (the node's own pod not there), the backup's data streamed into it, the pod removed.
 */
async function fillDataVolume(
  cluster: Cluster,
  old: Machine,
  from: SshNodeSettings,
  to: KubernetesNodeSettings,
  backupId: string,
): Promise<void> {
  // A pod a cut move's second run started goes with the held StatefulSet: its end is waited for (none: at once).
  await runClient(
    'kubectl',
    cluster.withContext([
      'wait',
      '--for=delete',
      `pod/${kubernetesNames(to.name).pod}`,
      `--timeout=${POD_READY_TIMEOUT}`,
    ]),
    undefined,
    POD_WAIT_CLIENT_MS,
  );
  if ((await cluster.podPhase()) !== '') {
    throw new ToolFailure(`the pod of node ${to.name} is there already: refusing to fill its data volume under it`);
  }
  const pod = moveFillPodName(to.name);
  await cluster.run(['delete', 'pod', pod, '--ignore-not-found', '--wait=true'], `remove an earlier fill pod ${pod}`);
  await cluster.run(['create', '-f', '-'], `create the fill pod ${pod}`, JSON.stringify(moveFillPodManifest(to)));
  try {
    await cluster.run(
      ['wait', '--for=condition=Ready', `pod/${pod}`, `--timeout=${FILL_POD_READY}`],
      `see the fill pod ${pod} ready`,
    );
    await pipeInto(
      old,
      `${old.sudo}${shellQuote(backupPaths(from).command)} export ${shellQuote(backupId)}`,
      cluster.withContext(['exec', '-i', pod, '-c', 'move', '--', ...moveFillCommand()]),
      `streaming backup ${backupId} into the data volume ${kubernetesNames(to.name).dataVolume}`,
    );
  } finally {
    await cluster.run(['delete', 'pod', pod, '--ignore-not-found', '--wait=true'], `remove the fill pod ${pod}`);
  }
}

/**
 * Key custody machine: the operator's Secret of the node (keyCustody secret in the cluster) made from the old
 * machine's key, read as the service user there and handed to kubectl on its standard input: never on this machine's
 * disk, nor in the state. A Secret of that name already there is left as it is (the pod's key check compares it).
 */
async function carryMachineKey(cluster: Cluster, old: Machine, from: SshNodeSettings, to: KubernetesNodeSettings) {
  const secret = to.keySecret;
  if (!secret) throw new ToolFailure(`node ${to.name}: key custody secret names no Secret (keySecret)`);
  const there = await runClient('kubectl', cluster.withContext(['get', 'secret', secret.name, '-o', 'name']));
  if (there.code === 0) {
    say(`  the Secret ${secret.name} is there already: left as it is`);
    return;
  }
  const asServiceUser =
    from.user === 'root' ? `runuser -u ${DEFAULT_SERVICE_USER} -- ` : `sudo -n -u ${DEFAULT_SERVICE_USER} `;
  await pipeInto(
    old,
    `${asServiceUser}dd if=${shellQuote(nodePaths(from).key)} iflag=nofollow,nonblock bs=200 count=1 status=none`,
    cluster.withContext(['create', 'secret', 'generic', secret.name, `--from-file=${secret.entry}=/dev/stdin`]),
    'carrying the machine key into its Secret',
  );
  say(`  carried the node key into the Secret ${secret.name} (key custody machine -> secret)`);
}

/** Runs a move of an SSH node into the cluster, step by step; a failed step throws the line saying how to go on. */
export async function moveNodeToCluster(request: ClusterMoveRequest, deps: ClusterMoveDeps): Promise<MoveResult> {
  const started = Date.now();
  const { from, to, stack } = request;
  if (from.keyCustody === 'machine' && to.keyCustody !== 'secret') {
    throw new ToolFailure(
      `node ${from.name} keeps its key on its machine (keyCustody machine): in the cluster set keyCustody secret and keySecret, which the move fills with that key`,
    );
  }
  const old = machine(from, request.ssh);
  const cluster = clusterOf(to, request.kubeContext);
  let step: ClusterMoveStep = 'stopOld';
  try {
    const movedOutFile = shellQuote(MACHINE_MOVE_FILES.movedOut(from.serviceName));
    const movedOut =
      (await old.run(`test -f ${movedOutFile} && echo moved || true`, 'looking at the old machine')).trim() === 'moved';
    const phase = await cluster.podPhase();
    if (phase !== '' && !movedOut) {
      throw new ToolFailure(
        `the pod of node ${to.name} is there already (${phase}) while ${from.serviceName} was not moved out of ${old.where}: refusing to move it (two nodes, one key); remove the pod first`,
      );
    }
    const resumed = phase === 'Running' && movedOut;
    const oldClient = nodeClient(from, { stack, configFile: request.configFile, ssh: request.ssh });
    const { oldEnode, headBefore } = await whatTheNodeSays(oldClient);
    clusterMovePlan(request).forEach(say);
    let stoppedAt = '';
    let backupId = '';
    const announce = (s: ClusterMoveStep) => {
      step = s;
      sayStep(CLUSTER_MOVE_STEPS, s);
    };
    if (resumed) say(`  the pod of node ${to.name} runs, the old node moved out: finishing the move`);
    else {
      announce('stopOld');
      const left = await old.step(
        { ...moveParameters(from, 'leave'), DESTINATION: nodePlace(to, request.kubeContext) },
        'stopping the old node',
      );
      stoppedAt = /MOVE_STOPPED_AT=(\S+)/.exec(left)?.[1] ?? '';
      say(`  ${from.serviceName} stopped on ${old.where} at ${stoppedAt}`);

      announce('lastBackup');
      await oldClient.backups.take(BACKUP_REASONS.move, () => undefined);
      const backup = (await oldClient.backups.list()).filter((b) => b.reason === BACKUP_REASONS.move).pop();
      if (!backup) throw new ToolFailure(`the last backup of node ${from.name} is not in its repository's list`);
      backupId = backup.id;
      say(`  backup ${backup.id} (Besu ${backup.release}) in ${from.backups.repository}`);
      if (backup.release !== to.releaseVersion) {
        throw new ToolFailure(
          `backup ${backup.id} was taken on Besu ${backup.release}, the cluster's values file says ${to.releaseVersion}: set releaseVersion (and its imageDigest) to ${backup.release} there and run the move again`,
        );
      }

      announce('prepare');
      const before = fs.readFileSync(request.configFile, 'utf8');
      if (before !== request.movedText) {
        fs.writeFileSync(`${request.configFile}.before-move`, before);
        fs.writeFileSync(request.configFile, request.movedText);
        say(
          `  ${request.configFile} names the node a cluster node (the file before: ${request.configFile}.before-move)`,
        );
      }
      await deps.bringUp(stack, request.configFile, from.name, true);

      announce('carry');
      if (from.keyCustody === 'machine') await carryMachineKey(cluster, old, from, to);
      await fillDataVolume(cluster, old, from, to, backup.id);
      if (oldEnode) {
        // For check: the enode the node had on its machine (a moved node not yet permissioned at its new one).
        await cluster.run(
          [
            'annotate',
            '--overwrite',
            `service/${kubernetesNames(to.name).service}`,
            `${MOVED_FROM_ENODE_ANNOTATION}=${oldEnode}`,
          ],
          'record the enode the node had',
        );
      }
      say(`  filled ${kubernetesNames(to.name).dataVolume} from backup ${backup.id}, before the pod's first start`);

      announce('bringUp');
      await deps.bringUp(stack, request.configFile, from.name, false);
    }

    announce('health');
    const newClient = nodeClient(to, {
      stack,
      configFile: request.configFile,
      kubeContext: request.kubeContext,
      ssh: request.ssh,
      rpcUrl: request.rpcUrl,
    });
    const expected = await waitForMovedNode(newClient, headBefore, {
      seconds: HEALTH_WAIT_SECONDS,
      what: 'pod',
      noRecord: `the cluster has no enode record for node ${to.name} (its Service)`,
      runs: 'the pod runs',
    });

    announce('removeOld');
    await removeOldService(old, from);

    return moveEnded(to, { stoppedAt, backupId, headBefore, oldEnode, newEnode: expected, started });
  } catch (error) {
    const reached = step === 'stopOld' ? await stopReachedOn(old, from) : undefined;
    throw withCutLine(error, clusterMoveCutLine(stack, from.name, step, reached));
  } finally {
    old.dispose();
  }
}

/**
 * `pulumi up` of the stack file the move wrote, as the move's own run (MOVING_NODE_VARIABLE): `held`, the node's
 * StatefulSet is made with no pod (MOVE_HOLD_VARIABLE); otherwise the pod starts.
 */
export function pulumiUpInCluster(stack: string, configFile: string, node: string, held: boolean): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, [MOVING_NODE_VARIABLE]: node };
  if (held) env[MOVE_HOLD_VARIABLE] = node;
  else delete env[MOVE_HOLD_VARIABLE];
  return new Promise((resolve, reject) => {
    const child = spawn('pulumi', ['up', '--stack', stack, '--yes', '--skip-preview', '--config-file', configFile], {
      stdio: 'inherit',
      env,
    });
    child.on('error', (error) => reject(new ToolFailure(`cannot run pulumi: ${error.message}`)));
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new ToolFailure(`pulumi up --stack ${stack} failed (exit ${code})`)),
    );
  });
}

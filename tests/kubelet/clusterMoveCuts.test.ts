/**
 * The moves between a machine and a pod (`npm run node -- move --to-kubernetes`, `--from-kubernetes`, docs/moving.md)
 * cut at each of their steps (testing/cuts/clusterMoveCuts.ts: one cut for every step of each move's own list), on a
 * real test host and a real kubelet, set up as tests/kubelet/moveToPod.test.ts is: a writer (key custody stack, KEY_ONE)
 * on the host moves into the pod, then out of it onto a second host. Each move is cut at its first step, run again and
 * cut at the next, and so on; the last run finishes it. At every cut: the move's last line says where it stopped and
 * how to go on; one place only can run the node: the old machine's node does not run and does not start when asked
 * (into the pod), or the pod is gone and its StatefulSet kept at no pod (out of it); the new place runs the node only
 * when the cut came after its start; a cut inside the pod's stop (its StatefulSet at no pod, the pod not yet gone) says
 * the tool could not tell, and the tool's look at the cluster sees the pod running before the move and, once it is
 * gone, stopped and kept at no pod. Finished: the marker and the chain height written before the move are there, the
 * same key (the enode's node id); the old place stopped before the new one's first start (the journals and the pod's
 * container start times). The operator's network (ssh to the machines, kubectl to the API server) is cut through a
 * relay of this process (testing/cuts/connectionCut.ts); each `pulumi up` of the move is the program's manifests
 * applied server-side (into the pod) or its steps replayed on the machine (out of it), as moveToPod's are.
 * Light: companions off (Besu stand-in, a test fixture).
 */
import { joinMoveHosts, movedIntoCluster, MOVED_WRITER, moveWriterStack } from '../../testing/moveStack';
import { asRoot, hostRpc, unitTimes } from '../../testing/hostNode';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { kubernetesNames, POD_PATHS } from '../../core/catalog/kubernetes';
import {
  CLUSTER_MOVE_STEPS,
  ClusterMoveStep,
  MACHINE_FROM_CLUSTER_STEPS,
  MachineFromClusterStep,
} from '../../core/catalog/move';
import { NETWORKS } from '../../core/catalog/networks';
import { PORTS } from '../../core/catalog/ports';
import { parseEnode } from '../../core/identity/nodeKey';
import type { KubernetesNodeSettings, SshNodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../../cli/cli';
import type { MoveResult } from '../../cli/operations/moveShared';
import { machineMoveCutLine, moveNodeFromCluster, stopReachedOfPod } from '../../cli/operations/moveFromCluster';
import { clusterMoveCutLine, clusterOf, moveNodeToCluster } from '../../cli/operations/moveToCluster';
import { movedToClusterStackFile } from '../../cli/operations/moveStackFile';
import { loadOperatorStack } from '../../cli/operatorStack';
import { clientsWithThisEnvironment, declaredFrom, deleteClusterObjects } from '../../testing/clusterMove';
import { applyHeldFrom, podInitStarts } from '../../testing/clusterMove';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import type { Manifest } from '../../testing/cluster/manifests';
import { keptPortForward, PortForward } from '../../testing/cluster/portForward';
import { CuttableNetwork } from '../../testing/cuts/connectionCut';
import { killSessionsOf } from '../../testing/cuts/cut';
import { ClusterMoveCut, fromClusterCuts, toClusterCuts } from '../../testing/cuts/clusterMoveCuts';
import { KEY_ONE } from '../../testing/fixtures';
import { packagesInstalledDisk } from '../../testing/host/packagesDisk';
import { startTestHost, TestHost } from '../../testing/host/testHost';
import { progress } from '../../testing/hostSuite';
import { declareProgram } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { startReleaseHost, stopReleaseHost, ReleaseHost } from '../../testing/releaseHost';
import { remoteCommands, runRemoteSteps } from '../../testing/replay';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(15 * 60 * 1000);

const RELEASE = NETWORKS['open-protestnet'].defaultBesuVersion;
const { stack: STACK, node: NODE, service: SERVICE, data: DATA } = MOVED_WRITER;
const MARKER = 'written-before-the-cut-moves';
const POD_MARKER = 'written-in-the-pod';
/** A secret as the operator's stack file holds it once `pulumi config set --path --secret` stored it. */
const ENCRYPTED = { secure: 'v1:encrypted' };
/** The pulumi up of a move, when the operator's network is down (or went down inside it). */
const UP_FAILED = `pulumi up --stack ${STACK} failed (exit 255): the connection to the cluster and the machines was lost`;

const names = kubernetesNames(NODE);
const work = workFolder('lacchain-kubelet-move-cuts-');
const writer = kubeletNode(NODE, 'kubelet-move-cuts', { work });
const { cluster, itWithKubelet } = writer;
// The recording engine this file's runs read (installed after the one kubeletNode installs: the last one records).
const recorded = recordProgram();

describe('the moves between a machine and a pod, cut at each of their steps, each run again', () => {
  let old: ReleaseHost;
  let next: TestHost;
  let network: CuttableNetwork;
  let forward: PortForward | undefined;
  let configFile: string;
  let nodeId: string;
  const startedAt = Date.now() / 1000;
  /** The step whose cut is armed, and its cut; the `pulumi up` of that step cuts itself when its moment says so. */
  let armed: { step: string; cut: ClusterMoveCut<string>; down: () => void } | undefined;
  let deployed: Manifest[] = [];
  const seconds: string[] = [];

  /** The stack of one writer on `host`, its release served from the first host's own server; KEY_ONE its key. */
  const machineStack = (host: TestHost): Record<string, unknown> => ({
    ...moveWriterStack(host, old, RELEASE, { nodeName: 'e2e-move-cuts-pod', dnsName: 'move-cuts-pod.e2e.test' }),
    'lacchain:nodeKeys': { [NODE]: KEY_ONE },
  });
  /** The operator's stack file with the node on `host` (its key encrypted, the cluster's context). */
  const operatorStack = (host: TestHost) => ({
    ...machineStack(host),
    'lacchain:nodeKeys': { [NODE]: ENCRYPTED },
    'lacchain:kubeContext': cluster().context,
  });
  const active = async (host: TestHost) =>
    (await host.ssh(`systemctl is-active ${SERVICE}`)).stdout.trim() === 'active';
  const podPhase = async () =>
    (
      await cluster().kubectlOk([
        'get',
        'pod',
        '-n',
        writer.namespace,
        names.pod,
        '--ignore-not-found',
        '-o',
        'jsonpath={.status.phase}',
      ])
    ).trim();
  /** `pulumi up` of the stack file the move wrote: the program's manifests for it. */
  const declared = (file: string) => declaredFrom(recorded, writer, file);
  /** Before a move's `pulumi up` changes anything: the network must be up; after: the armed cut of `step`, if any. */
  const upReaches = () => {
    if (network.isDown) throw new ToolFailure(UP_FAILED);
  };
  const upCutAfterChanges = (step: string) => {
    if (armed?.step === step && 'inPulumiUp' in armed.cut.moment) {
      armed.down();
      throw new ToolFailure(UP_FAILED);
    }
  };
  /** What both moves are given besides their places: the stack, its cluster and file, the operator's SSH. */
  const bothMoves = () => ({
    stack: STACK,
    kubeContext: cluster().context,
    configFile,
    ssh: { keyFile: old.host.privateKeyFile, options: network.sshOptions },
  });

  /**
   * Runs `move` with `cut` armed at `step`: the operator's network goes down at its moment (and the login user's
   * sessions on `machine` are killed, the harshest end of a dropped connection); the error the move ends with, and
   * every line it printed.
   */
  async function cutMove(
    step: string,
    cut: ClusterMoveCut<string>,
    machine: TestHost,
    user: string,
    move: () => Promise<MoveResult>,
  ): Promise<{ error: Error; printed: string[] }> {
    let seen = false;
    let killing: Promise<unknown> | undefined;
    const down = () => {
      seen = true;
      network.drop();
      killing = killSessionsOf(machine, user);
    };
    armed = { step, cut, down };
    const printed: string[] = [];
    const write = process.stdout.write.bind(process.stdout) as (chunk: string | Uint8Array) => boolean;
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      const lines = String(chunk).split('\n');
      printed.push(...lines.filter(Boolean));
      const moment = cut.moment;
      // A printed moment: the network goes down inside the move's print, before its next command.
      if (!seen && 'printed' in moment && lines.some((line) => moment.printed.test(line))) down();
      return write(chunk);
    });
    const began = Date.now();
    try {
      const error = await move().then(
        () => new Error('the move went through'),
        (e: unknown) => e as Error,
      );
      await killing;
      progress(`cut ${cut.what}:\n${error.message}`);
      expect([cut.what, seen]).toEqual([cut.what, true]);
      seconds.push(`cut ${cut.what}: ${((Date.now() - began) / 1000).toFixed(1)} s`);
      return { error, printed };
    } finally {
      spy.mockRestore();
      armed = undefined;
      network.restore();
    }
  }

  beforeAll(async () => {
    if (itWithKubelet === it.skip) return;
    network = await CuttableNetwork.open();
    [old, next] = await Promise.all([
      startReleaseHost('cutpodold', 65, [RELEASE], { packagesInstalled: true }),
      packagesInstalledDisk().then((base) => startTestHost('cutpodnew', 66, { base })),
    ]);
    await joinMoveHosts(next, old);
    // The operator's kubectl: the cluster's, its API server reached through the cuttable network.
    const kubeconfig = JSON.parse(fs.readFileSync(cluster().kubeconfig, 'utf8'));
    const server = new URL(kubeconfig.clusters[0].cluster.server);
    const relayed = await network.relayTo(server.hostname, Number(server.port));
    kubeconfig.clusters[0].cluster.server = `https://${server.hostname}:${relayed}`;
    process.env.KUBECONFIG = path.join(work, 'operator.kubeconfig');
    fs.writeFileSync(process.env.KUBECONFIG, JSON.stringify(kubeconfig));
    process.env.PATH = `${cluster().binDir}:${process.env.PATH}`;
    clientsWithThisEnvironment();

    // The node on the first machine, a few blocks and a marker in its data.
    await runRemoteSteps(old.host, remoteCommands(await declareProgram(recorded, STACK, machineStack(old.host), {})));
    nodeId = parseEnode(await hostRpc(old.host, 'net_enode'))!.nodeId;
    for (let i = 0; i < 40 && Number.parseInt(await hostRpc(old.host, 'eth_blockNumber'), 16) < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await asRoot(old.host, `runuser -u besu -- sh -c 'echo ${MARKER} > ${DATA}/move-marker'`);
    configFile = path.join(work, `Pulumi.${STACK}.yaml`);
    fs.writeFileSync(configFile, yaml.dump({ config: operatorStack(old.host) }));
    fs.mkdirSync(path.join(work, 'values'), { recursive: true });
    fs.writeFileSync(path.join(work, 'values', `${NODE}.yml`), yaml.dump(writer.values()));
  }, 600_000);

  afterAll(async () => {
    if (seconds.length > 0) console.log(`cut moves (Besu stand-in):\n${seconds.join('\n')}`);
    forward?.stop();
    await network?.close();
    await next?.stop();
    if (old) await stopReleaseHost(old);
  });

  itWithKubelet(
    'SSH -> pod: cut at each step, one place runnable at every cut, run again it finishes with the data and the key',
    async () => {
      const headBefore = Number.parseInt(await hostRpc(old.host, 'eth_blockNumber'), 16);
      const { movedText, from, to } = movedIntoCluster(STACK, configFile, NODE, path.join(work, 'check.yaml'));
      // The pod's RPC through a port-forward once it runs (as an operator gives --rpc-url); the move's two pulumi up.
      const request = {
        get rpcUrl() {
          return forward?.url;
        },
        ...bothMoves(),
        from,
        to,
        movedText,
      };
      const bringUp = async (_stack: string, file: string, _node: string, hold: boolean) => {
        upReaches();
        if (hold) await applyHeldFrom(recorded, writer, file);
        else {
          deployed = await declared(file);
          await writer.deploy(deployed);
          forward = await keptPortForward(cluster(), writer.namespace, writer.pod.name, PORTS.rpcHttp);
        }
        upCutAfterChanges(hold ? 'prepare' : 'bringUp');
      };
      const move = () => moveNodeToCluster(request, { bringUp });
      const moveBegan = Date.now() / 1000;
      /** The old node's starts after its first stop by the move (none: it never ran again once stopped). */
      const oldStartsAfterItsStop = async () => {
        const times = await unitTimes(old.host, SERVICE, moveBegan);
        const firstStop = Math.min(...times.filter((t) => !t.started).map((t) => t.at));
        return times.filter((t) => t.started && t.at > firstStop);
      };

      const cuts = toClusterCuts(SERVICE);
      for (const step of Object.keys(CLUSTER_MOVE_STEPS) as ClusterMoveStep[]) {
        const cut = cuts[step];
        const { error } = await cutMove(step, cut, old.host, from.user, move);
        // The move's last line: where it stopped, how to go on.
        expect([cut.what, error instanceof ToolFailure]).toEqual([cut.what, true]);
        expect([cut.what, error.message.split('\n').pop()]).toEqual([
          cut.what,
          clusterMoveCutLine(STACK, NODE, cut.stoppedAt),
        ]);
        // One place runnable: the old node does not run, nor start when asked; the pod runs only once started.
        expect([cut.what, await active(old.host)]).toEqual([cut.what, false]);
        await old.host.ssh(`systemctl start ${SERVICE}`);
        expect([cut.what, await active(old.host)]).toEqual([cut.what, false]);
        expect([cut.what, (await podPhase()) === 'Running']).toEqual([cut.what, cut.newRuns]);
        expect([cut.what, await oldStartsAfterItsStop()]).toEqual([cut.what, []]);
      }

      // Run again: the move finishes.
      const result = await move();
      seconds.push(`SSH -> pod run again after its last cut: ${result.seconds.toFixed(1)} s`);
      expect((await writer.inBesu('cat', `${POD_PATHS.dataDir}/move-marker`)).trim()).toBe(MARKER);
      expect(Number.parseInt(String(await writer.rpcInPod('eth_blockNumber')), 16)).toBeGreaterThanOrEqual(headBefore);
      expect(parseEnode(String(await writer.rpcInPod('net_enode')))?.nodeId).toBe(nodeId);
      expect((await old.host.ssh(`systemctl cat ${SERVICE}`)).code).not.toBe(0);
      // Never both: the pod's first container started after the old node's last stop, which never started again.
      expect(await oldStartsAfterItsStop()).toEqual([]);
      const lastOldStop = Math.max(
        ...(await unitTimes(old.host, SERVICE, moveBegan)).filter((t) => !t.started).map((t) => t.at),
      );
      const podStarts = await podInitStarts(writer);
      expect(podStarts.length).toBeGreaterThan(0);
      expect(Math.min(...podStarts)).toBeGreaterThan(lastOldStop);
    },
  );

  itWithKubelet(
    'pod -> SSH: cut at each step, one place runnable at every cut, run again it finishes with the data and the key',
    async () => {
      expect(deployed.length).toBeGreaterThan(0);
      await writer.inBesu('sh', '-c', `echo ${POD_MARKER} > ${POD_PATHS.dataDir}/pod-marker`);
      const headBefore = Number.parseInt(String(await writer.rpcInPod('eth_blockNumber')), 16);
      // The operator wrote the node's machine in the stack file (its values file stays beside it).
      const clusterText = fs.readFileSync(configFile, 'utf8');
      fs.writeFileSync(configFile, yaml.dump({ config: operatorStack(next) }));
      fs.rmSync(`${configFile}.before-move`);
      const check = path.join(work, 'check.yaml');
      fs.writeFileSync(check, movedToClusterStackFile(fs.readFileSync(configFile, 'utf8'), NODE));
      const from = loadOperatorStack(STACK, check).settings.nodes[0] as KubernetesNodeSettings;
      fs.rmSync(check);
      const to = loadOperatorStack(STACK, configFile).settings.nodes[0] as SshNodeSettings;
      const rpcUrl = forward?.url;
      const move = () =>
        moveNodeFromCluster(
          { ...bothMoves(), from, to, clusterText, rpcUrl },
          {
            // pulumi up of the stack file: the node's steps on the new machine, then the node's cluster objects deleted.
            bringUp: async () => {
              upReaches();
              forward?.stop();
              forward = undefined;
              await runRemoteSteps(next, remoteCommands(await declareProgram(recorded, STACK, machineStack(next), {})));
              upCutAfterChanges('bringUp');
              await deleteClusterObjects(writer, deployed);
            },
          },
        );
      const replicas = async () =>
        (
          await cluster().kubectlOk([
            'get',
            'statefulset',
            names.statefulSet,
            '-n',
            writer.namespace,
            '--ignore-not-found',
            '-o',
            'jsonpath={.spec.replicas}',
          ])
        ).trim();

      let podGoneAt = Infinity;
      const cuts = fromClusterCuts(names.pod);
      // The tool's look at a leaving pod, through the real API server: its pod runs before the move.
      const inCluster = clusterOf(from, cluster().context);
      expect(await stopReachedOfPod(inCluster, NODE)).toBe('running');
      for (const step of Object.keys(MACHINE_FROM_CLUSTER_STEPS) as MachineFromClusterStep[]) {
        for (const cut of cuts[step]) {
          const { error, printed } = await cutMove(step, cut, next, to.user, move);
          const gone = printed.map((line) => / is gone at (\S+);/.exec(line)?.[1]).find(Boolean);
          if (gone) podGoneAt = Math.min(podGoneAt, Date.parse(gone) / 1000);
          expect([cut.what, error instanceof ToolFailure]).toEqual([cut.what, true]);
          expect([cut.what, error.message.split('\n').pop()]).toEqual([
            cut.what,
            machineMoveCutLine(STACK, NODE, cut.stoppedAt, cut.stopReached),
          ]);
          if (cut.stopReached) {
            // Cut inside the stop: the pod may still be stopping (the line said the tool could not tell); the
            // StatefulSet at no pod ends it, and the look then sees it stopped and kept.
            await cluster().kubectlOk([
              'wait',
              '--for=delete',
              `pod/${names.pod}`,
              '-n',
              writer.namespace,
              '--timeout=120s',
            ]);
            expect([cut.what, await stopReachedOfPod(inCluster, NODE)]).toEqual([cut.what, 'kept']);
          }
          // One place runnable: no pod, its StatefulSet kept at no pod; the machine runs the node only once started.
          expect([cut.what, await podPhase()]).toEqual([cut.what, '']);
          expect([cut.what, ['', '0'].includes(await replicas())]).toEqual([cut.what, true]);
          expect([cut.what, await active(next)]).toEqual([cut.what, cut.newRuns]);
        }
      }

      // Run again: the move finishes.
      const result = await move();
      seconds.push(`pod -> SSH run again after its last cut: ${result.seconds.toFixed(1)} s`);
      expect(await asRoot(next, `cat ${DATA}/move-marker`)).toBe(MARKER);
      expect(await asRoot(next, `cat ${DATA}/pod-marker`)).toBe(POD_MARKER);
      expect(Number.parseInt(await hostRpc(next, 'eth_blockNumber'), 16)).toBeGreaterThanOrEqual(headBefore);
      expect(parseEnode(await hostRpc(next, 'net_enode'))?.nodeId).toBe(nodeId);
      expect(await replicas()).toBe('');
      // Never both: the pod was gone (its deletion seen) before the machine's first start of the node.
      const starts = (await unitTimes(next, SERVICE, startedAt)).filter((t) => t.started).map((t) => t.at);
      expect(starts.length).toBeGreaterThan(0);
      expect(Math.min(...starts)).toBeGreaterThan(podGoneAt);
    },
  );
});

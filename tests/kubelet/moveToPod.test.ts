/**
 * `npm run node -- move --to-kubernetes` (docs/moving.md) from a real test host into a pod on a real kubelet: a
 * writer (key custody stack, KEY_ONE on both sides) deployed on the host, moved into the cluster with the tool's own
 * steps over real SSH and real kubectl; each `pulumi up` of the stack file the move wrote is Pulumi's real engine with
 * the real Kubernetes provider (tests/engine/engine.ts, as tests/kubelet/engineUp.test.ts runs them on this tier), the
 * program's own entry run as pulumiUpInCluster runs it: the first with LACCHAIN_MOVING_NODE and LACCHAIN_MOVE_HOLD_NODE
 * naming the node (the StatefulSet made with no pod), the second with LACCHAIN_MOVING_NODE only. The engine's state
 * starts as the last run of the stack on the machine left it (its `nodes` output: the node at its machine; this tier
 * has no command provider to deploy it there, so the machine's steps are the program's, replayed: testing/replay.ts),
 * so a run without the move's variable would refuse. The claims get local volumes as a provisioner would make them
 * (cloudStandin.ts), the Services their static IP from MetalLB, and the provider waits for both. Shown: a marker and
 * the chain height written before the move are in the pod after it (its data volume filled from the machine's last
 * restic backup before the pod's first start); the same key at the new address, and the re-permissioning request
 * naming both enodes; the old service's last stop (the host's journal) before the pod's first container started (its
 * status); the old service removed with its data kept; the next plain `pulumi up` (the engine's, no move variable)
 * changes nothing but its one read of the last run's outputs, the pod the same one, with its data and key. Back out
 * of the pod onto another machine, the machine side is the program's steps replayed and the cluster objects the
 * engine's state holds are deleted as that `pulumi up` deletes them (no command provider here for the engine to run
 * it). Light: companions off (Besu stand-in, a test fixture).
 */
import { joinMoveHosts, movedIntoCluster, moveWriterStack } from '../../testing/moveStack';
import { asRoot, hostRpc, unitTimes as unitsOf } from '../../testing/hostNode';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { DEFAULT_NODE_HOME } from '../../core/catalog/defaults';
import { kubernetesNames, POD_PATHS } from '../../core/catalog/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { PORTS } from '../../core/catalog/ports';
import { parseEnode } from '../../core/identity/nodeKey';
import { backupNames } from '../../core/kubernetes/backups';
import { moveFillPodName } from '../../core/kubernetes/moveFill';
import type { KubernetesNodeSettings, SshNodeSettings } from '../../core/settings/model';
import type { MoveResult } from '../../cli/operations/moveShared';
import { moveNodeFromCluster } from '../../cli/operations/moveFromCluster';
import { moveNodeToCluster } from '../../cli/operations/moveToCluster';
import { nodeClient } from '../../cli/operations/nodeClient';
import { movedToClusterStackFile } from '../../cli/operations/moveStackFile';
import { loadOperatorStack } from '../../cli/operatorStack';
import { clientsWithThisEnvironment, deleteClusterObjects, podInitStarts } from '../../testing/clusterMove';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import { CloudStandin, NO_INGRESS, startCloudStandin } from '../../testing/cluster/cloudStandin';
import { KUBELET_NETWORK } from '../../testing/cluster/kubelet';
import { registerCpuRequestsThatFit } from '../../testing/cluster/kubeletFit';
import type { Manifest } from '../../testing/cluster/manifests';
import { fieldOf } from '../../testing/cluster/objects';
import { onTestNetwork, registerInFolder } from '../../testing/permissioning';
import { keptPortForward, PortForward } from '../../testing/cluster/portForward';
import { KEY_ONE } from '../../testing/fixtures';
import { packagesInstalledDisk } from '../../testing/host/packagesDisk';
import { startTestHost, TestHost } from '../../testing/host/testHost';
import { declareProgram } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { startReleaseHost, stopReleaseHost, ReleaseHost } from '../../testing/releaseHost';
import { changedCommands, remoteCommands, RemoteStep, runRemoteSteps } from '../../testing/replay';
import { progress } from '../../testing/hostSuite';
import { workFolder } from '../../testing/workFolder';
import type { Stack } from '@pulumi/pulumi/automation';
import { nodePlace } from '../../core/node/place';
import type { EngineProject } from '../engine/engine';
import { changesBesideLastRunRead, engineProject, engineSuite, serveGenesis } from '../engine/engine';
import { LAST_RUN_READ, lastRunAt, upAsMove, upStepsOf } from '../engine/engine';
import { engineProgram } from '../engine/program';

jest.setTimeout(15 * 60 * 1000);
const engine = engineSuite('Moving a node into a pod under the real engine');

/** The release on both sides: the network's (the pod's image of it is imported). */
const RELEASE = NETWORKS['open-protestnet'].defaultBesuVersion;
const NODE = 'writer';
const DATA = `${DEFAULT_NODE_HOME}/data`;
const MARKER = 'written-before-the-move';
/** Written in the pod before it moves back to a machine. */
const POD_MARKER = 'written-in-the-pod';
/** A secret as the operator's stack file holds it once `pulumi config set --path --secret` stored it. */
const ENCRYPTED = { secure: 'v1:encrypted' };
const STACK = 'testnet';

const work = workFolder('lacchain-kubelet-move-');
const writer = kubeletNode(NODE, 'kubelet-move', { work });
const { cluster, itWithKubelet } = writer;
const recorded = recordProgram();
const names = kubernetesNames(NODE);

engine.describe('npm run node -- move --to-kubernetes, from a machine into a pod (SSH to pod)', () => {
  let old: ReleaseHost;
  /** The machine the pod moves to (pod to SSH). */
  let next: TestHost | undefined;
  let forward: PortForward | undefined;

  /** The stack of one writer on the machine, its release served from the host's own server; KEY_ONE its key. */
  const machineStack = (host: TestHost = old.host): Record<string, unknown> => {
    const config = moveWriterStack(host, old, RELEASE, { nodeName: 'e2e-move-pod', dnsName: 'move-pod.e2e.test' });
    config['lacchain:nodeKeys'] = { [NODE]: KEY_ONE };
    return config;
  };
  const root = asRoot;
  const rpc = hostRpc;
  /** The epoch seconds of each Started and Stopped line of the besu unit in the host's journal. */
  const unitTimes = (host: TestHost) => unitsOf(host, 'besu');
  /** The engine's project (its stack file, values/, state and provider), its stack, and what stands for the cloud. */
  let project: EngineProject;
  let stack: Stack;
  let genesis: Awaited<ReturnType<typeof serveGenesis>>;
  let cloud: CloudStandin;
  const statefulSet = () => ({ kind: 'statefulset', name: names.statefulSet, namespace: writer.namespace });

  beforeAll(async () => {
    if (itWithKubelet === it.skip) return;
    old = await startReleaseHost('movepod', 61, [RELEASE], { packagesInstalled: true });
    // The operator's kubectl: the cluster's, with its kubeconfig.
    process.env.KUBECONFIG = cluster().kubeconfig;
    process.env.PATH = `${cluster().binDir}:${process.env.PATH}`;
    clientsWithThisEnvironment();
    // The operator's project: the stack file (its key a secret of the engine's), the node's values file beside it.
    genesis = await serveGenesis();
    project = engineProject(engine.provider(), cluster().kubeconfig);
    configFile = path.join(project.dir, `Pulumi.${STACK}.yaml`);
    const stackFile: Record<string, unknown> = { ...machineStack(), 'lacchain:kubeContext': cluster().context };
    delete stackFile['lacchain:nodeKeys'];
    fs.writeFileSync(configFile, yaml.dump({ config: stackFile }));
    fs.writeFileSync(path.join(project.dir, 'values', `${NODE}.yml`), yaml.dump(writer.values()));
    const program = engineProgram(NETWORKS['open-protestnet'].name, genesis.url, project.dir);
    stack = await project.stack(STACK, async () => {
      registerCpuRequestsThatFit();
      return program();
    });
    await stack.setConfig(`lacchain:nodeKeys.${NODE}`, { value: KEY_ONE, secret: true }, true);
    // Each claim the provider makes gets a volume of the worker (MetalLB gives the Services their static IPs).
    cloud = startCloudStandin(cluster(), cluster().kubelets[0], () => undefined, NO_INGRESS);
  }, 600_000);

  afterAll(async () => {
    forward?.stop();
    await next?.stop();
    if (old) await stopReleaseHost(old);
    await cloud?.stop();
    await genesis?.close();
    project?.remove();
  });

  let result: MoveResult;
  let configFile: string;
  /** What both moves of the suite are given besides their places: the stack, its cluster and file, the operator's SSH. */
  const bothMoves = () => ({
    stack: STACK,
    kubeContext: cluster().context,
    configFile,
    ssh: { keyFile: old.host.privateKeyFile, options: [] },
  });
  /** The StatefulSet's replicas after each `pulumi up` of the move. */
  const replicas: string[] = [];
  /** The pod the move started (its uid), its height once the move ended. */
  let podUid = '';
  let headAfterMove = 0;

  itWithKubelet(
    'moves the node into the pod with its data and key, the old one stopped before the pod first starts',
    async () => {
      await runRemoteSteps(old.host, remoteCommands(await declareProgram(recorded, STACK, machineStack(), {})));
      const oldEnode = await rpc(old.host, 'net_enode');
      for (let i = 0; i < 40 && Number.parseInt(await rpc(old.host, 'eth_blockNumber'), 16) < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await root(old.host, `runuser -u besu -- sh -c 'echo ${MARKER} > ${DATA}/move-marker'`);
      const headBefore = Number.parseInt(await rpc(old.host, 'eth_blockNumber'), 16);

      // The operator's stack file, as the engine's last run on the machine left its state (the node at its machine).
      const { movedText, from, to } = movedIntoCluster(STACK, configFile, NODE, path.join(project.dir, 'check.yaml'));
      await lastRunAt(stack, { [NODE]: nodePlace(from) });

      result = await moveNodeToCluster(
        {
          ...bothMoves(),
          from,
          to,
          movedText,
          // The pod's RPC through a port-forward once it runs, as an operator gives --rpc-url.
          get rpcUrl() {
            return forward?.url;
          },
        },
        {
          // pulumi up of the stack file the move wrote (the engine's stack file), as pulumiUpInCluster runs it.
          bringUp: async (name, file, node, hold) => {
            expect([name, file]).toEqual([STACK, configFile]);
            if (!hold) {
              // The data volume the move filled: the node, its bootnodes and the pods' network peer in the contract,
              // that peer its static node (kubeletNode.ts's deploy): a real peer, so the pod gets Ready.
              const data = cloud.volumes()[names.dataVolume];
              onTestNetwork(data, KUBELET_NETWORK, cluster().kubelets[0].networkPeer);
              registerInFolder(data, writer.permissioned);
            }
            expect((await upAsMove(stack, node, hold)).summary.result).toBe('succeeded');
            replicas.push(await fieldOf(cluster(), statefulSet(), '{.spec.replicas}'));
            if (!hold) forward = await keptPortForward(cluster(), writer.namespace, writer.pod.name, PORTS.rpcHttp);
          },
        },
      );
      console.log(`move SSH -> pod took ${result.seconds.toFixed(1)} s (Besu stand-in)`);

      // The first pulumi up made the StatefulSet with no pod; the second with the node's one.
      expect(replicas).toEqual(['0', '1']);
      // The data: the marker and at least the height before the move, in the pod.
      expect((await writer.inBesu('cat', `${POD_PATHS.dataDir}/move-marker`)).trim()).toBe(MARKER);
      expect(Number.parseInt(String(await writer.rpcInPod('eth_blockNumber')), 16)).toBeGreaterThanOrEqual(headBefore);
      // The same key (the node id) at the pod's address; the re-permissioning request names both enodes.
      const newEnode = String(await writer.rpcInPod('net_enode'));
      expect(newEnode).toBe(writer.enode);
      expect(parseEnode(newEnode)?.nodeId).toBe(parseEnode(oldEnode)?.nodeId);
      expect(parseEnode(newEnode)?.host).not.toBe(parseEnode(oldEnode)?.host);
      expect(result.newEnode).toBe(newEnode);
      expect(result.repermissioning).toMatchObject({
        removeEnode: oldEnode,
        enode: newEnode,
        network: 'open-protestnet',
      });
      expect(result.repermissioning?.procedure).toContain('tech.support@lac-net.net');
      // What check reads of the pod: the enode the node had on its machine (core/operations/causes.ts).
      const client = nodeClient(to, {
        stack: STACK,
        configFile,
        kubeContext: cluster().context,
        ssh: { options: [] },
        rpcUrl: forward?.url,
      });
      expect(await client.movedFrom?.()).toBe(oldEnode);

      // Never both: the pod's first container (its first init container) started after the old node's last stop, and
      // the old node never started again after it.
      const times = await unitTimes(old.host);
      const lastOldStop = Math.max(...times.filter((t) => !t.started).map((t) => t.at));
      expect(times.filter((t) => t.started && t.at > lastOldStop)).toEqual([]);
      const podStarts = await podInitStarts(writer);
      expect(podStarts.length).toBeGreaterThan(0);
      console.log(
        `the old service stopped ${(Math.min(...podStarts) - lastOldStop).toFixed(1)} s before the pod's first container started`,
      );
      expect(Math.min(...podStarts)).toBeGreaterThan(lastOldStop);
      // The fill pod is gone; the old machine has no service any more, its data is kept.
      expect(
        await cluster().kubectlOk(['get', 'pod', '-n', writer.namespace, moveFillPodName(NODE), '--ignore-not-found']),
      ).toBe('');
      expect((await old.host.ssh('systemctl cat besu')).code).not.toBe(0);
      expect(await root(old.host, `cat ${DATA}/move-marker`)).toBe(MARKER);
      // The stack file names the node a cluster node; the one before the move is kept beside it.
      expect(fs.readFileSync(configFile, 'utf8')).toBe(movedText);
      expect(fs.existsSync(`${configFile}.before-move`)).toBe(true);
      // Every claim the engine made got its volume (the stand-in of the cloud's provisioner made no error).
      expect(await cloud.stop()).toEqual([]);
      podUid = await fieldOf(cluster(), writer.pod, '{.metadata.uid}');
      headAfterMove = Number.parseInt(String(await writer.rpcInPod('eth_blockNumber')), 16);
    },
  );

  itWithKubelet(
    'the next plain pulumi up (real engine, no move variable) changes nothing; the pod keeps its data and key',
    async () => {
      expect(podUid).not.toBe('');
      const { result: next, steps } = await upStepsOf(stack);
      expect(next.summary.result).toBe('succeeded');
      // Nothing but the run's one read of its last outputs, which now have the node in the pod.
      expect(steps).toEqual([LAST_RUN_READ]);
      expect(Object.keys(changesBesideLastRunRead(next.summary.resourceChanges))).toEqual(['same']);
      expect(next.outputs.nodes.value[NODE].place).toBe(`kubernetes ${cluster().context}/${writer.namespace}`);
      expect(next.outputs.nodes.value[NODE].enode).toBe(writer.enode);
      // The same pod, its data and its key.
      expect(await fieldOf(cluster(), writer.pod, '{.metadata.uid}')).toBe(podUid);
      expect(await fieldOf(cluster(), statefulSet(), '{.spec.replicas}')).toBe('1');
      expect((await writer.inBesu('cat', `${POD_PATHS.dataDir}/move-marker`)).trim()).toBe(MARKER);
      expect(Number.parseInt(String(await writer.rpcInPod('eth_blockNumber')), 16)).toBeGreaterThanOrEqual(
        headAfterMove,
      );
      expect(String(await writer.rpcInPod('net_enode'))).toBe(writer.enode);
    },
  );

  itWithKubelet(
    'moves the pod onto another machine (pod to SSH) with its data and key, the pod gone before the machine first starts it',
    async () => {
      next = await startTestHost('movepodb', 62, { base: await packagesInstalledDisk() });
      await joinMoveHosts(next, old);
      // Written in the pod, and its height, before the move.
      await writer.inBesu('sh', '-c', `echo ${POD_MARKER} > ${POD_PATHS.dataDir}/pod-marker`);
      const headBefore = Number.parseInt(String(await writer.rpcInPod('eth_blockNumber')), 16);
      const podEnode = String(await writer.rpcInPod('net_enode'));

      // The operator wrote the node's machine in the stack file (its values file stays beside it).
      const clusterText = fs.readFileSync(configFile, 'utf8');
      const onMachine = {
        ...machineStack(next),
        'lacchain:nodeKeys': { [NODE]: ENCRYPTED },
        'lacchain:kubeContext': cluster().context,
      };
      fs.writeFileSync(configFile, yaml.dump({ config: onMachine }));
      fs.rmSync(`${configFile}.before-move`);
      const check = path.join(project.dir, 'check.yaml');
      fs.writeFileSync(check, movedToClusterStackFile(fs.readFileSync(configFile, 'utf8'), NODE));
      const from = loadOperatorStack(STACK, check).settings.nodes[0] as KubernetesNodeSettings;
      fs.rmSync(check);
      const to = loadOperatorStack(STACK, configFile).settings.nodes[0] as SshNodeSettings;
      expect([from.target, to.target]).toEqual(['kubernetes', 'ssh']);

      // What pulumi up of that stack file deletes out of the cluster: the objects the engine's state holds.
      const resources: { type: string; outputs: Manifest }[] = (await stack.exportStack()).deployment.resources ?? [];
      const inState = resources.filter((r) => r.type.startsWith('kubernetes:')).map((r) => r.outputs);
      expect(inState.map((m) => m.kind)).toContain('StatefulSet');
      let provisioned: RemoteStep[] = [];
      const back = await moveNodeFromCluster(
        { ...bothMoves(), from, to, clusterText, rpcUrl: forward?.url },
        {
          // pulumi up of the stack file: the node's steps on the new machine, then the node's cluster objects deleted.
          bringUp: async () => {
            forward?.stop();
            forward = undefined;
            const declared = await declareProgram(recorded, STACK, machineStack(next), {});
            provisioned = remoteCommands(declared);
            await runRemoteSteps(next!, provisioned);
            await deleteClusterObjects(writer, inState);
          },
        },
      );
      console.log(`move pod -> SSH took ${back.seconds.toFixed(1)} s (Besu stand-in)`);

      // The data: both markers and at least the pod's height before the move, on the machine.
      expect(await root(next, `cat ${DATA}/move-marker`)).toBe(MARKER);
      expect(await root(next, `cat ${DATA}/pod-marker`)).toBe(POD_MARKER);
      expect(Number.parseInt(await rpc(next, 'eth_blockNumber'), 16)).toBeGreaterThanOrEqual(headBefore);
      // The same key at the machine's address; the request names both enodes.
      const newEnode = await rpc(next, 'net_enode');
      expect(parseEnode(newEnode)?.nodeId).toBe(parseEnode(podEnode)?.nodeId);
      expect(parseEnode(newEnode)?.host).toBe(next.ip);
      expect(back.repermissioning).toMatchObject({ removeEnode: podEnode, enode: newEnode });
      // What check reads on the machine: the enode the node had in the pod.
      const client = nodeClient(to, {
        stack: STACK,
        configFile,
        ssh: { keyFile: old.host.privateKeyFile, options: [] },
      });
      expect(await client.movedFrom?.()).toBe(podEnode);
      // Never both: the pod was gone (its deletion seen) before the machine's first start of the node.
      const starts = (await unitTimes(next)).filter((t) => t.started).map((t) => t.at);
      expect(starts.length).toBeGreaterThan(0);
      console.log(
        `the pod was gone ${(Math.min(...starts) - Date.parse(back.stoppedAt) / 1000).toFixed(1)} s before the machine's first start`,
      );
      expect(Math.min(...starts)).toBeGreaterThan(Date.parse(back.stoppedAt) / 1000);
      // The cluster: no StatefulSet, the volumes kept.
      const ns = ['-n', writer.namespace];
      progress(`left in the cluster:\n${await cluster().kubectlOk(['get', 'all,pvc,secret', ...ns])}`);
      expect(await cluster().kubectlOk(['get', 'statefulset', ...ns, '--ignore-not-found', '-o', 'name'])).toBe('');
      const volumes = await cluster().kubectlOk(['get', 'pvc', ...ns, '-o', 'jsonpath={.items[*].metadata.name}']);
      expect(volumes.split(' ').sort()).toEqual([names.dataVolume, backupNames(NODE).volume].sort());
      // The next pulumi up of the stack file changes nothing on the machine.
      const written = (yaml.load(fs.readFileSync(configFile, 'utf8')) as { config: Record<string, unknown> }).config;
      const again = remoteCommands(
        await declareProgram(recorded, STACK, { ...written, 'lacchain:nodeKeys': { [NODE]: KEY_ONE } }, {}),
      );
      expect(changedCommands(provisioned, again).map((step) => step.name)).toEqual([]);
    },
  );
});

/**
 * `npm run node -- move --to-kubernetes` (docs/moving.md) from a real test host into a pod on a real kubelet: a
 * writer (key custody stack, KEY_ONE on both sides) deployed on the host, moved into the cluster with the tool's own
 * steps over real SSH and real kubectl; each `pulumi up` of the stack file the move wrote is the program's manifests
 * for it applied server-side (the first with the StatefulSet held at no pod, as LACCHAIN_MOVE_HOLD_NODE makes it), set
 * up as testing/cluster/kubeletNode.ts sets up the tier's nodes. Shown: a marker and the chain height written before
 * the move are in the pod after it (its data volume filled from the machine's last restic backup before the pod's
 * first start); the same key at the new address, and the re-permissioning request naming both enodes; the old
 * service's last stop (the host's journal) before the pod's first container started (its status); the old service
 * removed with its data kept; the next `pulumi up` of the stack file the move wrote declares the same manifests.
 * Light: companions off (Besu stand-in, a test fixture).
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
import { clientsWithThisEnvironment, declaredFrom, deleteClusterObjects } from '../../testing/clusterMove';
import { applyHeldFrom, podInitStarts } from '../../testing/clusterMove';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import type { Manifest } from '../../testing/cluster/manifests';
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

jest.setTimeout(15 * 60 * 1000);

/** The release on both sides: the network's (the pod's image of it is imported). */
const RELEASE = NETWORKS['open-protestnet'].defaultBesuVersion;
const NODE = 'writer';
const DATA = `${DEFAULT_NODE_HOME}/data`;
const MARKER = 'written-before-the-move';
/** Written in the pod before it moves back to a machine. */
const POD_MARKER = 'written-in-the-pod';
/** A secret as the operator's stack file holds it once `pulumi config set --path --secret` stored it. */
const ENCRYPTED = { secure: 'v1:encrypted' };

const work = workFolder('lacchain-kubelet-move-');
const writer = kubeletNode(NODE, 'kubelet-move', { work });
const { cluster, itWithKubelet } = writer;
const recorded = recordProgram();
const names = kubernetesNames(NODE);

describe('npm run node -- move --to-kubernetes, from a machine into a pod (SSH to pod)', () => {
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
  /** `pulumi up` of the stack file the move wrote: the program's manifests for it (its secrets as the engine has them). */
  const declared = (file: string) => declaredFrom(recorded, writer, file);

  beforeAll(async () => {
    if (itWithKubelet === it.skip) return;
    old = await startReleaseHost('movepod', 61, [RELEASE], { packagesInstalled: true });
    // The operator's kubectl: the cluster's, with its kubeconfig.
    process.env.KUBECONFIG = cluster().kubeconfig;
    process.env.PATH = `${cluster().binDir}:${process.env.PATH}`;
    clientsWithThisEnvironment();
  }, 600_000);

  afterAll(async () => {
    forward?.stop();
    await next?.stop();
    if (old) await stopReleaseHost(old);
  });

  let result: MoveResult;
  let configFile: string;
  /** What both moves of the suite are given besides their places: the stack, its cluster and file, the operator's SSH. */
  const bothMoves = () => ({
    stack: 'testnet',
    kubeContext: cluster().context,
    configFile,
    ssh: { keyFile: old.host.privateKeyFile, options: [] },
  });
  let held: Manifest[] = [];
  let deployed: Manifest[] = [];

  itWithKubelet(
    'moves the node into the pod with its data and key, the old one stopped before the pod first starts',
    async () => {
      await runRemoteSteps(old.host, remoteCommands(await declareProgram(recorded, 'testnet', machineStack(), {})));
      const oldEnode = await rpc(old.host, 'net_enode');
      for (let i = 0; i < 40 && Number.parseInt(await rpc(old.host, 'eth_blockNumber'), 16) < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await root(old.host, `runuser -u besu -- sh -c 'echo ${MARKER} > ${DATA}/move-marker'`);
      const headBefore = Number.parseInt(await rpc(old.host, 'eth_blockNumber'), 16);

      // The operator's stack file (its key encrypted, the cluster's context) and the node's values file beside it.
      configFile = path.join(work, 'Pulumi.testnet.yaml');
      const stack = {
        ...machineStack(),
        'lacchain:nodeKeys': { [NODE]: ENCRYPTED },
        'lacchain:kubeContext': cluster().context,
      };
      fs.writeFileSync(configFile, yaml.dump({ config: stack }));
      fs.mkdirSync(path.join(work, 'values'), { recursive: true });
      fs.writeFileSync(path.join(work, 'values', `${NODE}.yml`), yaml.dump(writer.values()));
      const { movedText, from, to } = movedIntoCluster('testnet', configFile, NODE, path.join(work, 'check.yaml'));

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
          bringUp: async (_stack, file, _node, hold) => {
            if (hold) {
              held = await applyHeldFrom(recorded, writer, file);
            } else {
              deployed = await declared(file);
              await writer.deploy(deployed);
              forward = await keptPortForward(cluster(), writer.namespace, writer.pod.name, PORTS.rpcHttp);
            }
          },
        },
      );
      console.log(`move SSH -> pod took ${result.seconds.toFixed(1)} s (Besu stand-in)`);

      // The first pulumi up made the StatefulSet with no pod; the second with the node's one.
      const replicas = (manifests: Manifest[]) => manifests.find((m) => m.kind === 'StatefulSet')!.spec.replicas;
      expect([replicas(held), replicas(deployed)]).toEqual([0, 1]);
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
        stack: 'testnet',
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
    },
  );

  itWithKubelet('the next pulumi up of the stack file the move wrote changes nothing', async () => {
    expect(deployed.length).toBeGreaterThan(0);
    expect(await declared(configFile)).toEqual(deployed);
  });

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
      const stack = {
        ...machineStack(next),
        'lacchain:nodeKeys': { [NODE]: ENCRYPTED },
        'lacchain:kubeContext': cluster().context,
      };
      fs.writeFileSync(configFile, yaml.dump({ config: stack }));
      fs.rmSync(`${configFile}.before-move`);
      const check = path.join(work, 'check.yaml');
      fs.writeFileSync(check, movedToClusterStackFile(fs.readFileSync(configFile, 'utf8'), NODE));
      const from = loadOperatorStack('testnet', check).settings.nodes[0] as KubernetesNodeSettings;
      fs.rmSync(check);
      const to = loadOperatorStack('testnet', configFile).settings.nodes[0] as SshNodeSettings;
      expect([from.target, to.target]).toEqual(['kubernetes', 'ssh']);

      let provisioned: RemoteStep[] = [];
      const back = await moveNodeFromCluster(
        { ...bothMoves(), from, to, clusterText, rpcUrl: forward?.url },
        {
          // pulumi up of the stack file: the node's steps on the new machine, then the node's cluster objects deleted.
          bringUp: async () => {
            forward?.stop();
            forward = undefined;
            const declared = await declareProgram(recorded, 'testnet', machineStack(next), {});
            provisioned = remoteCommands(declared);
            await runRemoteSteps(next!, provisioned);
            await deleteClusterObjects(writer, deployed);
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
        stack: 'testnet',
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
        await declareProgram(recorded, 'testnet', { ...written, 'lacchain:nodeKeys': { [NODE]: KEY_ONE } }, {}),
      );
      expect(changedCommands(provisioned, again).map((step) => step.name)).toEqual([]);
    },
  );
});

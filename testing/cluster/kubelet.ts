/**
 * A real worker for the test cluster (testing/cluster/cluster.ts): Debian's containerd and runc, and the kubelet built
 * from k8s.io/kubernetes (tools/kubernetes/build-kubelet.sh), registered with the cluster's API server under a Node
 * name of the test's, its pods on a CNI bridge of its own (KUBELET_BRIDGE, on KUBELET_SUBNET: no gateway, no
 * masquerading, so the machine's firewall stays as it is and the pods reach nothing beyond it but the worker's LAN and
 * the `kubernetes` Service, routed to the API server on the loopback: apiServiceRoute.ts). Beside the kubelet, as on a
 * bare-metal node: kube-proxy (serviceProxy.ts: the Services' addresses to their pods) and MetalLB in layer 2
 * (metallb.ts: the LoadBalancer Services' static IPs, from a pool of the worker's LAN, workerLan.ts, where the peers
 * outside the cluster are).
 * The settings this machine needs (../shared/facts/toolchain.md, "A real kubelet with containerd"): cgroup v1 and
 * the cgroupfs driver, no swap check, containerd's `restrict_oom_score_adj`, the pause image imported locally.
 *
 * One real worker runs on a machine at a time (a lock folder; a second waits): two kubelets would share the fixed
 * folders and the bridge. Stopping it cordons it and deletes its pods first, the controllers that would make them
 * again before them (the kubelet stops their containers and tears their network down), then stops the kubelet and
 * containerd, ends any shim containerd left (runtimeShims.ts), removes every folder, mount, namespace, cgroup, the
 * Service's route and the bridge it made, and puts back the kernel settings the kubelet changed
 * (testing/cluster/hostChanges.ts). The kubelet, kube-proxy and MetalLB can be started again under another Node name
 * on the same containerd, bridge and LAN (`rename`: the kubelet tier's shared worker, sharedKubelet.ts).
 */
import { execFile, execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { apiField } from './apiReads';
import { NFT, removeApiServiceRoute, routeApiService } from './apiServiceRoute';
import { builtToolDir, WORKER_TOOL_SCRIPTS } from './builtTools';
import { signCertificate } from './certificates';
import { pauseImage } from './images';
import { HostState, makeCgroup, recordHostState, removeCgroup, restoreHostState, unmountUnder } from './hostChanges';
import { ClusterProcess, startProcess, stopProcess, waitFor } from './processes';
import { MetalLb, startMetalLb } from './metallb';
import { endShims } from './runtimeShims';
import { timing } from './tierTiming';
import { SERVICE_CLUSTER_IP_RANGE } from './serviceNetwork';
import { removeServiceProxyTables, ServiceProxy, startServiceProxy } from './serviceProxy';
import { deleteWorkerLan, makeWorkerLan, WORKER_LAN_NETWORK } from './workerLan';
import { freePort } from '../ports';
import { PlainPeer, startPlainPeer } from '../networkPeer';
import { TEST_HOSTS_NETWORK } from '../host/testHost';

/** The bridge the worker's pods are on, and its address range (the bridge holds .1, the node's address). */
export const KUBELET_BRIDGE = 'lacchain-kub0';
export const KUBELET_SUBNET = { prefix: '10.232.1', bits: 24 };

/** The pods' range. */
const POD_NETWORK = `${KUBELET_SUBNET.prefix}.0/${KUBELET_SUBNET.bits}`;
/**
 * The pods' network and the worker's LAN, the only ones a pod's Besu stand-in dials and accepts (never a real
 * network's bootnode): CIDRs, comma-separated.
 */
export const KUBELET_NETWORK = `${POD_NETWORK},${WORKER_LAN_NETWORK}`;
/**
 * The port of the pods' network peer, on the bridge's address: outside the Services' node-port range (30000-32767),
 * whose ports kube-proxy takes on the node's address (a Service's node port or health-check port there would take
 * the peer's).
 */
const NETWORK_PEER_PORT = 29303;

/** The cgroup the kubelet puts its pods under (in each v1 hierarchy). */
const CGROUP_ROOT = 'lacchain-test-kubelet';

/** The lock folder that keeps a second real worker from starting on this machine while one runs. */
const LOCK_DIR = '/run/lacchain-test-kubelet.lock';

/** iproute2's ip. */
const IP = '/usr/sbin/ip';

/** The pause image's reference (containerd's sandbox image), imported from the pause program's build. */
export const PAUSE_IMAGE = 'localhost/lacchain-test/pause:3.10.2';

/** What a worker needs of the cluster it joins. */
export interface KubeletJoin {
  /** The API server's URL. */
  server: string;
  /** The cluster's CA (certificate and key), which signs the kubelet's client certificate. */
  ca: string;
  caKey: string;
  /** The kubeconfig of the cluster's administrator, for deleting the worker's pods at its stop. */
  adminKubeconfig: string;
  kubectl: string;
}

/** A running real worker. */
export interface KubeletWorker {
  name: string;
  /** The node's address: the bridge's. */
  address: string;
  /** The folder the worker's local volumes are made in (testing/cluster/localVolumes.ts). */
  volumesDir: string;
  /**
   * The enode of the pods' network peer: a plain peer on the bridge's address (testing/networkPeer.ts) standing for the
   * network's nodes a pod reaches; a pod's Besu stand-in dials it when its data folder names it
   * (testing/permissioning.ts: onTestNetwork) and keeps it when its contract registers it.
   */
  networkPeer: string;
  /**
   * Imports an OCI image archive into containerd's Kubernetes namespace, also under `extraNames` (skipped when the same
   * archive was imported under the same names before and containerd still has it).
   */
  importImage(archive: string, name: string, extraNames?: string[]): Promise<void>;
  /** The ids of containerd's tasks (the containers running on the worker, its pods' sandboxes among them). */
  containers(): Promise<string[]>;
  /**
   * Stops the kubelet, kube-proxy and MetalLB (deleting the worker's pods first) and starts them again as Node `name`
   * (the bridge, the LAN, containerd with its images and the network peer stay): the shared tier's worker taking the
   * name a file's values pin (sharedKubelet.ts). Nothing when it has that name already.
   */
  rename(name: string): Promise<void>;
  /** The kubelet's and containerd's processes (their logs, for a failure message). */
  processes: ClusterProcess[];
  stop(): Promise<void>;
}

/** Where the worker's tools are (tools/kubernetes/build-kubelet.sh) and the runtime's (Debian's packages). */
export function kubeletPrerequisites(): string | undefined {
  if (process.getuid?.() !== 0) return 'a real worker needs root';
  for (const binary of ['/usr/bin/containerd', '/usr/bin/ctr', '/usr/sbin/runc', '/usr/lib/cni/bridge', NFT]) {
    if (!fs.existsSync(binary))
      return `${binary} is not installed (tests/setup.sh installs Debian's containerd, runc, CNI plugins and nftables)`;
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Takes the machine's real-worker lock, waiting while a live process holds it: 20 minutes at most, the time for the
 * other kubelet suites of a run (tests/kubelet/, about 3 minutes each) to take it in turn.
 */
async function takeLock(): Promise<void> {
  const deadline = Date.now() + 1_200_000;
  for (;;) {
    try {
      fs.mkdirSync(LOCK_DIR);
      fs.writeFileSync(path.join(LOCK_DIR, 'pid'), String(process.pid));
      return;
    } catch {
      const holder = Number(fs.readFileSync(path.join(LOCK_DIR, 'pid'), { encoding: 'utf8', flag: 'a+' }) || 0);
      let alive = false;
      try {
        if (holder > 0) process.kill(holder, 0);
        alive = holder > 0;
      } catch {
        alive = false;
      }
      if (!alive) fs.rmSync(LOCK_DIR, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`another real worker (process ${holder}) holds ${LOCK_DIR}`);
      else await sleep(1000);
    }
  }
}

function releaseLock(): void {
  const holder = fs.existsSync(path.join(LOCK_DIR, 'pid')) ? fs.readFileSync(path.join(LOCK_DIR, 'pid'), 'utf8') : '';
  if (holder === String(process.pid)) fs.rmSync(LOCK_DIR, { recursive: true, force: true });
}

function ip(args: string[]): void {
  execFileSync(IP, args, { stdio: 'pipe' });
}

/** The bridge's address: the node's, and the pods' gateway to the Service range. */
const BRIDGE_ADDRESS = `${KUBELET_SUBNET.prefix}.1`;

/** Makes the pods' bridge (made again when a killed run left it). */
function makeBridge(): string {
  deleteBridge();
  ip(['link', 'add', KUBELET_BRIDGE, 'type', 'bridge']);
  ip(['addr', 'add', `${BRIDGE_ADDRESS}/${KUBELET_SUBNET.bits}`, 'dev', KUBELET_BRIDGE]);
  ip(['link', 'set', KUBELET_BRIDGE, 'up']);
  return BRIDGE_ADDRESS;
}

function deleteBridge(): void {
  try {
    ip(['link', 'delete', KUBELET_BRIDGE]);
  } catch {
    // Not there.
  }
}

/**
 * The CNI network: the bridge, addresses from the range (after .9), no default gateway, no masquerading; only the
 * Service range (to the API server: apiServiceRoute.ts), the worker's LAN (the peers outside the cluster) and the test
 * hosts' network (a mixed stack's machines, tests/kubelet/mixedStackPeers.test.ts) routed through the bridge's address.
 */
function cniConfig(dir: string) {
  return {
    cniVersion: '1.0.0',
    name: 'lacchain-test',
    plugins: [
      {
        type: 'bridge',
        bridge: KUBELET_BRIDGE,
        isGateway: false,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [
            [
              {
                subnet: `${KUBELET_SUBNET.prefix}.0/${KUBELET_SUBNET.bits}`,
                rangeStart: `${KUBELET_SUBNET.prefix}.10`,
                gateway: BRIDGE_ADDRESS,
              },
            ],
          ],
          routes: [{ dst: SERVICE_CLUSTER_IP_RANGE }, { dst: WORKER_LAN_NETWORK }, { dst: TEST_HOSTS_NETWORK }],
          dataDir: path.join(dir, 'cni', 'ipam'),
        },
      },
    ],
  };
}

/** containerd's configuration: its own root, state and socket under `dir`, the CRI settings this machine needs. */
function containerdConfig(dir: string): string {
  return `version = 2
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "${dir}/containerd.sock"
[ttrpc]
  address = "${dir}/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${dir}/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
`;
}

/** The kubelet's configuration (KubeletConfiguration): what this machine needs, and quick syncs for the tests. */
function kubeletConfig(dir: string, nodeDir: string, address: string, port: number, healthzPort: number, ca: string) {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${CGROUP_ROOT}`,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${dir}/containerd.sock`,
    address,
    port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort,
    podLogsDir: path.join(nodeDir, 'pod-logs'),
    resolvConf: '',
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: ca } },
    authorization: { mode: 'Webhook' },
    // A Secret's or ConfigMap's change reaches a mounted volume within a few seconds, not a minute.
    syncFrequency: '5s',
    // No eviction nor image collection on a shared test machine's disk.
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
      'nodefs.inodesFree': '1%',
    },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    staticPodPath: '',
    // The machine's iptables are left alone (no KUBE-FIREWALL, KUBE-IPTABLES-HINT or canary chains, which outlive the
    // kubelet): no kube-proxy here reads them, and the loopback guard they hold is the route's own (apiServiceRoute.ts).
    makeIPTablesUtilChains: false,
  };
}

function kubeconfigFor(server: string, ca: string, cert: string, key: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server, 'certificate-authority': ca } }],
    users: [{ name: 'node', user: { 'client-certificate': cert, 'client-key': key } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'node' } }],
    'current-context': 'test',
  });
}

function runOk(command: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${command} ${args.join(' ')} failed: ${stderr || error.message}`)) : resolve(stdout),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** The kinds whose controllers make a deleted pod again at once, even on a cordoned worker when it names the node. */
const POD_MAKERS = 'statefulsets,deployments,replicasets,daemonsets,cronjobs,jobs';

/**
 * Deletes every pod on the worker `node`, at once (no grace period), and first, with their pods left, the controllers
 * that would make them again: a StatefulSet's pod names its worker (`nodeName`), which a cordon does not stop, so the
 * worker would start it again while it stops (its containers never all stopped, and a shim left behind:
 * runtimeShims.ts).
 */
export async function deletePodsOf(admin: (args: string[]) => Promise<string>, node: string): Promise<void> {
  await admin(['delete', POD_MAKERS, '--all', '-A', '--cascade=orphan', '--timeout=60s']);
  await admin([
    'delete',
    'pods',
    '-A',
    '--field-selector',
    `spec.nodeName=${node}`,
    '--force',
    '--grace-period=0',
    '--wait=false',
  ]);
}

/** What runs for the worker's Node: the kubelet registered under its name, and kube-proxy and MetalLB beside it. */
interface WorkerNode {
  processes: ClusterProcess[];
  /** Deletes the Node's pods (the kubelet stops their containers), stops the three and deletes the Node. */
  stop(): Promise<void>;
}

/**
 * Starts a real worker named `name` joined to the cluster, with the kubelet and pause program of `kubeletDir`
 * (tools/kubernetes/build-kubelet.sh's folder), and waits until its Node is Ready.
 */
export async function startKubeletWorker(name: string, kubeletDir: string, join: KubeletJoin): Promise<KubeletWorker> {
  timing(`worker ${name}: start`);
  await takeLock();
  timing(`worker ${name}: lock taken`);
  let before: HostState | undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-kubelet-'));
  const processes: ClusterProcess[] = [];
  const ctr = (args: string[]) =>
    runOk('ctr', ['--address', path.join(dir, 'containerd.sock'), '-n', 'k8s.io', ...args]);
  const admin = (args: string[], input?: string) =>
    runOk(join.kubectl, ['--kubeconfig', join.adminKubeconfig, ...args], input);
  const containers = async () => (await ctr(['tasks', 'list', '-q'])).split('\n').filter(Boolean);

  let peer: PlainPeer | undefined;
  let containerd: ClusterProcess | undefined;
  let node: WorkerNode | undefined;
  let address = '';
  /** The Nodes started so far (each in a folder of its own). */
  let nodes = 0;
  /** What was imported (archive and names), for an import asked again to be skipped while its image is there. */
  const imported = new Set<string>();

  /** Starts the kubelet as Node `nodeName`, waits until it is Ready, then kube-proxy and MetalLB for it. */
  const startNode = async (nodeName: string): Promise<WorkerNode> => {
    const nodeDir = path.join(dir, `node-${++nodes}`);
    fs.mkdirSync(nodeDir);
    const own: ClusterProcess[] = [];
    let serviceProxy: ServiceProxy | undefined;
    let loadBalancer: MetalLb | undefined;
    const stopNode = async () => {
      timing(`worker ${nodeName}: stop its Node`);
      await loadBalancer?.stop();
      const kubeletProcess = own[0];
      if (kubeletProcess?.running()) {
        // No pod is placed on the worker any more: a pod started while the worker stops would leave its shim behind.
        await admin(['cordon', nodeName]).catch(() => '');
        await deletePodsOf(admin, nodeName).catch(() => undefined);
        await waitFor("the worker's containers stopped", async () => (await containers()).length === 0, 60_000).then(
          () => timing(`worker ${nodeName}: its containers stopped`),
          () => timing(`worker ${nodeName}: its containers NOT stopped after 60 s`),
        );
      }
      await serviceProxy?.stop();
      if (kubeletProcess) await stopProcess(kubeletProcess);
      await admin(['delete', 'node', nodeName, '--wait=false']).catch(() => '');
      unmountUnder(nodeDir);
      for (const proc of own) processes.splice(processes.indexOf(proc), 1);
      timing(`worker ${nodeName}: its Node stopped`);
    };
    try {
      const pki = path.join(nodeDir, 'pki');
      fs.mkdirSync(pki);
      const client = signCertificate(
        pki,
        join.ca,
        join.caKey,
        'kubelet',
        `/CN=system:node:${nodeName}/O=system:nodes`,
        'extendedKeyUsage=clientAuth\n',
      );
      const kubeconfig = path.join(nodeDir, 'kubelet.kubeconfig');
      fs.writeFileSync(kubeconfig, kubeconfigFor(join.server, join.ca, client.cert, client.key));
      const [port, healthzPort] = [await freePort(), await freePort()];
      const config = path.join(nodeDir, 'kubelet.yaml');
      fs.writeFileSync(config, JSON.stringify(kubeletConfig(dir, nodeDir, address, port, healthzPort, join.ca)));
      const kubeletProcess = startProcess(nodeDir, 'kubelet', path.join(kubeletDir, 'bin', 'kubelet'), [
        `--config=${config}`,
        `--kubeconfig=${kubeconfig}`,
        `--hostname-override=${nodeName}`,
        `--node-ip=${address}`,
        `--root-dir=${path.join(nodeDir, 'kubelet')}`,
        `--cert-dir=${path.join(nodeDir, 'kubelet-pki')}`,
        '--v=2',
      ]);
      own.push(kubeletProcess);
      processes.push(kubeletProcess);
      timing(`worker ${nodeName}: kubelet started`);
      await waitFor(
        `the real worker ${nodeName} Ready`,
        async () =>
          (await apiField(
            join.adminKubeconfig,
            { kind: 'node', name: nodeName, namespace: '' },
            '{.status.conditions[?(@.type=="Ready")].status}',
          )) === 'True',
        90_000,
        kubeletProcess,
      );
      serviceProxy = await startServiceProxy(
        path.join(nodeDir, 'kube-proxy'),
        path.join(builtToolDir(WORKER_TOOL_SCRIPTS.kubeProxy), 'bin'),
        { node: nodeName, server: join.server, ca: join.ca, caKey: join.caKey, podNetwork: POD_NETWORK, admin },
      );
      own.push(serviceProxy.process);
      processes.push(serviceProxy.process);
      timing(`worker ${nodeName}: Ready, kube-proxy up`);
      loadBalancer = await startMetalLb(path.join(nodeDir, 'metallb'), builtToolDir(WORKER_TOOL_SCRIPTS.metallb), {
        node: nodeName,
        adminKubeconfig: join.adminKubeconfig,
        admin,
        image: PAUSE_IMAGE,
      });
      own.push(...loadBalancer.processes);
      processes.push(...loadBalancer.processes);
      timing(`worker ${nodeName}: MetalLB up`);
    } catch (error) {
      await stopNode();
      throw error;
    }
    return { processes: own, stop: stopNode };
  };

  const stop = async () => {
    timing(`worker ${worker.name}: stop`);
    peer?.stop();
    await node?.stop();
    if (containerd?.running()) {
      // What is left (a kubelet that did not get there): killed and removed by containerd.
      for (const id of await containers().catch(() => [])) {
        await ctr(['tasks', 'kill', '-s', 'SIGKILL', id]).catch(() => '');
        await ctr(['tasks', 'delete', '-f', id]).catch(() => '');
      }
    }
    if (containerd) await stopProcess(containerd);
    timing(`worker ${worker.name}: containerd stopped`);
    // A shim containerd did not end (its task never deleted) holds its containers on: ended while its state is here,
    // and looked for again until none is left (one still starting when containerd stopped forks its own after a look).
    let shims = 0;
    for (let round = 0, found = 1; found > 0 && round < 5; round++) {
      found = (await endShims(path.join(dir, 'containerd.sock'))).length;
      shims += found;
    }
    timing(`worker ${worker.name}: shims ended: ${shims}`);
    unmountUnder(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    if (before) restoreHostState(before);
    removeCgroup(CGROUP_ROOT);
    removeApiServiceRoute();
    removeServiceProxyTables();
    deleteWorkerLan();
    deleteBridge();
    releaseLock();
    timing(`worker ${worker.name}: stopped`);
  };

  const worker: KubeletWorker = {
    name,
    address,
    volumesDir: path.join(dir, 'volumes'),
    networkPeer: '',
    processes,
    importImage: async (archive, reference, extraNames = []) => {
      const key = JSON.stringify([archive, reference, extraNames]);
      // Asked again (a later file of the shared tier, sharedKubelet.ts): skipped while containerd still has it.
      if (imported.has(key) && (await ctr(['images', 'ls', '-q', `name==${reference}`])).trim() === reference) return;
      await ctr(['images', 'import', '--no-unpack=false', archive]);
      for (const extra of extraNames) await ctr(['images', 'tag', '--force', reference, extra]);
      imported.add(key);
      timing(`worker ${worker.name}: imported ${reference}`);
    },
    containers,
    rename: async (newName) => {
      if (newName === worker.name) return;
      await node?.stop();
      node = undefined;
      worker.name = newName;
      node = await startNode(newName);
    },
    stop,
  };

  try {
    before = recordHostState();
    address = makeBridge();
    worker.address = address;
    makeWorkerLan(KUBELET_BRIDGE);
    peer = await startPlainPeer(address, NETWORK_PEER_PORT, { netrestrict: KUBELET_NETWORK });
    worker.networkPeer = peer.enode;
    routeApiService(KUBELET_BRIDGE, Number(new URL(join.server).port));
    makeCgroup(CGROUP_ROOT);
    fs.mkdirSync(path.join(dir, 'cni', 'net.d'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'cni', 'net.d', '10-lacchain-test.conflist'), JSON.stringify(cniConfig(dir)));
    fs.writeFileSync(path.join(dir, 'containerd.toml'), containerdConfig(dir));

    containerd = startProcess(dir, 'containerd', '/usr/bin/containerd', [
      '--config',
      path.join(dir, 'containerd.toml'),
    ]);
    processes.push(containerd);
    const started = containerd;
    await waitFor('containerd', async () => (await ctr(['version'])).includes('Server'), 30_000, started);
    timing(`worker ${name}: containerd up`);

    const pauseArchive = path.join(dir, 'images');
    fs.mkdirSync(pauseArchive);
    const pause = await pauseImage(pauseArchive, path.join(kubeletDir, 'bin', 'pause'), PAUSE_IMAGE);
    await worker.importImage(pause.archive, pause.reference);
    node = await startNode(name);
    return worker;
  } catch (error) {
    await stop();
    throw error;
  }
}

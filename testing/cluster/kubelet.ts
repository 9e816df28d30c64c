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
 * folders and the bridge. Stopping it cordons it and deletes its pods first (the kubelet stops their containers and
 * tears their network down), then stops the kubelet and containerd, ends any shim containerd left (runtimeShims.ts),
 * removes every folder, mount, namespace, cgroup, the Service's
 * route and the bridge it made, and puts back the kernel settings the kubelet changed (testing/cluster/hostChanges.ts).
 */
import { execFile, execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { NFT, removeApiServiceRoute, routeApiService } from './apiServiceRoute';
import { builtToolDir, WORKER_TOOL_SCRIPTS } from './builtTools';
import { signCertificate } from './certificates';
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
  /** Imports an OCI image archive into containerd's Kubernetes namespace, also under `extraNames`. */
  importImage(archive: string, name: string, extraNames?: string[]): Promise<void>;
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
function kubeletConfig(dir: string, address: string, port: number, healthzPort: number, ca: string) {
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
    podLogsDir: path.join(dir, 'pod-logs'),
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

  let peer: PlainPeer | undefined;
  let serviceProxy: ServiceProxy | undefined;
  let loadBalancer: MetalLb | undefined;
  const stop = async () => {
    timing(`worker ${name}: stop`);
    peer?.stop();
    await loadBalancer?.stop();
    const [kubeletProcess, containerd] = [processes[1], processes[0]];
    if (kubeletProcess?.running()) {
      // No pod is placed on the worker any more (a StatefulSet's or a Job's controller makes a deleted pod again at
      // once): a pod started while the worker stops would leave its shim behind (runtimeShims.ts).
      await admin(['cordon', name]).catch(() => '');
      // The kubelet stops the pods' containers and tears their network down once their pods are gone.
      await admin([
        'delete',
        'pods',
        '-A',
        '--field-selector',
        `spec.nodeName=${name}`,
        '--force',
        '--grace-period=0',
        '--wait=false',
      ]).catch(() => '');
      await waitFor(
        "the worker's containers stopped",
        async () => (await ctr(['tasks', 'list', '-q'])).trim() === '',
        60_000,
      ).then(
        () => timing(`worker ${name}: its containers stopped`),
        () => timing(`worker ${name}: its containers NOT stopped after 60 s`),
      );
    }
    await serviceProxy?.stop();
    if (kubeletProcess) await stopProcess(kubeletProcess);
    if (containerd?.running()) {
      // What is left (a kubelet that did not get there): killed and removed by containerd.
      for (const id of (await ctr(['tasks', 'list', '-q']).catch(() => '')).split('\n').filter(Boolean)) {
        await ctr(['tasks', 'kill', '-s', 'SIGKILL', id]).catch(() => '');
        await ctr(['tasks', 'delete', '-f', id]).catch(() => '');
      }
    }
    timing(`worker ${name}: kube-proxy and the kubelet stopped`);
    if (containerd) await stopProcess(containerd);
    timing(`worker ${name}: containerd stopped`);
    // A shim containerd did not end (its task never deleted) holds its containers on: ended while its state is here.
    const shims = await endShims(path.join(dir, 'containerd.sock'));
    timing(`worker ${name}: shims ended: ${shims.length}`);
    await admin(['delete', 'node', name, '--wait=false']).catch(() => '');
    unmountUnder(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    if (before) restoreHostState(before);
    removeCgroup(CGROUP_ROOT);
    removeApiServiceRoute();
    removeServiceProxyTables();
    deleteWorkerLan();
    deleteBridge();
    releaseLock();
    timing(`worker ${name}: stopped`);
  };

  try {
    before = recordHostState();
    const address = makeBridge();
    makeWorkerLan(KUBELET_BRIDGE);
    peer = await startPlainPeer(address, NETWORK_PEER_PORT, { netrestrict: KUBELET_NETWORK });
    routeApiService(KUBELET_BRIDGE, Number(new URL(join.server).port));
    makeCgroup(CGROUP_ROOT);
    fs.mkdirSync(path.join(dir, 'cni', 'net.d'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'cni', 'net.d', '10-lacchain-test.conflist'), JSON.stringify(cniConfig(dir)));
    fs.writeFileSync(path.join(dir, 'containerd.toml'), containerdConfig(dir));

    const containerd = startProcess(dir, 'containerd', '/usr/bin/containerd', [
      '--config',
      path.join(dir, 'containerd.toml'),
    ]);
    processes.push(containerd);
    await waitFor('containerd', async () => (await ctr(['version'])).includes('Server'), 30_000, containerd);
    timing(`worker ${name}: containerd up`);

    const pki = path.join(dir, 'pki');
    fs.mkdirSync(pki);
    const client = signCertificate(
      pki,
      join.ca,
      join.caKey,
      'kubelet',
      `/CN=system:node:${name}/O=system:nodes`,
      'extendedKeyUsage=clientAuth\n',
    );
    const kubeconfig = path.join(dir, 'kubelet.kubeconfig');
    fs.writeFileSync(kubeconfig, kubeconfigFor(join.server, join.ca, client.cert, client.key));
    const [port, healthzPort] = [await freePort(), await freePort()];
    const config = path.join(dir, 'kubelet.yaml');
    fs.writeFileSync(config, JSON.stringify(kubeletConfig(dir, address, port, healthzPort, join.ca)));

    const worker: KubeletWorker = {
      name,
      address,
      volumesDir: path.join(dir, 'volumes'),
      networkPeer: peer.enode,
      processes,
      importImage: async (archive, reference, extraNames = []) => {
        await ctr(['images', 'import', '--no-unpack=false', archive]);
        for (const extra of extraNames) await ctr(['images', 'tag', '--force', reference, extra]);
        timing(`worker ${name}: imported ${reference}`);
      },
      stop,
    };
    const pauseArchive = path.join(dir, 'images');
    fs.mkdirSync(pauseArchive);
    const { pauseImage } = await import('./images');
    const pause = await pauseImage(pauseArchive, path.join(kubeletDir, 'bin', 'pause'), PAUSE_IMAGE);
    await worker.importImage(pause.archive, pause.reference);

    const kubeletProcess = startProcess(dir, 'kubelet', path.join(kubeletDir, 'bin', 'kubelet'), [
      `--config=${config}`,
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${name}`,
      `--node-ip=${address}`,
      `--root-dir=${path.join(dir, 'kubelet')}`,
      `--cert-dir=${path.join(dir, 'kubelet-pki')}`,
      '--v=2',
    ]);
    processes.push(kubeletProcess);
    timing(`worker ${name}: kubelet started`);
    await waitFor(
      `the real worker ${name} Ready`,
      async () =>
        (await admin(['get', 'node', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])) ===
        'True',
      90_000,
      kubeletProcess,
    );
    serviceProxy = await startServiceProxy(
      path.join(dir, 'kube-proxy'),
      path.join(builtToolDir(WORKER_TOOL_SCRIPTS.kubeProxy), 'bin'),
      {
        node: name,
        server: join.server,
        ca: join.ca,
        caKey: join.caKey,
        podNetwork: POD_NETWORK,
        admin,
      },
    );
    processes.push(serviceProxy.process);
    timing(`worker ${name}: Ready, kube-proxy up`);
    loadBalancer = await startMetalLb(path.join(dir, 'metallb'), builtToolDir(WORKER_TOOL_SCRIPTS.metallb), {
      node: name,
      adminKubeconfig: join.adminKubeconfig,
      admin,
      image: PAUSE_IMAGE,
    });
    processes.push(...loadBalancer.processes);
    timing(`worker ${name}: MetalLB up`);
    return worker;
  } catch (error) {
    await stop();
    throw error;
  }
}

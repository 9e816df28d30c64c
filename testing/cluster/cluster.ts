/**
 * A real Kubernetes control plane for the tests, on loopback ports: etcd, kube-apiserver (client certificates, RBAC,
 * the built-in admission plugins with Pod Security), kube-controller-manager, kube-scheduler and kwok, which plays
 * the workers (Nodes with an ExternalIP, whose pods it runs through their lifecycle), provisions volumes for the
 * default StorageClass, gives a LoadBalancer Service its static IP as ingress (stages/) and serves every container's
 * log from one file (`containerLog`, in the CRI log format) to `kubectl logs`. The binaries are built
 * once by tools/kubernetes/build.sh into a cache outside the work tree. Started once per suite, stopped by process ids.
 */
import { execFile, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { apiField, apiGet } from './apiReads';
import { makeCertificates } from './certificates';
import { KubeletWorker, startKubeletWorker } from './kubelet';
import { ClusterProcess, startProcess, stopProcess, waitFor } from './processes';
import { SERVICE_CLUSTER_IP_RANGE } from './serviceNetwork';
import { timing } from './tierTiming';
import { freePort } from '../ports';
import { PROJECT_DIR } from '../run';

/** A worker of the test cluster. */
export interface TestWorker {
  name: string;
  externalIP: string;
}

/** The answer of a kubectl call. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A running test cluster. */
export interface TestCluster {
  /** Its kubeconfig file, with one context, `context`. */
  kubeconfig: string;
  context: string;
  /** The folder of its binaries (kubectl among them). */
  binDir: string;
  workers: TestWorker[];
  /** The real workers (startCluster's `kubeletWorkers`): a kubelet and containerd each, running real containers. */
  kubelets: KubeletWorker[];
  /** The log every container of the cluster serves (CRI format: `<RFC 3339 time> stdout F <line>`), for a test to write. */
  containerLog: string;
  /**
   * The API server's audit log (JSON lines, one per request on a Secret, at the Metadata level: who asked what of which
   * Secret, never its data), for a test to tell which Secrets a program read.
   */
  auditLog: string;
  /** Runs the real kubectl against it. */
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  /** Like kubectl, failing with its error output unless it succeeds; returns standard output. */
  kubectlOk(args: string[], input?: string): Promise<string>;
  stop(): Promise<void>;
}

/** The API server's audit policy: every request on a Secret, its metadata only; nothing else. */
const SECRETS_AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [{ level: 'Metadata', resources: [{ group: '', resources: ['secrets'] }] }, { level: 'None' }],
};

/** The context name in the test kubeconfig. */
export const TEST_CONTEXT = 'lacchain-test';

/**
 * A label that keeps a Job's pod running on the test cluster (kwok completes every Job's pod at once otherwise), so
 * that a test can end it part-way, as a worker's restart or an eviction would.
 */
export const HELD_POD_LABEL = 'lacchain-test-held';

/**
 * kwok's stage that completes Job pods (`file`), written into `dir` with one more condition: not a pod labelled
 * HELD_POD_LABEL. Returns the copy's path.
 */
function withHeldPodsRunning(file: string, dir: string): string {
  const stage = yaml.load(fs.readFileSync(file, 'utf8')) as {
    spec: { selector: { matchExpressions: object[] } };
  };
  stage.spec.selector.matchExpressions.push({
    key: `.metadata.labels["${HELD_POD_LABEL}"]`,
    operator: 'DoesNotExist',
  });
  const copy = path.join(dir, 'pod-complete-unless-held.yaml');
  fs.writeFileSync(copy, yaml.dump(stage));
  return copy;
}

/**
 * The cache folder a tool script keeps (`tools/kubernetes/build.sh`, `tools/kubernetes/crds.sh`,
 * `tools/monitoring/build.sh`, all made by tests/setup.sh), asked with `--check`; or why it is not there.
 */
function cachedTool(script: string): { dir: string } | { unavailable: string } {
  const result = spawnSync('bash', [path.join(PROJECT_DIR, script), '--check'], { encoding: 'utf8' });
  if (result.status !== 0) return { unavailable: result.stderr.trim().split('\n').pop() ?? `${script} failed` };
  return { dir: result.stdout.trim() };
}

/** The folder of `script`'s tools; throws with the reason when they are not there. */
function cachedToolOrThrow(script: string): string {
  const tool = cachedTool(script);
  if ('unavailable' in tool) throw new Error(tool.unavailable);
  return tool.dir;
}

/** Where the binaries are, or why they cannot be had (no Go): tools/kubernetes/build.sh, warm after tests/setup.sh. */
export function clusterTools(): { dir: string } | { unavailable: string } {
  return cachedTool('tools/kubernetes/build.sh');
}

/** The monitoring binaries (Prometheus, the Prometheus Operator) built by tools/monitoring/build.sh. */
export function monitoringTools(): { binary: (name: 'prometheus' | 'prometheus-operator') => string } {
  const dir = cachedToolOrThrow('tools/monitoring/build.sh');
  return { binary: (name) => path.join(dir, 'bin', name) };
}

/** The Prometheus Operator's CRD files (ServiceMonitor, PrometheusRule, ...), fetched by tools/kubernetes/crds.sh. */
export function prometheusOperatorCrds(): string[] {
  const dir = cachedToolOrThrow('tools/kubernetes/crds.sh');
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => path.join(dir, file));
}

function kubeconfigText(server: string, certs: ReturnType<typeof makeCertificates>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: TEST_CONTEXT, cluster: { server, 'certificate-authority': certs.ca } }],
    users: [{ name: 'admin', user: { 'client-certificate': certs.adminCert, 'client-key': certs.adminKey } }],
    contexts: [{ name: TEST_CONTEXT, context: { cluster: TEST_CONTEXT, user: 'admin' } }],
    'current-context': TEST_CONTEXT,
  });
}

/**
 * A worker's Node: managed by kwok (its annotation), with its ExternalIP beside the addresses kwok would add. Its
 * InternalIP is the loopback, where kwok answers the API server's kubelet calls (logs).
 */
function workerNode(worker: TestWorker) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: worker.name,
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
      labels: { 'kubernetes.io/hostname': worker.name, 'kubernetes.io/os': 'linux', type: 'kwok' },
    },
    status: {
      addresses: [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'ExternalIP', address: worker.externalIP },
        { type: 'Hostname', address: worker.name },
      ],
    },
  };
}

/** What a cluster runs besides its kwok workers. */
export interface ClusterOptions {
  /**
   * Real workers (testing/cluster/kubelet.ts) by Node name, with the kubelet folder of
   * tools/kubernetes/build-kubelet.sh. A cluster with no kwok workers then runs no kwok: its claims are bound to the
   * `local` volumes a test makes (testing/cluster/localVolumes.ts), of the default StorageClass LOCAL_STORAGE_CLASS.
   */
  kubelets?: { names: string[]; dir: string };
}

/** The default StorageClass of a cluster without kwok workers: volumes made by the test, bound at once. */
export const LOCAL_STORAGE_CLASS = 'lacchain-test-local';

/** The default StorageClass of a cluster without kwok: no provisioner, claims bound to the volumes a test makes. */
function localStorageClass() {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: LOCAL_STORAGE_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'Immediate',
  };
}

/** Starts a cluster with these workers (kwok's) and, with `options.kubelets`, real ones. */
export async function startCluster(
  binDir: string,
  workers: TestWorker[],
  options: ClusterOptions = {},
): Promise<TestCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-cluster-'));
  const bin = (name: string) => path.join(binDir, 'bin', name);
  const certs = makeCertificates(path.join(dir, 'pki'));
  const processes: ClusterProcess[] = [];
  const [etcdPort, peerPort, apiPort, managerPort, schedulerPort, kwokPort] = await Promise.all(
    Array.from({ length: 6 }, () => freePort()),
  );
  const server = `https://127.0.0.1:${apiPort}`;
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, kubeconfigText(server, certs));

  const kubectl = (args: string[], input?: string) =>
    new Promise<KubectlResult>((resolve) => {
      const child = execFile(
        bin('kubectl'),
        ['--kubeconfig', kubeconfig, ...args],
        { maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      // A kubectl that ends before reading its input (most read none) closes the pipe: the write's EPIPE says nothing
      // its exit code and stderr do not (seen in CI on b0c01c4: configRoll failed with an unhandled `write EPIPE`).
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(input ?? '');
    });
  const kubectlOk = async (args: string[], input?: string) => {
    const result = await kubectl(args, input);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
    return result.stdout;
  };
  const kubelets: KubeletWorker[] = [];
  const withKwok = workers.length > 0 || !options.kubelets;
  const stop = async () => {
    for (const worker of kubelets) await worker.stop();
    for (const proc of [...processes].reverse()) await stopProcess(proc);
    fs.rmSync(dir, { recursive: true, force: true });
    timing('control plane stopped');
  };

  try {
    timing('control plane: start');
    const etcd = startProcess(dir, 'etcd', bin('etcd'), [
      '--name=test',
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=test=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    processes.push(etcd);
    await waitFor('etcd', async () => (await fetch(`http://127.0.0.1:${etcdPort}/health`)).ok, 30_000, etcd);

    const auditLog = path.join(dir, 'audit.log');
    const auditPolicy = path.join(dir, 'audit-policy.yaml');
    fs.writeFileSync(auditPolicy, yaml.dump(SECRETS_AUDIT_POLICY));
    const apiserver = startProcess(dir, 'kube-apiserver', bin('kube-apiserver'), [
      `--audit-policy-file=${auditPolicy}`,
      `--audit-log-path=${auditLog}`,
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${certs.serverCert}`,
      `--tls-private-key-file=${certs.serverKey}`,
      `--client-ca-file=${certs.ca}`,
      // Node authorizes the real workers' kubelets (their certificates' system:node:<name>); the API server calls them
      // (logs, exec, port-forward) with the administrator's certificate.
      ...(options.kubelets
        ? [
            '--authorization-mode=Node,RBAC',
            `--kubelet-client-certificate=${certs.adminCert}`,
            `--kubelet-client-key=${certs.adminKey}`,
          ]
        : ['--authorization-mode=RBAC']),
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${certs.serviceAccountPublicKey}`,
      `--service-account-signing-key-file=${certs.serviceAccountKey}`,
      `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
      '--kubelet-preferred-address-types=InternalIP',
      '--profiling=false',
    ]);
    processes.push(apiserver);
    await waitFor(
      'kube-apiserver /readyz',
      async () => (await apiGet(kubeconfig, '/readyz')).body === 'ok',
      90_000,
      apiserver,
    );
    timing('control plane: API server ready');

    processes.push(
      startProcess(dir, 'kube-controller-manager', bin('kube-controller-manager'), [
        `--kubeconfig=${kubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${managerPort}`,
        `--service-account-private-key-file=${certs.serviceAccountKey}`,
        `--root-ca-file=${certs.ca}`,
        '--controllers=*',
      ]),
      startProcess(dir, 'kube-scheduler', bin('kube-scheduler'), [
        `--kubeconfig=${kubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${schedulerPort}`,
      ]),
    );
    const stages = ['node/fast', 'node/heartbeat', 'pod/fast', 'volume/fast'].flatMap((stage) =>
      fs
        .readdirSync(path.join(binDir, 'stages', stage))
        .filter((f) => f.endsWith('.yaml') && f !== 'storage-class.yaml')
        .map((f) => path.join(binDir, 'stages', stage, f))
        .map((file) => (path.basename(file) === 'pod-complete.yaml' ? withHeldPodsRunning(file, dir) : file)),
    );
    stages.push(path.join(__dirname, 'stages', 'service-load-balancer.yaml'));
    const containerLog = path.join(dir, 'container.log');
    fs.writeFileSync(containerLog, '');
    const logs = path.join(dir, 'cluster-logs.yaml');
    fs.writeFileSync(
      logs,
      JSON.stringify({
        apiVersion: 'kwok.x-k8s.io/v1alpha1',
        kind: 'ClusterLogs',
        metadata: { name: 'every-container' },
        spec: { logs: [{ logsFile: containerLog, follow: true }] },
      }),
    );
    stages.push(logs);
    if (withKwok)
      processes.push(
        startProcess(dir, 'kwok', bin('kwok'), [
          `--kubeconfig=${kubeconfig}`,
          '--manage-all-nodes=false',
          '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
          `--server-address=127.0.0.1:${kwokPort}`,
          '--node-ip=127.0.0.1',
          `--node-port=${kwokPort}`,
          `--tls-cert-file=${certs.serverCert}`,
          `--tls-private-key-file=${certs.serverKey}`,
          ...stages.map((file) => `--config=${file}`),
        ]),
      );

    // The default StorageClass whose claims kwok provisions (without kwok, the test's local volumes'), and the workers.
    if (withKwok) await kubectlOk(['apply', '-f', path.join(binDir, 'stages', 'volume/fast', 'storage-class.yaml')]);
    else await kubectlOk(['apply', '-f', '-'], JSON.stringify(localStorageClass()));
    const nodes = workers.map(workerNode);
    if (nodes.length > 0) {
      await kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: nodes }));
    }
    for (const node of nodes) {
      await kubectlOk([
        'patch',
        'node',
        node.metadata.name,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: node.status }),
      ]);
    }
    await waitFor(
      'the workers Ready',
      async () => {
        const out = await apiField(
          kubeconfig,
          { kind: 'nodes', name: '', namespace: '', selector: '' },
          '{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
        );
        return (
          (out ?? '')
            .trim()
            .split('\n')
            .filter((s) => s === 'True').length === workers.length
        );
      },
      60_000,
      processes[processes.length - 1],
    );
    timing('control plane: workers (kwok) Ready');
    for (const name of options.kubelets?.names ?? []) {
      kubelets.push(
        await startKubeletWorker(name, options.kubelets!.dir, {
          server,
          ca: certs.ca,
          caKey: certs.caKey,
          adminKubeconfig: kubeconfig,
          kubectl: bin('kubectl'),
        }),
      );
    }
    // Namespaced objects need their "default" ServiceAccount, made by the controller manager.
    await waitFor(
      'the default ServiceAccount',
      async () => (await apiGet(kubeconfig, '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
      60_000,
      processes[2],
    );
    timing('control plane: default ServiceAccount');
    return {
      kubeconfig,
      context: TEST_CONTEXT,
      binDir: path.join(binDir, 'bin'),
      workers,
      kubelets,
      containerLog,
      auditLog,
      kubectl,
      kubectlOk,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

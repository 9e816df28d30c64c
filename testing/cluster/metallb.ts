/**
 * MetalLB on the real worker (testing/cluster/kubelet.ts), in layer 2: its controller and speaker built from their Go
 * module (tools/metallb/build.sh), its CustomResourceDefinitions from the same module. The controller gives a
 * LoadBalancer Service the address it asks for (the annotation the program writes with `deploy.loadBalancer.cloud:
 * metallb`) from the pool of the worker's LAN (workerLan.ts: LOAD_BALANCER_POOL) and writes it into the Service's
 * status.loadBalancer.ingress; the speaker answers ARP for it on the LAN's bridge alone (the L2Advertisement's
 * interfaces), from the node that has the Service's pod (`externalTrafficPolicy: Local`).
 *
 * Both run as processes on this machine with the cluster administrator's kubeconfig, as their Deployment's and
 * DaemonSet's pods would on the host's network; their webhooks are off (no webhook configuration is installed) and the
 * speakers' memberlist too (one node). The speaker reads its own Pod at its start (to own its status objects): a Pod
 * object stands for it, which no scheduler places (its schedulerName is none's), so nothing of it runs.
 */
import * as fs from 'fs';
import * as path from 'path';
import { apiGet } from './apiReads';
import { ClusterProcess, startProcess, stopProcess, waitFor } from './processes';
import { LOAD_BALANCER_POOL, WORKER_LAN_BRIDGE } from './workerLan';
import { freePort } from '../ports';

/** MetalLB's namespace, its pool's and advertisement's names. */
export const METALLB_NAMESPACE = 'metallb-system';
const POOL = 'worker-lan';
/** The Pod object that stands for the speaker. */
const SPEAKER_POD = 'speaker';

/** What MetalLB needs of the cluster. */
export interface MetalLbJoin {
  node: string;
  adminKubeconfig: string;
  /** The administrator's kubectl (stdin optional). */
  admin: (args: string[], input?: string) => Promise<string>;
  /** An image the worker has (the Pod standing for the speaker names one). */
  image: string;
}

/** A running MetalLB. */
export interface MetalLb {
  processes: ClusterProcess[];
  stop(): Promise<void>;
}

/** The pool, the layer 2 advertisement on the LAN's bridge, and the Pod that stands for the speaker. */
function objects(join: MetalLbJoin) {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: METALLB_NAMESPACE } },
    {
      apiVersion: 'metallb.io/v1beta1',
      kind: 'IPAddressPool',
      metadata: { name: POOL, namespace: METALLB_NAMESPACE },
      // Only what a Service asks for: a static IP is given, none picked for a Service that names none.
      spec: { addresses: [LOAD_BALANCER_POOL], autoAssign: false },
    },
    {
      apiVersion: 'metallb.io/v1beta1',
      kind: 'L2Advertisement',
      metadata: { name: POOL, namespace: METALLB_NAMESPACE },
      spec: { ipAddressPools: [POOL], interfaces: [WORKER_LAN_BRIDGE] },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: SPEAKER_POD, namespace: METALLB_NAMESPACE, labels: { app: 'metallb', component: 'speaker' } },
      spec: {
        schedulerName: 'lacchain-test-no-scheduler',
        containers: [{ name: 'speaker', image: join.image, imagePullPolicy: 'Never' }],
      },
    },
  ];
}

/** Installs MetalLB's definitions and configuration (the folder of tools/metallb/build.sh) and starts it. */
export async function startMetalLb(dir: string, metallbDir: string, join: MetalLbJoin): Promise<MetalLb> {
  fs.mkdirSync(dir, { recursive: true });
  const crds = path.join(metallbDir, 'crds');
  await join.admin(['apply', '--server-side', '-f', crds]);
  const names = fs.readdirSync(crds).map((file) => `crd/${file.replace(/^metallb\.io_(.*)\.yaml$/, '$1.metallb.io')}`);
  await join.admin(['wait', '--for=condition=Established', '--timeout=60s', ...names]);
  const [namespace, ...rest] = objects(join);
  await join.admin(['apply', '-f', '-'], JSON.stringify(namespace));
  // The Pod is admitted once the namespace's default ServiceAccount is there (the controller manager makes it).
  await waitFor(
    `${METALLB_NAMESPACE}'s default ServiceAccount`,
    async () =>
      (await apiGet(join.adminKubeconfig, `/api/v1/namespaces/${METALLB_NAMESPACE}/serviceaccounts/default`)).status ===
      200,
    30_000,
  );
  await join.admin(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: rest }));

  const common = [`--kubeconfig=${join.adminKubeconfig}`, `--namespace=${METALLB_NAMESPACE}`, '--log-level=info'];
  const processes: ClusterProcess[] = [];
  const stop = async () => {
    for (const proc of processes.reverse()) await stopProcess(proc);
  };
  try {
    const controller = startProcess(dir, 'metallb-controller', path.join(metallbDir, 'bin', 'controller'), [
      ...common,
      '--webhook-mode=disabled',
      `--port=${await freePort()}`,
    ]);
    processes.push(controller);
    const speakerPort = await freePort();
    const speaker = startProcess(dir, 'metallb-speaker', path.join(metallbDir, 'bin', 'speaker'), [
      ...common,
      `--node-name=${join.node}`,
      `--pod-name=${SPEAKER_POD}`,
      '--host=127.0.0.1',
      `--port=${speakerPort}`,
    ]);
    processes.push(speaker);
    await waitFor(
      "MetalLB's speaker serving",
      async () => (await fetch(`http://127.0.0.1:${speakerPort}/metrics`)).ok,
      60_000,
      speaker,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { processes, stop };
}

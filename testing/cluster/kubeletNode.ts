/**
 * A testnet node's pod (a validator's or a writer's) on a real worker, as the kubelet tier's suites set it up: the
 * suite's cluster with the node type's worker (kubeletSuite.ts) and its images imported (nodeImages.ts); the program's
 * manifests for the node (named as its type, KEY_ONE, the monitoring client off, Besu pinned by the stand-in image's
 * digest as the values file's imageDigest pins it, the backup schedule's kubectl by the test image's as
 * kubectlImageDigest pins it; only the CPU requests lowered, kubeletFit.ts) applied server-side to
 * local volumes, with the node and its bootnodes in the Besu stand-in's permissioning contract; and the questions a
 * test asks the pod from inside it. The node's static IP (its publicIP and p2p host, so its enode's) is its type's
 * address of the worker's LAN (workerLan.ts), with `deploy.loadBalancer.cloud: metallb`: MetalLB gives the Service
 * that address from its pool through the annotation the program writes, and kube-proxy takes it to the pod.
 */
import * as path from 'path';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { KEY_ONE } from '../fixtures';
import { onTestNetwork, permissioned, Registration, registerInFolder } from '../permissioning';
import { recordProgram } from '../pulumi';
import { declareProgram } from '../program';
import { valuesAt } from '../values';
import { workFolder } from '../workFolder';
import type { TestCluster } from './cluster';
import { withCpuRequestsThatFit } from './kubeletFit';
import { kubeletClusterForSuite } from './kubeletSuite';
import { KUBELET_NETWORK } from './kubelet';
import { localVolumesFor } from './localVolumes';
import { applyServerSide, kubernetesManifests, Manifest } from './manifests';
import { lanStaticIp } from './workerLan';
import { fieldOf, fieldWhen, ObjectRef } from './objects';
import { importBesuImage, importKubectlImage, importNodeImages, PodNodeType } from './nodeImages';

/** How long a new pod may take until every container is ready. */
const POD_READY_MS = 120_000;
/**
 * How long every container of a ready pod must have run, none restarted, before the pod counts as settled: a container
 * that fails after it started fails within it (the kubelet sees it within seconds).
 */
const SETTLED_MS = 5_000;
/** How many times a ready pod is watched for SETTLED_MS before one that did not hold still fails (readyPodOtherThan). */
const SETTLE_TRIES = 3;

/** A node on a real kubelet, for one suite. */
export interface KubeletNode {
  /** The suite's cluster (while its tests run). */
  cluster: () => TestCluster;
  /** `it` for the suite's tests (it.skip when the kubelet tier cannot run here, outside CI). */
  itWithKubelet: jest.It;
  namespace: string;
  /** The node's pod, by its StatefulSet's name. */
  pod: ObjectRef;
  /** The node's name in the stack. */
  node: string;
  /** The name of the pod's Besu container. */
  besuContainer: string;
  /** The stack's enode for the node. */
  enode: string;
  /** The node's static IP (its enode's), on the worker's LAN. */
  staticIp: string;
  /**
   * The node, the network's bootnodes of its type and the pods' network peer (its real peer), registered from the
   * first block (while the suite's worker runs).
   */
  readonly permissioned: Registration[];
  /** The digest of the Besu stand-in's image of `release` (the network's by default), as imported. */
  besuDigest: (release?: string) => string;
  /** The digest of the kubectl image of the backup schedule's steps, as imported. */
  kubectlDigest: () => string | undefined;
  /**
   * The values file the manifests are declared with (its Besu imageDigest and kubectlImageDigest set once the images
   * are imported), of the network's release or of `release`.
   */
  values: (release?: string) => ReturnType<typeof valuesAt>;
  /** The stack's settings the manifests are declared with, but its node keys. */
  stackSettings: Record<string, unknown>;
  /**
   * The program's manifests for the node, with `config` added to the stack's settings; with `release`, the values
   * file's releaseVersion and Besu's imageDigest are that release's (one of `releases`). CPU requests lowered.
   */
  manifests(config?: Record<string, unknown>, release?: string): Promise<Manifest[]>;
  /** The folders of the volumes `deploy` made, by claim name. */
  volumes(): Record<string, string>;
  /**
   * Applies `manifests` (the Namespace first, volumes for their claims, the node registered), then waits until the pod
   * runs with every container ready; returns the data volume's folder.
   */
  deploy(manifests: Manifest[]): Promise<string>;
  /**
   * Applies `manifests` as the first `pulumi up` of a move into the cluster makes them (its StatefulSet held at no pod):
   * the Namespace first, volumes for their claims, nothing registered and nothing waited for; returns the data
   * volume's folder. `deploy` with the same claims then starts the pod on what the move put there.
   */
  applyHeld(manifests: Manifest[]): Promise<string>;
  /** Writes the stand-in's permissioning contract's registry into the data folder, as one rename. */
  register(registrations: Registration[]): void;
  /**
   * The pod's uid once it is another pod than `old` ('' for any) and every container of it is ready (within
   * `timeoutMs`, POD_READY_MS unless said), and still is, none restarted, SETTLED_MS later.
   */
  readyPodOtherThan(old: string, timeoutMs?: number): Promise<string>;
  /** Runs `command` in the Besu container of the pod; returns its standard output. */
  inBesu(...command: string[]): Promise<string>;
  /** A JSON-RPC call to the node from inside its pod (Python in the image; Besu answers on the pod's loopback). */
  rpcInPod(method: string): Promise<unknown>;
}

/**
 * A JSON-RPC call to Besu from inside its pod, through `inBesu` (a command run in the Besu container): Python in the
 * image asks Besu on the pod's loopback. Returns the answer's result.
 */
export async function rpcInsidePod(
  inBesu: (...command: string[]) => Promise<string>,
  method: string,
): Promise<unknown> {
  const script = [
    'import json, sys, urllib.request',
    `body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "${method}", "params": []}).encode()`,
    'request = urllib.request.Request("http://127.0.0.1:4545", data=body, headers={"Content-Type": "application/json", "Host": "localhost"})',
    'print(urllib.request.urlopen(request, timeout=5).read().decode())',
  ].join('\n');
  return JSON.parse(await inBesu('python3', '-c', script)).result;
}

/** What a suite may add to its node's set-up. */
export interface KubeletNodeOptions {
  /** The suite's work folder (a new one by default). */
  work?: string;
  /** Besu releases whose images are imported besides the network's (for a release bump). */
  releases?: string[];
  /** Networks the pod's Besu stand-in dials and accepts besides KUBELET_NETWORK (CIDRs: the test hosts' network). */
  peerNetworks?: string[];
}

/**
 * The pod of a node of type `type` (named as its type, on the worker the test values files pin it to) in `namespace`
 * on the suite's real worker.
 */
export function kubeletNode(type: PodNodeType, namespace: string, options: KubeletNodeOptions = {}): KubeletNode {
  const work = options.work ?? workFolder(`lacchain-${namespace}-`);
  const network = NETWORKS['open-protestnet'];
  const recorded = recordProgram();
  const names = kubernetesNames(type);
  const digests: Record<string, string> = {};
  const besuDigest = (release = network.defaultBesuVersion) => digests[release];
  let kubectlDigest: string | undefined;
  let folders: Record<string, string> = {};
  let dataFolder = '';
  const staticIp = lanStaticIp(type);
  const nodeValues = (extra: Record<string, unknown>) =>
    valuesAt('testnet', type, staticIp, { namespace, loadBalancer: { cloud: 'metallb' }, ...extra });
  const { p2p, workerName } = nodeValues({}).deploy;
  const { cluster, itWithKubelet } = kubeletClusterForSuite([workerName], async (running) => {
    const worker = running.kubelets[0];
    digests[network.defaultBesuVersion] = await importNodeImages(worker, work, network.defaultBesuVersion, type);
    for (const release of options.releases ?? []) digests[release] = await importBesuImage(worker, work, release);
    kubectlDigest = await importKubectlImage(worker, work, path.join(running.binDir, 'kubectl'));
  });
  const values = (release?: string) =>
    nodeValues({
      imageDigest: besuDigest(release),
      kubectlImageDigest: kubectlDigest,
      ...(release ? { releaseVersion: release } : {}),
    });
  const enode = deriveIdentity(KEY_ONE, p2p.host, p2p.port).enode;
  const stackSettings = {
    'lacchain:network': network.name,
    'lacchain:nodes': [{ name: type, typenode: type, target: 'kubernetes' }],
    'lacchain:companions': { ethstats: { enabled: false } },
  };
  const pod = { kind: 'pod', name: names.pod, namespace };
  let containers = 0;

  const inBesu = (...command: string[]) =>
    cluster().kubectlOk(['exec', '-n', namespace, names.pod, '-c', names.besuContainer, '--', ...command]);

  const register = (registrations: Registration[]) => registerInFolder(dataFolder, registrations);

  const readyPodOtherThan = async (old: string, timeoutMs = POD_READY_MS) => {
    // Every container ready, and still so, none restarted meanwhile, once a container failing after it started would
    // have been seen: one without a probe counts as ready while it runs, also the moment before it fails. (A companion
    // that exits until Besu's RPC answers, as the rotation client does, may have restarted before that.)
    const ready = new RegExp(`^[0-9a-f-]{36} Running (true/\\d+/[0-9TZ:-]+,){${containers}}$`);
    const state =
      '{.metadata.uid} {.status.phase} ' +
      '{range .status.containerStatuses[*]}{.ready}/{.restartCount}/{.state.running.startedAt},{end}';
    // Such a companion started a moment before Besu answered is seen ready (it runs) and exits once more after that
    // moment (seen once in CI, 2026-12-07: `true/1` then `false/1`): the pod is read again once its last container to
    // start has run SETTLED_MS (started, to the second, by this machine's clock), and counts as settled when nothing
    // changed meanwhile; else it is watched again, at most SETTLE_TRIES times: a container that keeps failing never
    // holds still. Containers started well before the pod was ready are not waited for again.
    for (let tries = 1; ; tries++) {
      const seen = await fieldWhen(
        cluster(),
        pod,
        state,
        (value) => ready.test(value) && !value.startsWith(`${old} `),
        timeoutMs,
        { watched: true },
      );
      expect(seen).toMatch(ready);
      const started = [...seen.matchAll(/\/([0-9TZ:-]+),/g)].map(([, at]) => Date.parse(at));
      const settling = Math.max(...started) + 1000 + SETTLED_MS - Date.now();
      if (settling > 0) await new Promise((resolve) => setTimeout(resolve, settling));
      const settled = await fieldOf(cluster(), pod, state);
      if (settled === seen || tries === SETTLE_TRIES) {
        expect(settled).toBe(seen);
        return seen.split(' ')[0];
      }
    }
  };

  return {
    cluster,
    itWithKubelet,
    namespace,
    pod,
    node: type,
    besuContainer: names.besuContainer,
    enode,
    staticIp,
    get permissioned() {
      return permissioned(enode, network.name, type, [cluster().kubelets[0].networkPeer]);
    },
    besuDigest,
    kubectlDigest: () => kubectlDigest,
    values,
    stackSettings,
    async manifests(config = {}, release) {
      const settings = { ...stackSettings, 'lacchain:nodeKeys': { [type]: KEY_ONE }, ...config };
      const files = { [`values/${type}.yml`]: values(release) };
      return withCpuRequestsThatFit(kubernetesManifests(await declareProgram(recorded, 'testnet', settings, files)));
    },
    async deploy(manifests) {
      await cluster().kubectlOk(['apply', '-f', '-'], JSON.stringify(manifests.find((m) => m.kind === 'Namespace')));
      folders = await localVolumesFor(cluster(), cluster().kubelets[0], manifests);
      dataFolder = folders[names.dataVolume];
      // The node, its bootnodes and the pods' network peer in the contract, and that peer its static node: it has a
      // real peer (the readiness probe's condition), as a permissioned node on the network.
      const networks = [KUBELET_NETWORK, ...(options.peerNetworks ?? [])].join(',');
      onTestNetwork(dataFolder, networks, cluster().kubelets[0].networkPeer);
      register(this.permissioned);
      containers = manifests.find((m) => m.kind === 'StatefulSet')!.spec.template.spec.containers.length;
      await applyServerSide(cluster(), manifests);
      // MetalLB's part: the Service on its static IP (what `npm run node -- status` and `check` look for).
      for (const service of manifests.filter((m) => m.kind === 'Service' && m.spec.type === 'LoadBalancer')) {
        const ref = { kind: 'service', name: service.metadata.name, namespace };
        const given = await fieldWhen(cluster(), ref, '{.status.loadBalancer.ingress[*].ip}', (ip) => ip === staticIp);
        if (given !== staticIp) {
          const events = await cluster().kubectl([
            'get',
            'events',
            '-n',
            namespace,
            '--field-selector',
            `involvedObject.name=${service.metadata.name}`,
          ]);
          throw new Error(
            `MetalLB gave the Service ${JSON.stringify(given)}, not ${staticIp}: ${events.stdout}${events.stderr}`,
          );
        }
      }
      await readyPodOtherThan('');
      return dataFolder;
    },
    async applyHeld(manifests) {
      await cluster().kubectlOk(['apply', '-f', '-'], JSON.stringify(manifests.find((m) => m.kind === 'Namespace')));
      folders = await localVolumesFor(cluster(), cluster().kubelets[0], manifests);
      dataFolder = folders[names.dataVolume];
      await applyServerSide(cluster(), manifests);
      return dataFolder;
    },
    volumes: () => folders,
    register,
    readyPodOtherThan,
    inBesu,
    rpcInPod: (method) => rpcInsidePod(inBesu, method),
  };
}

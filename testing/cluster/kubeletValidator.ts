/**
 * A testnet validator's pod on a real worker, as the kubelet tier's suites set it up: the suite's cluster with the
 * validator's worker (kubeletSuite.ts) and the validator's images imported (validatorImages.ts); the program's
 * manifests for the validator (KEY_ONE, the monitoring client off, Besu pinned by the stand-in image's digest as the
 * values file's imageDigest pins it; only the CPU requests lowered, kubeletFit.ts) applied server-side to local volumes,
 * with the node and its bootnodes in the Besu stand-in's permissioning contract; and the questions a test asks the pod
 * from inside it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { KEY_ONE } from '../fixtures';
import { recordProgram } from '../pulumi';
import { declareProgram } from '../program';
import { valuesFor } from '../values';
import { workFolder } from '../workFolder';
import type { TestCluster } from './cluster';
import { withCpuRequestsThatFit } from './kubeletFit';
import { kubeletClusterForSuite } from './kubeletSuite';
import { localVolumesFor } from './localVolumes';
import { applyServerSide, kubernetesManifests, Manifest } from './manifests';
import { fieldWhen, ObjectRef } from './objects';
import { importValidatorImages } from './validatorImages';

/** The node's name in the stack, and its worker (as the test values files pin a validator). */
const NODE = 'validator';
const WORKER = 'worker-validator';
/** The Besu stand-in's permissioning contract's registry, in its data folder (tests/fixtures/besu-standin/README.md). */
const PERMISSIONING_FILE = 'standin-permissioning.json';
/** How long a new pod may take until every container is ready. */
const POD_READY_MS = 120_000;

/** One entry of the stand-in's permissioning contract: an enode, registered from `fromBlock`. */
export interface Registration {
  enode: string;
  fromBlock: number;
}

/** A validator on a real kubelet, for one suite. */
export interface KubeletValidator {
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
  /** The node and the network's validator bootnodes, registered from the first block. */
  permissioned: Registration[];
  /** The digest of the Besu stand-in's image, as imported (once the suite's cluster runs). */
  besuDigest: () => string;
  /** The values file the manifests are declared with (its Besu imageDigest set once the images are imported). */
  values: () => ReturnType<typeof valuesFor>;
  /** The program's manifests for the validator, with `config` added to the stack's settings; CPU requests lowered. */
  manifests(config?: Record<string, unknown>): Promise<Manifest[]>;
  /**
   * Applies `manifests` (the Namespace first, volumes for their claims, the node registered), then waits until the pod
   * runs with every container ready; returns the data volume's folder.
   */
  deploy(manifests: Manifest[]): Promise<string>;
  /** Writes the stand-in's permissioning contract's registry into the data folder, as one rename. */
  register(registrations: Registration[]): void;
  /** The pod's uid once it is another pod than `old` ('' for any) and every container of it is ready. */
  readyPodOtherThan(old: string): Promise<string>;
  /** Runs `command` in the Besu container of the pod; returns its standard output. */
  inBesu(...command: string[]): Promise<string>;
  /** A JSON-RPC call to the node from inside its pod (Python in the image; Besu answers on the pod's loopback). */
  rpcInPod(method: string): Promise<unknown>;
}

/** A validator's pod in `namespace` on the suite's real worker; `work` is the suite's work folder. */
export function kubeletValidator(namespace: string, work = workFolder(`lacchain-${namespace}-`)): KubeletValidator {
  const network = NETWORKS['open-protestnet'];
  const recorded = recordProgram();
  const names = kubernetesNames(NODE);
  let besuDigest = '';
  let dataFolder = '';
  const { cluster, itWithKubelet } = kubeletClusterForSuite([WORKER], async (running) => {
    besuDigest = await importValidatorImages(running.kubelets[0], work, network.defaultBesuVersion);
  });
  const values = () => valuesFor('testnet', NODE, { namespace, imageDigest: besuDigest });
  const { p2p } = valuesFor('testnet', NODE, { namespace }).deploy;
  const enode = deriveIdentity(KEY_ONE, p2p.host, p2p.port).enode;
  const pod = { kind: 'pod', name: names.pod, namespace };
  let containers = 0;

  const inBesu = (...command: string[]) =>
    cluster().kubectlOk(['exec', '-n', namespace, names.pod, '-c', names.besuContainer, '--', ...command]);

  const register = (registrations: Registration[]) => {
    const file = path.join(dataFolder, PERMISSIONING_FILE);
    fs.writeFileSync(`${file}.new`, JSON.stringify({ nodes: registrations }));
    fs.renameSync(`${file}.new`, file);
  };

  const readyPodOtherThan = async (old: string) => {
    const ready = `Running ${'true,'.repeat(containers)}`;
    const seen = await fieldWhen(
      cluster(),
      pod,
      '{.metadata.uid} {.status.phase} {range .status.containerStatuses[*]}{.ready},{end}',
      (value) => /^[0-9a-f-]{36} /.test(value) && !value.startsWith(`${old} `) && value.endsWith(` ${ready}`),
      POD_READY_MS,
    );
    expect(seen.split(' ').slice(1).join(' ')).toBe(ready);
    return seen.split(' ')[0];
  };

  return {
    cluster,
    itWithKubelet,
    namespace,
    pod,
    node: NODE,
    besuContainer: names.besuContainer,
    enode,
    permissioned: [enode, ...network.bootnodes.validator].map((each) => ({ enode: each, fromBlock: 0 })),
    besuDigest: () => besuDigest,
    values,
    async manifests(config = {}) {
      const settings = {
        'lacchain:network': network.name,
        'lacchain:nodes': [{ name: NODE, typenode: 'validator', target: 'kubernetes' }],
        'lacchain:nodeKeys': { [NODE]: KEY_ONE },
        'lacchain:companions': { ethstats: { enabled: false } },
        ...config,
      };
      const files = { [`values/${NODE}.yml`]: values() };
      return withCpuRequestsThatFit(kubernetesManifests(await declareProgram(recorded, 'testnet', settings, files)));
    },
    async deploy(manifests) {
      await cluster().kubectlOk(['apply', '-f', '-'], JSON.stringify(manifests.find((m) => m.kind === 'Namespace')));
      const folders = await localVolumesFor(cluster(), cluster().kubelets[0], manifests);
      dataFolder = folders[names.dataVolume];
      // The node and its bootnodes in the contract: it has peers (the readiness probe's condition), as a permissioned
      // node on the network.
      register(this.permissioned);
      containers = manifests.find((m) => m.kind === 'StatefulSet')!.spec.template.spec.containers.length;
      await applyServerSide(cluster(), manifests);
      await readyPodOtherThan('');
      return dataFolder;
    },
    register,
    readyPodOtherThan,
    inBesu,
    async rpcInPod(method) {
      const script = [
        'import json, sys, urllib.request',
        `body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "${method}", "params": []}).encode()`,
        'request = urllib.request.Request("http://127.0.0.1:4545", data=body, headers={"Content-Type": "application/json", "Host": "localhost"})',
        'print(urllib.request.urlopen(request, timeout=5).read().decode())',
      ].join('\n');
      return JSON.parse(await inBesu('python3', '-c', script)).result;
    },
  };
}

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The cluster path under Pulumi's real engine and the real Kubernetes provider, on a real kubelet (issue 52, item 1):
 * the engine tier's stack (tests/engine/engine.ts: the real Pulumi CLI, the provider built from its Go module, the
 * program's own entry, index.ts, as an Automation API inline program, a file backend) deploys a testnet writer and a
 * validator to the kubelet tier's real worker (testing/cluster/kubeletSuite.ts), both values files pinning that one
 * worker: `pulumi up`, nothing applied by the test. Then what runs: both pods Running with every container ready, each
 * node answering `net_enode` from inside its pod with the enode the stack exports, Besu as uid 1000 on a read-only root
 * file system writing its data on the volume.
 *
 * The provider itself waits for the StatefulSets to be ready (its await logic: the ready replicas and the current
 * revision; for the LoadBalancer Services, their ingress; for the claims, bound): `up` returns only once both pods are
 * Ready, and the test reads them at once, waiting for nothing. Its set-up, as the kubelet tier's (kubeletNode.ts): the
 * images imported into containerd, Besu's pinned by the digest the values files' imageDigest gives; the monitoring
 * client off (no image of it here); the stand-in's permissioning contract holding each node and its bootnodes, written
 * into the data volume's folder before the volume is bound, with the pods' network peer as its static node, so the node
 * has a real peer and gets Ready.
 *
 * The Services' static IPs are given by MetalLB (testing/cluster/metallb.ts): each node's values file names its type's
 * address of the worker's LAN with `deploy.loadBalancer.cloud: metallb`, and the provider waits until MetalLB has put
 * it in the Service's status.
 *
 * What it does not show: the storage is a stand-in (cloudStandin.ts: the test's loop makes a local volume for each
 * claim the provider creates, and gives no Service an address); the program requests
 * the network's minimum hardware for Besu (2 CPUs), which this 2-core worker cannot admit, and the values file has no
 * setting of the containers' resources, so the CPU requests are lowered as the kubelet tier lowers them, by a resource
 * transform of the run (kubeletFit.ts: every container requests 50m, memory and all else as declared); Besu is the
 * stand-in of tests/fixtures/besu-standin, its companions stand-ins too (nodeImages.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import type { Stack } from '@pulumi/pulumi/automation';
import { RELAY_SIGNER, ROTATION_VALIDATOR } from '../../core/catalog/companions';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { NETWORKS, STACK_NETWORKS } from '../../core/catalog/networks';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { CloudStandin, NO_INGRESS, startCloudStandin } from '../../testing/cluster/cloudStandin';
import { KUBELET_TEST_CPU, registerCpuRequestsThatFit } from '../../testing/cluster/kubeletFit';
import { rpcInsidePod } from '../../testing/cluster/kubeletNode';
import { kubeletClusterForSuite } from '../../testing/cluster/kubeletSuite';
import { importNodeImages, PodNodeType } from '../../testing/cluster/nodeImages';
import { fieldOf } from '../../testing/cluster/objects';
import { KEY_ONE } from '../../testing/fixtures';
import { onTestNetwork, permissioned, registerInFolder } from '../../testing/permissioning';
import { KUBELET_NETWORK } from '../../testing/cluster/kubelet';
import { valuesAt } from '../../testing/values';
import { lanStaticIp } from '../../testing/cluster/workerLan';
import { workFolder } from '../../testing/workFolder';
import { readingBack, setConfigs } from '../cli/pulumiCli';
import { changesBesideLastRunRead, EngineProject, engineProject, engineSuite, serveGenesis } from '../engine/engine';
import { engineProgram } from '../engine/program';

jest.setTimeout(15 * 60 * 1000);
const engine = engineSuite('The cluster path under the real engine on a real kubelet');

const STACK = 'testnet';
const NETWORK = STACK_NETWORKS[STACK];
const RELEASE = NETWORKS[NETWORK].defaultBesuVersion;
const NAMESPACE = 'kubelet-engine';
/** The one real worker, which both nodes' values files pin. */
const WORKER = 'worker-engine';
const TYPES: PodNodeType[] = ['writer', 'validator'];
/** The imported node keys (valid secp256k1 keys, for tests only). */
const KEYS: Record<PodNodeType, string> = { writer: KEY_ONE, validator: `0x${'22'.repeat(32)}` };
/** A node type's own containers beside Besu and the metrics relay every node has (docs/kubernetes.md). */
const OWN_CONTAINERS: Record<PodNodeType, (names: ReturnType<typeof kubernetesNames>) => string[]> = {
  writer: (names) => [names.proxyContainer, names.companionContainer(RELAY_SIGNER.name)],
  validator: (names) => [names.companionContainer(ROTATION_VALIDATOR.name)],
};

engine.describe('a writer and a validator deployed by pulumi up (real engine and provider) on a real kubelet', () => {
  const work = workFolder('lacchain-kubelet-engine-');
  const digests: Partial<Record<PodNodeType, string>> = {};
  const { cluster, itWithKubelet } = kubeletClusterForSuite([WORKER], async (running) => {
    for (const type of TYPES) digests[type] = await importNodeImages(running.kubelets[0], work, RELEASE, type);
  });
  let project: EngineProject;
  let stack: Stack;
  let genesis: Awaited<ReturnType<typeof serveGenesis>>;
  let cloud: CloudStandin;
  /** The stack's outputs after the first `up`. */
  let outputs: Record<string, any> = {};

  const values = (type: PodNodeType) =>
    valuesAt(STACK, type, lanStaticIp(type), {
      namespace: NAMESPACE,
      workerName: WORKER,
      imageDigest: digests[type],
      loadBalancer: { cloud: 'metallb' },
    });
  const podOf = (type: PodNodeType) => ({ kind: 'pod', name: kubernetesNames(type).pod, namespace: NAMESPACE });
  /** Runs `command` in the Besu container of `type`'s pod; its standard output. */
  const inBesu =
    (type: PodNodeType) =>
    (...command: string[]) =>
      cluster().kubectlOk([
        'exec',
        '-n',
        NAMESPACE,
        kubernetesNames(type).pod,
        '-c',
        kubernetesNames(type).besuContainer,
        '--',
        ...command,
      ]);

  /** `pulumi up` by the engine; the resource changes it counted, by kind of change. */
  async function up(): Promise<Record<string, number>> {
    const result = await readingBack(stack, { outputs: 'values', summary: true }).up();
    expect(result.summary.result).toBe('succeeded');
    outputs = Object.fromEntries(Object.entries(result.outputs).map(([key, output]) => [key, output.value]));
    return result.summary.resourceChanges ?? {};
  }

  beforeAll(async () => {
    genesis = await serveGenesis();
    project = engineProject(engine.provider(), cluster().kubeconfig);
    const config = {
      'lacchain:network': NETWORK,
      'lacchain:nodes': TYPES.map((type) => ({ name: type, typenode: type, target: 'kubernetes' })),
      'lacchain:companions': { ethstats: { enabled: false } },
    };
    fs.writeFileSync(path.join(project.dir, `Pulumi.${STACK}.yaml`), yaml.dump({ config }));
    for (const type of TYPES) {
      fs.writeFileSync(path.join(project.dir, 'values', `${type}.yml`), yaml.dump(values(type)));
    }
    const program = engineProgram(NETWORK, genesis.url, project.dir);
    stack = await project.stack(STACK, async () => {
      registerCpuRequestsThatFit();
      return program();
    });
    const keys = TYPES.map((type) => [`lacchain:nodeKeys.${type}`, { value: KEYS[type], secret: true }]);
    await setConfigs(stack, Object.fromEntries(keys), true);
    // Each node's data volume holds the contract's registry before its pod mounts it: the node and its bootnodes.
    cloud = startCloudStandin(
      cluster(),
      cluster().kubelets[0],
      (claim, folder) => {
        const type = TYPES.find((each) => kubernetesNames(each).dataVolume === claim);
        if (!type) return;
        const { p2p } = values(type).deploy;
        const peer = cluster().kubelets[0].networkPeer;
        registerInFolder(
          folder,
          permissioned(deriveIdentity(KEYS[type], p2p.host, p2p.port).enode, NETWORK, type, [peer]),
        );
        onTestNetwork(folder, KUBELET_NETWORK, peer);
      },
      NO_INGRESS,
    );
  }, 120_000);

  afterAll(async () => {
    await cloud?.stop();
    await genesis?.close();
    project?.remove();
  });

  itWithKubelet(
    'pulumi up succeeds: the provider waited for both StatefulSets to be ready, their pods on the one worker',
    async () => {
      const changes = await up();
      expect(Object.keys(changes)).toEqual(['create']);
      for (const type of TYPES) {
        const names = kubernetesNames(type);
        const set = { kind: 'statefulset', name: names.statefulSet, namespace: NAMESPACE };
        // Read at once: no wait but the provider's.
        const status = await fieldOf(cluster(), set, '{.status.readyReplicas}/{.spec.replicas}');
        const revisions = (await fieldOf(cluster(), set, '{.status.currentRevision} {.status.updateRevision}')).split(
          ' ',
        );
        expect([type, status, revisions[0]]).toEqual([type, '1/1', revisions[1]]);
        expect([type, await fieldOf(cluster(), podOf(type), '{.spec.nodeName}')]).toEqual([type, WORKER]);
        expect(await fieldOf(cluster(), set, '{.spec.template.spec.containers[0].image}')).toBe(
          `hyperledger/besu:${RELEASE}@${digests[type]}`,
        );
        // The one change the transform made: the CPU request; the memory the network's minimum, as declared.
        const requests = await fieldOf(cluster(), set, '{.spec.template.spec.containers[0].resources.requests}');
        expect(JSON.parse(requests)).toEqual({
          cpu: KUBELET_TEST_CPU,
          memory: `${NETWORKS[NETWORK].minimumHardware.memoryGiB}Gi`,
        });
      }
      expect(await cloud.stop()).toEqual([]);
    },
  );

  itWithKubelet('a second pulumi up changes nothing (the engine: 0 to create, update, replace or delete)', async () => {
    // Beside its one read of the stack's own last outputs (a read, no change: LAST_RUN_READ).
    expect(Object.keys(changesBesideLastRunRead(await up()))).toEqual(['same']);
  });

  itWithKubelet(
    "both pods Running, every container ready: Besu and the metrics relay, the writer's proxy and relay signer, the validator's rotation client",
    async () => {
      for (const type of TYPES) {
        const names = kubernetesNames(type);
        const state = await fieldOf(
          cluster(),
          podOf(type),
          '{.status.phase} {range .status.containerStatuses[*]}{.name}={.ready},{end}',
        );
        const [phase, containers] = state.split(' ');
        const expected = [names.besuContainer, names.metricsRelayContainer, ...OWN_CONTAINERS[type](names)].sort();
        expect([type, phase]).toEqual([type, 'Running']);
        expect(containers.split(',').filter(Boolean).sort()).toEqual(expected.map((name) => `${name}=true`));
      }
    },
  );

  itWithKubelet("each node answers net_enode from inside its pod with the stack output's enode", async () => {
    for (const type of TYPES) {
      const exported = outputs.nodes[type].enode;
      expect([type, await rpcInsidePod(inBesu(type), 'net_enode')]).toEqual([type, exported]);
    }
    expect(outputs.nodes.writer.enode).not.toBe(outputs.nodes.validator.enode);
  });

  itWithKubelet('Besu runs as uid 1000, by its pod (not the image), on a read-only root file system', async () => {
    for (const type of TYPES) {
      // The pod sets the uid (runAsUser), the Besu container keeps it: not left to the image's own User.
      const uids = await fieldOf(
        cluster(),
        podOf(type),
        `{.spec.securityContext.runAsUser}|{.spec.containers[?(@.name=="${kubernetesNames(type).besuContainer}")].securityContext.runAsUser}`,
      );
      expect([type, uids]).toEqual([type, '1000|']);
      expect([type, (await inBesu(type)('id', '-u')).trim()]).toEqual([type, '1000']);
      const write = await inBesu(type)('sh', '-c', 'touch /opt/besu/written 2>&1 || true');
      expect([type, write]).toEqual([type, expect.stringContaining('Read-only file system')]);
    }
  });

  itWithKubelet("the data volume holds Besu's data, written by uid 1000", async () => {
    for (const type of TYPES) {
      const chain = path.join(cloud.volumes()[kubernetesNames(type).dataVolume], 'standin-chain.json');
      expect([type, fs.existsSync(chain) && fs.statSync(chain).uid]).toEqual([type, 1000]);
    }
  });
});

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The package's API inside an operator's own program, under Pulumi's real engine (issue 65 item 4): an Automation API
 * inline program that imports the node component by the package's name (`lacchain-besu-node`, its public API:
 * library/index.ts) and declares a writer on the test cluster with a Kubernetes provider of its own (made from the
 * cluster's kubeconfig, as an operator's program makes one for the cluster it declares), run by the real CLI with
 * the built Kubernetes provider (engine.ts) against the test API server. The `up` creates the node's objects through
 * that provider, under the component; its outputs are the enode and address of the imported key (derived here by
 * ethers), the permissioning request and the Service's address, checked to be the static IP; a second `up` changes
 * nothing. What the test cluster cannot show: tests/engine/clusterPath.test.ts's header.
 */
import * as fs from 'fs';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { computeAddress, SigningKey } from 'ethers';
import type { Stack } from '@pulumi/pulumi/automation';
import { ClusterNode } from 'lacchain-besu-node';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { TEST_GENESIS } from '../../testing/fixtures';
import { fieldOf } from '../../testing/cluster/objects';
import { clusterForSuite } from '../../testing/cluster/suite';
import { valuesFor } from '../../testing/values';
import { readingBack } from '../cli/pulumiCli';
import { EngineProject, engineProject, engineSuite, serveGenesis } from './engine';

jest.setTimeout(10 * 60 * 1000);
const engine = engineSuite("The package's node component in an operator's program (real Pulumi CLI and provider)");

const NETWORK = 'open-protestnet';
const KEY = `0x${'77'.repeat(32)}`;
const NAMESPACE = 'operators-nodes';
const { deploy } = valuesFor('testnet', 'writer');

engine.describe("a ClusterNode in the operator's own program", () => {
  const { cluster, itWithCluster } = clusterForSuite();
  let project: EngineProject;
  let stack: Stack;
  let genesis: Awaited<ReturnType<typeof serveGenesis>>;

  /** The operator's program: a provider of its own for the cluster, then the node on it. */
  const program = async () => {
    const provider = new k8s.Provider('operators-cluster', {
      kubeconfig: fs.readFileSync(cluster().kubeconfig, 'utf8'),
    });
    const writer = new ClusterNode('writer', {
      network: NETWORK,
      typenode: 'writer',
      // As an Elastic IP's publicIp would be: known only once another resource exists.
      publicIP: pulumi.output(provider.urn).apply(() => deploy.publicIP),
      deploy: {
        workerName: deploy.workerName,
        nodeName: deploy.nodeName,
        nodeEmail: deploy.nodeEmail,
        namespace: NAMESPACE,
      },
      secrets: { nodeKey: pulumi.secret(KEY) },
      provider,
    });
    return {
      enode: writer.enode,
      address: writer.address,
      permissioningRequest: writer.permissioningRequest,
      loadBalancerAddress: writer.loadBalancerAddress,
    };
  };

  beforeAll(async () => {
    genesis = await serveGenesis();
    NETWORKS[NETWORK].genesis = { ...TEST_GENESIS, url: genesis.url };
    project = engineProject(engine.provider(), cluster().kubeconfig);
    stack = await project.stack('operators-program', program);
  }, 180_000);

  afterAll(async () => {
    await genesis?.close();
    project?.remove();
  });

  itWithCluster(
    "up: the node's objects through the program's own provider, its enode and address as outputs",
    async () => {
      const result = await stack.up();
      expect(result.summary.result).toBe('succeeded');
      const outputs = Object.fromEntries(Object.entries(result.outputs).map(([key, value]) => [key, value.value]));
      const publicKey = new SigningKey(KEY).publicKey.slice(4);
      const enode = `enode://${publicKey}@${deploy.p2p.host}:${deploy.p2p.port}`;
      expect(outputs.enode).toBe(enode);
      expect(outputs.address).toBe(computeAddress(KEY).toLowerCase());
      expect(outputs.permissioningRequest).toMatchObject({ enode, address: outputs.address });
      expect(outputs.loadBalancerAddress).toBe(deploy.publicIP);
      // Public outputs, though the program gave a secret key.
      expect(result.outputs.enode.secret).toBe(false);

      const names = kubernetesNames('writer');
      const image = await fieldOf(
        cluster(),
        { kind: 'statefulset', name: names.statefulSet, namespace: NAMESPACE },
        '{.spec.template.spec.containers[0].image}',
      );
      expect(image).toMatch(/^hyperledger\/besu:/);
      // Every object of the node made by the program's provider, under the component.
      const state = (await stack.exportStack()).deployment.resources as any[];
      const statefulSet = state.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet');
      expect(statefulSet.provider).toContain('::operators-cluster::');
      expect(statefulSet.parent).toMatch(/lacchain:index:ClusterNode\$lacchain:index:KubernetesNode::writer$/);
      const clusterObjects = state.filter((r) => r.type.startsWith('kubernetes:') && r.custom);
      expect(clusterObjects.length).toBeGreaterThan(5);
      expect(clusterObjects.filter((r) => !String(r.provider).includes('::operators-cluster::'))).toEqual([]);
    },
  );

  itWithCluster('a second up changes nothing', async () => {
    const result = await readingBack(stack, { outputs: false, summary: true }).up();
    expect(result.summary.result).toBe('succeeded');
    const changes = { ...result.summary.resourceChanges };
    delete changes.same;
    expect(changes).toEqual({});
  });
});

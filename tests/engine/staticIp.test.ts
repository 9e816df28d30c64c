/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The static IP, checked after `pulumi up` under the real engine and the real Kubernetes provider (issue 65): the
 * provider waits for the node's LoadBalancer Service to get an address, then the program checks it is the enode's IP
 * (components/serviceAddress.ts). The cloud is the test's stand-in (testing/cluster/cloudStandin.ts): the nodes are on
 * `cloud: aws` (no spec.loadBalancerIP, so kwok's load balancer stage leaves them to it), and it answers the writer's
 * Service with another IP, then the validator's with a DNS name that resolves elsewhere (`localhost`). Each `up` fails
 * with the one line naming the value and the setting to fix; with the right addresses given, `up --refresh` passes
 * and the nodes' `loadBalancerAddress` outputs are the enodes' IPs. The failing runs are hosted by a process of their
 * own (engine.ts startUp), as an operator's `pulumi up` is.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import type { Stack } from '@pulumi/pulumi/automation';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { STACK_NETWORKS } from '../../core/catalog/networks';
import { CloudStandin, giveIngress, IngressEntry, startCloudStandin } from '../../testing/cluster/cloudStandin';
import { clusterForSuite } from '../../testing/cluster/suite';
import { addressFor, valuesFor } from '../../testing/values';
import { readingBack, setConfigs } from '../cli/pulumiCli';
import { EngineProject, engineProject, engineSuite, serveGenesis } from './engine';
import { engineProgram } from './program';

jest.setTimeout(10 * 60 * 1000);
const engine = engineSuite('The static IP checked after pulumi up (real Pulumi CLI and Kubernetes provider)');

const STACK = 'testnet';
const NETWORK = STACK_NETWORKS[STACK];
const NAMESPACE = 'lacchain';
const KEYS = { writer: `0x${'44'.repeat(32)}`, validator: `0x${'55'.repeat(32)}` };
const EIP = 'eipalloc-0123456789abcdef0';
/** The Service of a node as giveIngress names it. */
const serviceOf = (node: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: kubernetesNames(node).service, namespace: NAMESPACE },
});

engine.describe('the Service on the enode IP, or the up fails naming the setting', () => {
  const { cluster, itWithCluster } = clusterForSuite();
  let project: EngineProject;
  let stack: Stack;
  let genesis: Awaited<ReturnType<typeof serveGenesis>>;
  let cloud: CloudStandin;
  let scratch: string;
  /** What the stand-in cloud answers, by Service name. */
  const answers: Record<string, IngressEntry[]> = {
    [kubernetesNames('writer').service]: [{ ip: '200.10.20.99', ipMode: 'VIP' }],
    [kubernetesNames('validator').service]: [{ hostname: 'localhost' }],
  };

  /** The stack file with `nodes`, each on cloud aws with an Elastic IP allocation. */
  function writeStack(nodes: Array<'writer' | 'validator'>) {
    const config = {
      'lacchain:network': NETWORK,
      'lacchain:nodes': nodes.map((type) => ({ name: type, typenode: type, target: 'kubernetes' })),
    };
    fs.writeFileSync(path.join(project.dir, `Pulumi.${STACK}.yaml`), yaml.dump({ config }));
    for (const type of nodes) {
      const values = valuesFor(STACK, type, { loadBalancer: { cloud: 'aws', eipAllocations: [EIP] } });
      fs.writeFileSync(path.join(project.dir, 'values', `${type}.yml`), yaml.dump(values));
    }
  }

  /** A `pulumi up` in a process of its own: its exit code and standard error. */
  async function hostedUp(what: string, refresh: boolean) {
    const run = project.startUp(STACK, NETWORK, genesis.url, path.join(scratch, `${what}.events`), { refresh });
    return { code: await run.ended(), stderr: run.stderr() };
  }

  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-static-ip-'));
    genesis = await serveGenesis();
    project = engineProject(engine.provider(), cluster().kubeconfig);
    writeStack(['writer']);
    stack = await project.stack(STACK, engineProgram(NETWORK, genesis.url, project.dir));
    await stack.setConfig('lacchain:nodeKeys.writer', { value: KEYS.writer, secret: true }, true);
    cloud = startCloudStandin(cluster(), undefined, undefined, (service) => answers[service.metadata.name]);
  }, 180_000);

  afterAll(async () => {
    // The cluster's own afterAll (clusterForSuite, declared first) may have stopped it: what the stand-in could not do
    // then is no finding.
    await cloud?.stop();
    await genesis?.close();
    project?.remove();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  itWithCluster('another IP: the up fails with one line naming the value and the Elastic IP setting', async () => {
    const { code, stderr } = await hostedUp('other-ip', false);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `node writer: the Service is on 200.10.20.99, not the enode's IP ${addressFor('writer')}: fix values/writer.yml: deploy.loadBalancer.eipAllocations (the Elastic IP allocation of deploy.publicIP)`,
    );
  });

  itWithCluster('a DNS name that resolves elsewhere: the up (with refresh) fails naming it', async () => {
    // The writer's cloud fixed; a validator added, whose NLB name resolves to another address.
    await giveIngress(cluster(), serviceOf('writer'), [{ ip: addressFor('writer'), ipMode: 'VIP' }]);
    writeStack(['writer', 'validator']);
    // The stack file written anew: both keys set again (as an operator imports them).
    const keys = Object.entries(KEYS).map(([type, key]) => [`lacchain:nodeKeys.${type}`, { value: key, secret: true }]);
    await setConfigs(stack, Object.fromEntries(keys), true);
    const { code, stderr } = await hostedUp('dns-name', true);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      new RegExp(
        `node validator: the Service's DNS name localhost resolves to 127\\.0\\.0\\.1, not the enode's IP ${addressFor('validator').replace(/\./g, '\\.')}: fix values/validator\\.yml: deploy\\.loadBalancer\\.eipAllocations`,
      ),
    );
    expect(stderr).not.toContain('node writer: the Service');
  });

  itWithCluster("the enodes' IPs: up --refresh passes, each node's loadBalancerAddress its IP", async () => {
    await giveIngress(cluster(), serviceOf('validator'), [{ ip: addressFor('validator'), ipMode: 'VIP' }]);
    const result = await readingBack(stack, { outputs: 'values', summary: true }).up({ refresh: true });
    expect(result.summary.result).toBe('succeeded');
    const nodes = result.outputs.nodes.value as Record<string, any>;
    expect([nodes.writer.loadBalancerAddress, nodes.validator.loadBalancerAddress]).toEqual([
      addressFor('writer'),
      addressFor('validator'),
    ]);
  });
});

/**
 * The static IP, checked after `pulumi up` (issue 65): the node's Service must be on the enode's IP in
 * `status.loadBalancer.ingress`. Under the recording engine, the cloud's answer is the Service's status given by the
 * engine (as the Kubernetes provider returns it once the ingress is there): the enode's IP passes and is the node's
 * `loadBalancerAddress` output; another IP, a DNS name on a cloud that reports none, or (aws) a DNS name resolving
 * elsewhere fail the program with one line naming the value and the setting to fix. Without a status (the offline
 * plan, a preview of a new Service) nothing is checked.
 */
import * as pulumi from '@pulumi/pulumi';
import { settle } from '../../tools/recording/engine';
import { declareProgram } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { kubernetesStack, valuesFor } from '../../testing/values';
import { checkedServiceAddress } from '../../components/serviceAddress';
import { loadStack } from '../../core/settings/load';
import { memoryFiles, rawConfig } from '../../testing/fixtures';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import * as yaml from 'js-yaml';

/** What the cloud gives each node's Service, by the Service resource's name; none: no status at all. */
let ingressOf: Record<string, unknown[] | undefined> = {};

const recorded = recordProgram('testnet', (resource) => {
  if (resource.type !== 'kubernetes:core/v1:Service' || !(resource.name in ingressOf)) return undefined;
  const ingress = ingressOf[resource.name];
  return ingress === undefined ? undefined : { status: { loadBalancer: { ingress } } };
});

const ip = (type: 'writer' | 'validator' | 'bootnode') => valuesFor('testnet', type).deploy.publicIP;

/** Declares the three-node cluster stack with the writer's values changed by `extra`. */
async function declare(extra: Record<string, unknown> = {}) {
  const { config, files } = kubernetesStack('testnet');
  files['values/writer.yml'] = valuesFor('testnet', 'writer', extra);
  return declareProgram(recorded, 'testnet', config, files);
}

beforeEach(() => {
  ingressOf = {
    'writer-service': [{ ip: ip('writer') }],
    'validator-service': [{ ip: ip('validator') }],
    'bootnode-service': [{ ip: ip('bootnode') }],
  };
});

it("passes a Service on the enode's IP: the node's loadBalancerAddress", async () => {
  const declared = await declare();
  for (const type of ['writer', 'validator', 'bootnode'] as const) {
    expect((await settle(declared.outputs.nodes[type].loadBalancerAddress!)).value).toBe(ip(type));
  }
});

it('checks nothing while the Service has no status (the offline plan, a preview of a new Service)', async () => {
  ingressOf = {};
  const declared = await declare();
  expect((await settle(declared.outputs.nodes.writer.loadBalancerAddress!)).value).toBeUndefined();
});

/** A node of the three-node stack as the loader reads it, the writer's values changed by `extra`. */
function nodeOf(
  name: 'writer' | 'validator' | 'bootnode',
  extra: Record<string, unknown> = {},
): KubernetesNodeSettings {
  const { config } = kubernetesStack('testnet');
  const files = {
    'values/writer.yml': yaml.dump(valuesFor('testnet', 'writer', extra)),
    'values/validator.yml': yaml.dump(valuesFor('testnet', 'validator')),
    'values/bootnode.yml': yaml.dump(valuesFor('testnet', 'bootnode')),
  };
  const loaded = loadStack('testnet', rawConfig(config, 'Pulumi.testnet.yaml'), memoryFiles(files));
  return loaded.settings.nodes.find((n) => n.name === name) as KubernetesNodeSettings;
}
const statusOf = (...ingress: object[]) => ({ loadBalancer: { ingress } });
const noWait = { seconds: 0, everySeconds: 0 };

// The component's output is this function of the Service's status (components/kubernetesNode.ts); a RunError in it
// ends `pulumi up` with its message (shown under the real engine by tests/engine/clusterPath.test.ts).
it('fails on another IP with a RunError naming the value and the setting to fix', async () => {
  const check = checkedServiceAddress(nodeOf('writer'), statusOf({ ip: '200.10.20.99' }));
  await expect(check).rejects.toBeInstanceOf(pulumi.RunError);
  await expect(check).rejects.toThrow(
    `node writer: the Service is on 200.10.20.99, not the enode's IP ${ip('writer')}: fix values/writer.yml: deploy.publicIP, or deploy.loadBalancer.cloud for your cloud`,
  );
});

it("fails on another IP naming the cloud's setting (azure)", async () => {
  const node = nodeOf('writer', { loadBalancer: { cloud: 'azure', resourceGroup: 'lacchain-ips' } });
  await expect(checkedServiceAddress(node, statusOf({ ip: '200.10.20.99' }))).rejects.toThrow(
    `node writer: the Service is on 200.10.20.99, not the enode's IP ${ip('writer')}: fix values/writer.yml: deploy.publicIP with deploy.loadBalancer.resourceGroup (and publicIpName) of that public IP`,
  );
});

it('fails on a DNS name where the cloud reports none (EKS without the aws setting)', async () => {
  const name = 'k8s-lacchain-writer-0123456789.elb.us-east-1.amazonaws.com';
  await expect(checkedServiceAddress(nodeOf('writer'), statusOf({ hostname: name }))).rejects.toThrow(
    `node writer: the Service has the DNS name ${name}, not the enode's IP ${ip('writer')} (cloud other): fix values/writer.yml: deploy.loadBalancer.cloud, your cluster's (aws: with eipAllocations)`,
  );
});

it('fails on a Service with no address from the cloud', async () => {
  await expect(checkedServiceAddress(nodeOf('writer'), statusOf())).rejects.toThrow(
    `node writer: the Service has no address from the cloud yet, not the enode's IP ${ip('writer')}`,
  );
});

describe('aws: the NLB reports its DNS name, judged by the addresses it resolves to', () => {
  const awsNode = () =>
    nodeOf('writer', { loadBalancer: { cloud: 'aws', eipAllocations: ['eipalloc-0123456789abcdef0'] } });
  const status = { loadBalancer: { ingress: [{ hostname: 'writer-nlb.elb.example' }] } };

  it("passes when the name resolves to the enode's IP (after the name is published)", async () => {
    const answers = [[], [ip('writer')]];
    let asked = 0;
    const resolve = async () => answers[Math.min(asked++, 1)];
    await expect(checkedServiceAddress(awsNode(), status, resolve, { seconds: 5, everySeconds: 0.01 })).resolves.toBe(
      'writer-nlb.elb.example',
    );
    expect(asked).toBe(2);
  });

  it('fails when it resolves elsewhere, naming the Elastic IP setting', async () => {
    let asked = 0;
    const elsewhere = async () => (asked++, ['52.1.2.3']);
    // At once, without waiting: a published name is the answer.
    const check = checkedServiceAddress(awsNode(), status, elsewhere, { seconds: 60, everySeconds: 30 });
    await expect(check).rejects.toThrow(
      `node writer: the Service's DNS name writer-nlb.elb.example resolves to 52.1.2.3, not the enode's IP ${ip('writer')}: fix values/writer.yml: deploy.loadBalancer.eipAllocations (the Elastic IP allocation of deploy.publicIP)`,
    );
    expect(asked).toBe(1);
  });

  it('fails when it resolves to nothing in time', async () => {
    await expect(checkedServiceAddress(awsNode(), status, async () => [], noWait)).rejects.toThrow(
      "writer-nlb.elb.example resolves to no address, not the enode's IP",
    );
  });
});

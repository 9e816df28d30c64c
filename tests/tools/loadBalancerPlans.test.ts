/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * A load balancer per cloud (`deploy.loadBalancer`, issue 65), in the offline plan: the example stacks, which name no
 * cloud, plan the Services they planned before the setting existed (tests/fixtures/stacks/example-services.yaml,
 * recorded from main before it) and the same plan as with `cloud: other` written out; each cloud's plan writes the
 * Service its documentation asks for (core/catalog/loadBalancers.ts) and passes the policy pack; and a values file
 * that a cloud cannot use is refused with one line naming the file, the key, the value and what is allowed.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { pinnedExample } from '../../testing/examples';
import { planWorkspace } from '../../testing/planWorkspace';
import { RULES } from '../../policy/rules';

const { work, plan } = planWorkspace('lacchain-load-balancer-plan-');

/** The documents of a node's manifests in a plan. */
const manifests = (out: string, node: string): any[] =>
  yaml.loadAll(fs.readFileSync(path.join(out, 'kubernetes', `${node}.yaml`), 'utf8')).filter(Boolean) as any[];
const serviceOf = (out: string, node: string) => manifests(out, node).find((d) => d.kind === 'Service');

/** Every file of a plan folder, by its path in it. */
function planFiles(out: string, dir = ''): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(path.join(out, dir), { withFileTypes: true })) {
    const name = path.join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(files, planFiles(out, name));
    else files[name] = fs.readFileSync(path.join(out, name), 'utf8');
  }
  return files;
}

/** The testnet example (a writer), its writer's values file's deploy section changed by `change`: its stack file. */
function testnetWith(change: (deploy: Record<string, any>) => void): string {
  const dir = fs.mkdtempSync(path.join(work, 'example-'));
  const config = pinnedExample('testnet', dir);
  const file = path.join(dir, 'values', 'writer.yml');
  const values = yaml.load(fs.readFileSync(file, 'utf8')) as { deploy: Record<string, any> };
  change(values.deploy);
  fs.writeFileSync(file, yaml.dump(values));
  return config;
}

describe('the example stacks, which name no cloud', () => {
  const before = yaml.load(
    fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'stacks', 'example-services.yaml'), 'utf8'),
  ) as Record<string, any[]>;

  it.each(['testnet', 'mainnet'] as const)('%s: its Services as planned before deploy.loadBalancer', (stack) => {
    const result = plan(['--stack', stack, '--config', pinnedExample(stack, fs.mkdtempSync(path.join(work, 'ex-')))]);
    expect(result.code).toBe(0);
    const nodes = Object.keys(before).filter((key) => key.startsWith(`${stack}/`));
    expect(nodes.length).toBeGreaterThan(0);
    for (const key of nodes) {
      const node = path.basename(key, '.yaml');
      expect([key, manifests(result.out, node).filter((d) => d.kind === 'Service')]).toEqual([key, before[key]]);
    }
  });

  it('testnet: the same plan, file for file, as with `loadBalancer: {cloud: other}` written out', () => {
    const implicit = plan(['--stack', 'testnet', '--config', testnetWith(() => undefined)]);
    const explicit = plan([
      '--stack',
      'testnet',
      '--config',
      testnetWith((d) => (d.loadBalancer = { cloud: 'other' })),
    ]);
    expect([implicit.code, explicit.code]).toEqual([0, 0]);
    expect(planFiles(explicit.out)).toEqual(planFiles(implicit.out));
  });
});

describe("each cloud's Service, planned, passing the policy pack", () => {
  const IP = '200.10.20.10';
  const cases: Array<[string, Record<string, unknown>, Record<string, string>, string | undefined]> = [
    [
      'aws',
      { cloud: 'aws', eipAllocations: ['eipalloc-0123456789abcdef0'], subnets: ['subnet-0123456789abcdef0'] },
      {
        'service.beta.kubernetes.io/aws-load-balancer-type': 'external',
        'service.beta.kubernetes.io/aws-load-balancer-nlb-target-type': 'instance',
        'service.beta.kubernetes.io/aws-load-balancer-scheme': 'internet-facing',
        'service.beta.kubernetes.io/aws-load-balancer-eip-allocations': 'eipalloc-0123456789abcdef0',
        'service.beta.kubernetes.io/aws-load-balancer-subnets': 'subnet-0123456789abcdef0',
        'service.beta.kubernetes.io/aws-load-balancer-target-group-attributes': 'preserve_client_ip.enabled=true',
        'service.beta.kubernetes.io/aws-load-balancer-enable-tcp-udp-listener': 'true',
      },
      undefined,
    ],
    [
      'azure',
      { cloud: 'azure', resourceGroup: 'lacchain-ips', publicIpName: 'writer-ip' },
      {
        'service.beta.kubernetes.io/azure-load-balancer-resource-group': 'lacchain-ips',
        'service.beta.kubernetes.io/azure-pip-name': 'writer-ip',
        'service.beta.kubernetes.io/azure-load-balancer-ipv4': IP,
      },
      IP,
    ],
    ['gcp', { cloud: 'gcp' }, { 'cloud.google.com/l4-rbs': 'enabled' }, IP],
    [
      'metallb',
      { cloud: 'metallb', addressPool: 'public-pool' },
      { 'metallb.universe.tf/loadBalancerIPs': IP, 'metallb.universe.tf/address-pool': 'public-pool' },
      // Not beside the annotation: MetalLB refuses a Service with both (tests/kubelet/staticIpPeers.test.ts).
      undefined,
    ],
  ];

  it.each(cases)('%s', (_cloud, loadBalancer, annotations, loadBalancerIP) => {
    const result = plan(['--stack', 'testnet', '--config', testnetWith((d) => (d.loadBalancer = loadBalancer))]);
    expect([result.code, result.stderr]).toEqual([0, '']);
    const service = serviceOf(result.out, 'writer');
    // The cloud's annotations: every one but the node's identity (lacchain.net/enode and address).
    const cloudAnnotations = Object.fromEntries(
      Object.entries(service.metadata.annotations).filter(([key]) => !key.startsWith('lacchain.net/')),
    );
    expect(cloudAnnotations).toEqual(annotations);
    expect(service.spec.loadBalancerIP).toEqual(loadBalancerIP);
    // TCP and UDP on the p2p port, the peers' addresses kept, on every cloud.
    expect(service.spec.ports.slice(0, 2).map((p: any) => `${p.port}/${p.protocol}`)).toEqual([
      '60606/TCP',
      '60606/UDP',
    ]);
    expect(service.spec.externalTrafficPolicy).toBe('Local');
    const policy = JSON.parse(fs.readFileSync(path.join(result.out, 'policy.json'), 'utf8'));
    expect(policy).toEqual({ policyPack: 'lacchain-node', policies: RULES.map((r) => r.name), violations: [] });
  });
});

describe('a load balancer its cloud cannot use: one line naming the file, the key, the value and what is allowed', () => {
  const refused = (loadBalancer: Record<string, unknown>) => {
    const result = plan(['--stack', 'testnet', '--config', testnetWith((d) => (d.loadBalancer = loadBalancer))]);
    expect(result.code).toBe(2);
    return result.stderr.split('\n').filter((line) => line.startsWith('values/writer.yml'));
  };

  it('aws without its Elastic IP allocation', () => {
    expect(refused({ cloud: 'aws' })).toEqual([
      expect.stringMatching(
        /^values\/writer\.yml: deploy\.loadBalancer\.eipAllocations: missing; allowed: the Elastic IP allocation of deploy\.publicIP .*required with cloud aws/,
      ),
    ]);
  });

  it('aws with more subnets than allocations', () => {
    expect(
      refused({
        cloud: 'aws',
        eipAllocations: ['eipalloc-0123456789abcdef0'],
        subnets: ['subnet-aaaaaaaa', 'subnet-bbbbbbbb'],
      }),
    ).toEqual([
      'values/writer.yml: deploy.loadBalancer.subnets: given ["subnet-aaaaaaaa","subnet-bbbbbbbb"]; allowed: as many subnets as eipAllocations (1), one Elastic IP per subnet, in the same order',
    ]);
  });

  it('an allocation id that is none', () => {
    expect(refused({ cloud: 'aws', eipAllocations: ['203.0.113.7'] })).toEqual([
      'values/writer.yml: deploy.loadBalancer.eipAllocations[0]: given "203.0.113.7"; allowed: an Elastic IP allocation id such as eipalloc-0123456789abcdef0',
    ]);
  });

  it('azure without the resource group of its public IP', () => {
    expect(refused({ cloud: 'azure', publicIpName: 'writer-ip' })).toEqual([
      "values/writer.yml: deploy.loadBalancer.resourceGroup: missing; allowed: the resource group of deploy.publicIP's public IP, required with cloud azure",
    ]);
  });

  it("another cloud's field", () => {
    expect(refused({ cloud: 'gcp', addressPool: 'public-pool' })).toEqual([
      'values/writer.yml: deploy.loadBalancer.addressPool: given "public-pool"; allowed: no addressPool with cloud gcp: it is read with cloud metallb',
    ]);
  });

  it('a cloud that is none', () => {
    expect(refused({ cloud: 'eks' })).toEqual([
      'values/writer.yml: deploy.loadBalancer.cloud: given "eks"; allowed: one of aws, azure, gcp, metallb, other',
    ]);
  });
});

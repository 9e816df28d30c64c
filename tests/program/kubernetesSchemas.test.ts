/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Every manifest the program declares validates against the official Kubernetes schemas (kubernetes-models), and the
 * NetworkPolicy of each pod admits what the node's `rpc.exposure` promises, and nothing else.
 */
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ConfigMap, Namespace, PersistentVolumeClaim, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { CronJob } from 'kubernetes-models/batch/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { StackName } from '../../core/catalog/networks';
import { unwrapSecrets } from '../../tools/recording/engine';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram, Declared, inputsOf } from '../../testing/program';
import { kubernetesStack } from '../../testing/values';
import { companionsForRpc } from '../../testing/fixtures';

const recorded = recordProgram();

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'kubernetes:apps/v1:StatefulSet': StatefulSet,
  'kubernetes:core/v1:ConfigMap': ConfigMap,
  'kubernetes:core/v1:Namespace': Namespace,
  'kubernetes:core/v1:PersistentVolumeClaim': PersistentVolumeClaim,
  'kubernetes:core/v1:Secret': Secret,
  'kubernetes:core/v1:Service': Service,
  'kubernetes:networking.k8s.io/v1:NetworkPolicy': NetworkPolicy,
  'kubernetes:core/v1:ServiceAccount': ServiceAccount,
  'kubernetes:rbac.authorization.k8s.io/v1:Role': Role,
  'kubernetes:rbac.authorization.k8s.io/v1:RoleBinding': RoleBinding,
  'kubernetes:batch/v1:CronJob': CronJob,
};

describe.each(['testnet', 'mainnet'] as StackName[])('manifests of stack %s', (stack) => {
  let declared: Declared;
  beforeAll(async () => {
    const { config, files } = kubernetesStack(stack);
    // Scheduled backups: the CronJob and its account and rights are declared too.
    declared = await declareProgram(recorded, stack, { ...config, 'lacchain:backups': { schedule: 'daily' } }, files);
  });

  it('has a schema for every Kubernetes resource type declared', () => {
    const types = new Set(declared.resources.filter((r) => r.type.startsWith('kubernetes:')).map((r) => r.type));
    expect([...types].sort()).toEqual(Object.keys(MODELS).sort());
  });

  it('validates every manifest', () => {
    const kubernetes = declared.resources.filter((r) => r.type.startsWith('kubernetes:'));
    // Per node: key, config, data, backups volume, backup Secret, policy, set, service, and the schedule's four.
    expect(kubernetes.length).toBe(1 + 3 * 12);
    for (const r of kubernetes) {
      const manifest = unwrapSecrets(r.inputs);
      expect(() => new MODELS[r.type](manifest).validate()).not.toThrow();
    }
  });

  it('would catch a malformed manifest (the check is real)', () => {
    const set = declared.resources.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet')!;
    const broken = JSON.parse(JSON.stringify(unwrapSecrets(set.inputs)));
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'p2p';
    expect(() => new StatefulSet(broken).validate()).toThrow(/containerPort must be integer/);
  });
});

const NETWORK_POLICY = 'kubernetes:networking.k8s.io/v1:NetworkPolicy';
const P2P = 'anywhere: TCP/60606 UDP/60606';

/** What each exposure admits into the pod, rule by rule: who, then the pod's ports. */
const ADMITTED: Record<string, Record<'writer' | 'validator', string[]>> = {
  // The writer's proxy: the Service's 80 reaches the pod on the container's 8080.
  public: {
    writer: [P2P, 'anywhere: TCP/8080', 'anywhere: TCP/4545'],
    validator: [P2P, 'anywhere: TCP/4545'],
  },
  'tls-only': { writer: [P2P, 'anywhere: TCP/8080'], validator: [P2P] },
  // An internal writer's proxy still serves the gas model to the pods of its namespace.
  internal: { writer: [P2P, 'namespace: TCP/8080', 'namespace: TCP/4545'], validator: [P2P, 'namespace: TCP/4545'] },
};

/** The rules of a NetworkPolicy as `who: PROTOCOL/port ...`; `who` is anywhere or this namespace's pods. */
function admitted(policy: any): string[] {
  return policy.spec.ingress.map((rule: any) => {
    const who =
      rule.from === undefined
        ? 'anywhere'
        : JSON.stringify(rule.from) === JSON.stringify([{ podSelector: {} }])
          ? 'namespace'
          : JSON.stringify(rule.from);
    return `${who}: ${rule.ports.map((p: any) => `${p.protocol}/${p.port}`).join(' ')}`;
  });
}

describe.each(Object.keys(ADMITTED))('the NetworkPolicy of each pod with exposure %s', (exposure) => {
  let declared: Declared;
  beforeAll(async () => {
    const rpc = { exposure };
    // A validator reachable from outside serves no IBFT, which its rotation client needs: off there.
    const { config, files } = kubernetesStack('testnet', {
      'lacchain:rpc': rpc,
      'lacchain:companions': companionsForRpc(rpc),
    });
    declared = await declareProgram(recorded, 'testnet', config, files);
  });

  it.each(['writer', 'validator'] as const)('%s: admits only what the exposure promises, and validates', (node) => {
    const policy = unwrapSecrets(inputsOf(declared, NETWORK_POLICY, `${node}-network-policy`)) as any;
    expect(() => new NetworkPolicy(policy).validate()).not.toThrow();
    expect(policy.metadata).toMatchObject({ name: `besu-node-${node}`, namespace: 'lacchain' });
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    expect(admitted(policy)).toEqual(ADMITTED[exposure][node]);
    // It selects the node's pod, and only it.
    const set = inputsOf(declared, 'kubernetes:apps/v1:StatefulSet', `${node}-node`);
    expect(policy.spec.podSelector).toEqual({ matchLabels: set.spec.selector.matchLabels });
    expect(set.spec.template.metadata.labels).toMatchObject(policy.spec.podSelector.matchLabels);
    expect(policy.spec.podSelector.matchLabels['app.kubernetes.io/instance']).toBe(node);
  });

  it("admits the pod ports behind every port of the node's Service", () => {
    for (const node of ['writer', 'validator']) {
      const service = inputsOf(declared, 'kubernetes:core/v1:Service', `${node}-service`);
      const containers = inputsOf(declared, 'kubernetes:apps/v1:StatefulSet', `${node}-node`).spec.template.spec
        .containers as any[];
      const policy = inputsOf(declared, NETWORK_POLICY, `${node}-network-policy`);
      const open = policy.spec.ingress
        .filter((rule: any) => rule.from === undefined)
        .flatMap((rule: any) => rule.ports.map((p: any) => `${p.protocol}/${p.port}`));
      for (const port of service.spec.ports) {
        const target = containers.flatMap((c) => c.ports).find((p: any) => p.name === port.targetPort);
        expect([node, port.name, open]).toEqual([
          node,
          port.name,
          expect.arrayContaining([`${port.protocol}/${target.containerPort}`]),
        ]);
      }
    }
  });
});

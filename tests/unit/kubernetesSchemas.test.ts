/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Every manifest the program declares validates against the official Kubernetes schemas (kubernetes-models).
 */
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { ConfigMap, Namespace, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { StackName } from '../../core/catalog/networks';
import { unwrapSecrets } from '../../tools/recording/engine';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram, Declared } from '../../testing/program';
import { kubernetesStack } from '../../testing/values';

const recorded = recordProgram();

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'kubernetes:apps/v1:StatefulSet': StatefulSet,
  'kubernetes:core/v1:ConfigMap': ConfigMap,
  'kubernetes:core/v1:Namespace': Namespace,
  'kubernetes:core/v1:PersistentVolumeClaim': PersistentVolumeClaim,
  'kubernetes:core/v1:Secret': Secret,
  'kubernetes:core/v1:Service': Service,
};

describe.each(['testnet', 'mainnet'] as StackName[])('manifests of stack %s', (stack) => {
  let declared: Declared;
  beforeAll(async () => {
    const { config, files } = kubernetesStack(stack);
    declared = await declareProgram(recorded, stack, config, files);
  });

  it('has a schema for every Kubernetes resource type declared', () => {
    const types = new Set(declared.resources.filter((r) => r.type.startsWith('kubernetes:')).map((r) => r.type));
    expect([...types].sort()).toEqual(Object.keys(MODELS).sort());
  });

  it('validates every manifest', () => {
    const kubernetes = declared.resources.filter((r) => r.type.startsWith('kubernetes:'));
    expect(kubernetes.length).toBe(16);
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

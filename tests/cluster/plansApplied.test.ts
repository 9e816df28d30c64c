/**
 * The cluster path against a real Kubernetes API server (testing/cluster/): every manifest the program declares,
 * for both networks, each node type, the RPC exposures and authentication, applied server-side; the real admission
 * (Pod Security `restricted` on the program's namespace, the API's own validation) takes or refuses them, the pods
 * are scheduled on their pinned worker and Running, each LoadBalancer gets its static IP. Then an upgrade: only the
 * StatefulSet changes.
 */
import { generateKeyPairSync } from 'crypto';
import { StackName } from '../../core/catalog/networks';
import { NODE_TYPES } from '../../core/catalog/nodeTypes';
import { companionsForRpc } from '../../testing/fixtures';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram } from '../../testing/program';
import { valuesFor } from '../../testing/values';
import { applyServerSide, kubernetesManifests, Manifest } from '../../testing/cluster/manifests';
import { fieldOf, fieldWhen } from '../../testing/cluster/objects';
import { clusterForSuite } from '../../testing/cluster/suite';

jest.setTimeout(300_000);

const recorded = recordProgram();
const JWT_PUBLIC_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .publicKey.export({ type: 'spki', format: 'pem' })
  .toString();
const { cluster, itWithCluster } = clusterForSuite();

/** A stack with one Kubernetes node of every type in `namespace`, its values files, and extra stack config. */
async function manifestsOf(
  stack: StackName,
  namespace: string,
  extraConfig: Record<string, unknown> = {},
  extraValues: Record<string, unknown> = {},
) {
  const config = {
    'lacchain:network': stack === 'mainnet' ? 'mainnet-omega' : 'open-protestnet',
    'lacchain:nodes': NODE_TYPES.map((t) => ({ name: t, typenode: t, target: 'kubernetes' })),
    ...extraConfig,
  };
  const files = Object.fromEntries(
    NODE_TYPES.map((t) => [`values/${t}.yml`, valuesFor(stack, t, { namespace, ...extraValues })]),
  );
  return kubernetesManifests(await declareProgram(recorded, stack, config, files));
}

const jsonpath = (kind: string, name: string, namespace: string, path: string) =>
  fieldOf(cluster(), { kind, name, namespace }, path);

/** Waits until every node's pod runs on its worker with all its containers ready, and its LoadBalancer has its IP. */
async function expectRunning(manifests: Manifest[]) {
  for (const set of manifests.filter((m) => m.kind === 'StatefulSet')) {
    const { namespace, name } = set.metadata as { namespace: string; name: string };
    const running = `Running ${set.spec.template.spec.nodeName} ${'true,'.repeat(set.spec.template.spec.containers.length)}`;
    const pod = { kind: 'pod', name: `${name}-0`, namespace };
    const seen = await fieldWhen(
      cluster(),
      pod,
      '{.status.phase} {.spec.nodeName} {range .status.containerStatuses[*]}{.ready},{end}',
      (value) => value === running,
    );
    expect([pod.name, seen]).toEqual([pod.name, running]);
  }
  for (const service of manifests.filter((m) => m.kind === 'Service' && m.spec.type === 'LoadBalancer')) {
    const { namespace, name } = service.metadata as { namespace: string; name: string };
    const ingress = await fieldWhen(
      cluster(),
      { kind: 'service', name, namespace },
      '{.status.loadBalancer.ingress[0].ip}',
      (value) => value !== '',
    );
    expect([name, ingress]).toEqual([name, service.spec.loadBalancerIP]);
  }
}

const VARIANTS: [string, StackName, Record<string, unknown>][] = [
  ['testnet', 'testnet', {}],
  ['mainnet', 'mainnet', {}],
  ...(['public', 'tls-only', 'internal'] as const).map((exposure): [string, StackName, Record<string, unknown>] => [
    `exposure-${exposure}`,
    'testnet',
    { 'lacchain:rpc': { exposure }, 'lacchain:companions': companionsForRpc({ exposure }) },
  ]),
  ...(
    [
      ['password', { method: 'password', users: [{ name: 'reader' }] }],
      ['jwt', { method: 'jwt', publicKey: JWT_PUBLIC_KEY, algorithm: 'RS256' }],
    ] as const
  ).map(([method, authentication]): [string, StackName, Record<string, unknown>] => {
    const rpc = { exposure: 'internal', authentication };
    return [
      `auth-${method}`,
      'testnet',
      {
        'lacchain:rpc': rpc,
        'lacchain:companions': companionsForRpc(rpc),
        ...(method === 'password' ? { 'lacchain:rpcPasswords': { reader: 'a-long-enough-password' } } : {}),
      },
    ];
  }),
];

describe('the plans applied to a real API server', () => {
  itWithCluster.each(VARIANTS)(
    '%s: admitted, scheduled on the pinned workers, Running, load balancers on their IPs',
    async (name, stack, extra) => {
      const manifests = await manifestsOf(stack, `ns-${name}`, extra);
      expect(manifests.length).toBeGreaterThan(10);
      await applyServerSide(cluster(), manifests);
      await expectRunning(manifests);
      // The namespace enforces the restricted Pod Security Standard, so the pods above passed the real admission.
      const labels = await cluster().kubectlOk(['get', 'namespace', `ns-${name}`, '-o', 'jsonpath={.metadata.labels}']);
      expect(JSON.parse(labels)).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted' });
    },
  );
});

describe('what the real API server refuses', () => {
  /** The writer's pod, as its StatefulSet would create it, as a Pod of its own in `namespace`. */
  async function writerPod(namespace: string) {
    const manifests = await manifestsOf('testnet', namespace);
    const set = manifests.find((m) => m.kind === 'StatefulSet' && m.metadata.name === 'besu-node-writer')!;
    return {
      manifests,
      pod: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'writer-as-pod', namespace, labels: { test: 'admission' } },
        spec: structuredClone(set.spec.template.spec),
      } as Manifest,
    };
  }

  itWithCluster(
    'the Pod Security admission takes the pod as written and refuses it without its hardening',
    async () => {
      const { manifests, pod } = await writerPod('ns-admission');
      await applyServerSide(
        cluster(),
        manifests.filter((m) => m.kind === 'Namespace'),
      );
      await applyServerSide(cluster(), [pod]);
      await cluster().kubectlOk(['delete', 'pod', 'writer-as-pod', '-n', 'ns-admission', '--wait=false']);

      const escalating = structuredClone(pod);
      escalating.metadata.name = 'writer-escalating';
      escalating.spec.containers[0].securityContext.allowPrivilegeEscalation = true;
      await expect(applyServerSide(cluster(), [escalating])).rejects.toThrow(
        /violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false/,
      );
      const asRoot = structuredClone(pod);
      asRoot.metadata.name = 'writer-as-root';
      asRoot.spec.securityContext.runAsNonRoot = false;
      asRoot.spec.securityContext.runAsUser = 0;
      await expect(applyServerSide(cluster(), [asRoot])).rejects.toThrow(/violates PodSecurity "restricted:latest"/);
    },
  );

  itWithCluster("the API's validation refuses a malformed manifest", async () => {
    const manifests = await manifestsOf('testnet', 'ns-malformed');
    const set = structuredClone(manifests.find((m) => m.kind === 'StatefulSet')!);
    set.spec.template.spec.containers[0].ports[0].containerPort = 70000;
    await applyServerSide(
      cluster(),
      manifests.filter((m) => m.kind === 'Namespace'),
    );
    await expect(applyServerSide(cluster(), [set])).rejects.toThrow(/containerPort: Invalid value: 70000/);
  });
});

describe('an upgrade on the cluster', () => {
  /** Every object's kind/name and resourceVersion in `namespace`. */
  async function versions(namespace: string, manifests: Manifest[]) {
    const entries = await Promise.all(
      manifests
        .filter((m) => m.kind !== 'Namespace')
        .map(async (m) => [
          `${m.kind}/${m.metadata.name}`,
          await jsonpath(m.kind.toLowerCase(), m.metadata.name, namespace, '{.metadata.resourceVersion}'),
        ]),
    );
    return Object.fromEntries(entries) as Record<string, string>;
  }

  itWithCluster('23.4.1 then 24.1.0: only the StatefulSets change; the key Secrets and volumes are kept', async () => {
    const namespace = 'ns-upgrade';
    const first = await manifestsOf('testnet', namespace, {}, { releaseVersion: '23.4.1' });
    await applyServerSide(cluster(), first);
    await expectRunning(first);
    const before = await versions(namespace, first);
    const next = await manifestsOf('testnet', namespace, {}, { releaseVersion: '24.1.0' });
    await applyServerSide(cluster(), next);
    const after = await versions(namespace, next);
    const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
    expect(changed.sort()).toEqual(NODE_TYPES.map((t) => `StatefulSet/besu-node-${t}`).sort());
    const image = await jsonpath(
      'statefulset',
      'besu-node-writer',
      namespace,
      '{.spec.template.spec.containers[0].image}',
    );
    expect(image).toMatch(/:24\.1\.0/);
    await expectRunning(next);
  });
});

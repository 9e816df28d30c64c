/**
 * A cluster node's metrics and alerts against a real API server (testing/cluster/) with the Prometheus Operator's own
 * CRDs (v0.85.0's, fetched by tools/kubernetes/crds.sh: their schemas validate what is applied): with
 * `lacchain:monitoring.prometheusOperator`, the node's metrics Service, ServiceMonitor and PrometheusRule are admitted,
 * the Service selects the pod's metrics port, and the ServiceMonitor selects that Service only; without it, the pod
 * carries the `prometheus.io/*` annotations. Either way the pod runs its metrics relay beside Besu and the
 * NetworkPolicy admits the named scraper, by namespace and labels, to the metrics port only.
 */
import { METRICS } from '../../core/catalog/metrics';
import { applyServerSide, kubernetesManifests, Manifest } from '../../testing/cluster/manifests';
import { prometheusOperatorCrds } from '../../testing/cluster/cluster';
import { fieldOf, fieldWhen } from '../../testing/cluster/objects';
import { clusterForSuite } from '../../testing/cluster/suite';
import { KEY_ONE } from '../../testing/fixtures';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram } from '../../testing/program';
import { valuesFor } from '../../testing/values';

jest.setTimeout(300_000);

const recorded = recordProgram();
const { cluster, itWithCluster } = clusterForSuite();
const OPERATOR = 'monitoring-operator';
const ANNOTATED = 'monitoring-annotated';
const SCRAPER = { namespace: 'monitoring', podLabels: { 'app.kubernetes.io/name': 'prometheus' } };
const RELEASE_LABEL = { release: 'kube-prometheus-stack' };

/** Applies the stack of one writer in `namespace`, with the scraper named, with or without the Prometheus Operator. */
async function apply(namespace: string, prometheusOperator: boolean): Promise<Manifest[]> {
  const declared = await declareProgram(
    recorded,
    'testnet',
    {
      'lacchain:network': 'open-protestnet',
      'lacchain:kubeContext': cluster().context,
      'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
      'lacchain:monitoring': {
        scraper: SCRAPER,
        prometheusOperator,
        ...(prometheusOperator ? { resourceLabels: RELEASE_LABEL } : {}),
      },
      'lacchain:nodeKeys': { writer: KEY_ONE },
    },
    { 'values/writer.yml': valuesFor('testnet', 'writer', { namespace }) },
  );
  const manifests = kubernetesManifests(declared);
  await applyServerSide(cluster(), manifests);
  return manifests;
}

const json = async (args: string[]) => JSON.parse(await cluster().kubectlOk([...args, '-o', 'json']));

beforeAll(async () => {
  if (itWithCluster === it.skip) return;
  for (const file of prometheusOperatorCrds()) await cluster().kubectlOk(['apply', '--server-side', '-f', file]);
  for (const crd of ['servicemonitors', 'prometheusrules']) {
    await cluster().kubectlOk(['wait', '--for=condition=Established', `crd/${crd}.monitoring.coreos.com`]);
  }
});

describe("a cluster node's metrics and alerts on a real API server", () => {
  itWithCluster('the CRDs validate: a ServiceMonitor the Prometheus Operator would not read is refused', async () => {
    await cluster().kubectlOk(['create', 'namespace', 'crd-check']);
    const wrong = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'wrong', namespace: 'crd-check' },
      spec: { selector: {}, endpoints: [{ port: 'metrics', relabelings: [{ action: 'bogus', targetLabel: 'job' }] }] },
    };
    const refused = await cluster().kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify(wrong));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/Unsupported value: "bogus"/);
  });

  itWithCluster(
    'with the Prometheus Operator: the metrics Service, ServiceMonitor and PrometheusRule, admitted and selecting the pod',
    async () => {
      const manifests = await apply(OPERATOR, true);
      expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual(
        expect.arrayContaining([
          'Service/besu-node-writer-metrics',
          'ServiceMonitor/besu-node-writer',
          'PrometheusRule/besu-node-writer',
        ]),
      );
      // The pod runs its metrics relay beside Besu, every container ready.
      const pod = { kind: 'pod', name: 'besu-node-writer-0', namespace: OPERATOR };
      expect(await fieldWhen(cluster(), pod, '{.status.phase}', (v) => v === 'Running')).toBe('Running');
      expect(await fieldOf(cluster(), pod, '{.spec.containers[*].name}')).toContain('writer-metrics-relay');
      expect(await fieldOf(cluster(), pod, "{.metadata.annotations['prometheus\\.io/scrape']}")).toBe('');
      // The Service's endpoints: the pod's metrics port.
      const ports = await fieldWhen(
        cluster(),
        {
          kind: 'endpointslices',
          name: '',
          namespace: OPERATOR,
          selector: 'kubernetes.io/service-name=besu-node-writer-metrics',
        },
        '{.items[0].ports[0].port} {.items[0].endpoints[0].targetRef.name}',
        (v) => v.startsWith(String(METRICS.podPort)),
      );
      expect(ports).toBe(`${METRICS.podPort} besu-node-writer-0`);
      // The ServiceMonitor selects that Service, not the node's LoadBalancer.
      const monitor = await json(['get', 'servicemonitor', 'besu-node-writer', '-n', OPERATOR]);
      expect(monitor.metadata.labels).toMatchObject(RELEASE_LABEL);
      const selector = Object.entries(monitor.spec.selector.matchLabels as Record<string, string>)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const selected = await json(['get', 'services', '-n', OPERATOR, '-l', selector]);
      expect(selected.items.map((s: Manifest) => s.metadata.name)).toEqual(['besu-node-writer-metrics']);
      expect(monitor.spec.endpoints[0].relabelings).toEqual(
        expect.arrayContaining([
          { action: 'replace', targetLabel: 'lacchain_node', replacement: 'writer' },
          { action: 'replace', targetLabel: 'lacchain_stack', replacement: 'testnet' },
        ]),
      );
      // The node's alerts, for this node's series only.
      const rule = await json(['get', 'prometheusrule', 'besu-node-writer', '-n', OPERATOR]);
      const alerts = rule.spec.groups[0].rules.map((r: { alert: string }) => r.alert);
      expect(new Set(alerts)).toEqual(
        new Set([
          'BesuDown',
          'BesuNoPeers',
          'BesuHeadStalled',
          'BesuBehind',
          'BesuDiskLow',
          'BesuRestarting',
          'CompanionDown',
        ]),
      );
      for (const r of rule.spec.groups[0].rules) expect(r.expr).toMatch(/writer/);
    },
  );

  itWithCluster('without it: the prometheus.io annotations, no ServiceMonitor', async () => {
    const manifests = await apply(ANNOTATED, false);
    expect(manifests.some((m) => m.kind === 'ServiceMonitor' || m.kind === 'PrometheusRule')).toBe(false);
    const pod = { kind: 'pod', name: 'besu-node-writer-0', namespace: ANNOTATED };
    expect(await fieldWhen(cluster(), pod, '{.status.phase}', (v) => v === 'Running')).toBe('Running');
    const annotations = JSON.parse(await fieldOf(cluster(), pod, '{.metadata.annotations}'));
    expect(annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(METRICS.podPort),
      'prometheus.io/path': METRICS.besuPath,
    });
    expect(JSON.parse(await fieldOf(cluster(), pod, '{.metadata.labels}'))).toMatchObject({
      'lacchain.net/stack': 'testnet',
      'app.kubernetes.io/instance': 'writer',
    });
  });

  itWithCluster('the NetworkPolicy admits the named scraper to the metrics port, and only there', async () => {
    const policy = await json(['get', 'networkpolicy', 'besu-node-writer', '-n', ANNOTATED]);
    const metricsRules = policy.spec.ingress.filter((rule: { ports: { port: number }[] }) =>
      rule.ports.some((p) => p.port === METRICS.podPort),
    );
    expect(metricsRules).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': SCRAPER.namespace } },
            podSelector: { matchLabels: SCRAPER.podLabels },
          },
        ],
        ports: [{ port: METRICS.podPort, protocol: 'TCP' }],
      },
    ]);
  });
});

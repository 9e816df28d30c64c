/**
 * A cluster node's metrics and alerts (`lacchain:monitoring`): the settings refused when they would do nothing or are
 * not Kubernetes labels, and what each choice makes — the metrics relay beside Besu always, the scraper's rule in the
 * pod's NetworkPolicy, the `prometheus.io` annotations, or the Prometheus Operator's ServiceMonitor and PrometheusRule.
 */
import { METRICS } from '../../core/catalog/metrics';
import {
  metricsRelayContainer,
  prometheusOperatorManifests,
  scrapeAnnotations,
} from '../../core/kubernetes/monitoring';
import { networkPolicyManifest } from '../../core/kubernetes/networkPolicy';
import { statefulSetManifest } from '../../core/kubernetes/manifests';
import { describeNode } from '../../core/node/description';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { loadTestnet, validTestnetConfig } from '../../testing/fixtures';

const SCRAPER = { namespace: 'monitoring', podLabels: { 'app.kubernetes.io/name': 'prometheus' } };
const load = (monitoring?: unknown) =>
  loadTestnet({ ...validTestnetConfig(), ...(monitoring === undefined ? {} : { 'lacchain:monitoring': monitoring }) });
const writer = (monitoring?: unknown) =>
  load(monitoring).nodes.find((n) => n.target === 'kubernetes') as KubernetesNodeSettings;
const refusal = (monitoring: unknown) => {
  try {
    load(monitoring);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('accepted');
};
const metricsRules = (node: KubernetesNodeSettings) =>
  networkPolicyManifest(describeNode(node)).spec.ingress.filter((rule) =>
    rule.ports.some((p) => p.port === METRICS.podPort),
  );

describe('lacchain:monitoring, validated', () => {
  it('refuses the Prometheus Operator without a scraper to admit, and its labels without it', () => {
    expect(refusal({ prometheusOperator: true })).toMatch(
      /Pulumi\.testnet\.yaml: lacchain:monitoring\.prometheusOperator: given true; allowed: true only with lacchain:monitoring\.scraper/,
    );
    expect(refusal({ scraper: SCRAPER, resourceLabels: { release: 'x' } })).toMatch(
      /lacchain:monitoring\.resourceLabels: .*allowed: labels only with lacchain:monitoring\.prometheusOperator: true/,
    );
  });

  it('refuses a scraper without labels, which would admit every pod of its namespace, saying so', () => {
    expect(refusal({ scraper: { namespace: 'monitoring', podLabels: {} } })).toBe(
      "Pulumi.testnet.yaml: lacchain:monitoring.scraper.podLabels: given {}; allowed: at least one label your Prometheus's pods carry (e.g. app.kubernetes.io/name: prometheus): with none, the pods' NetworkPolicy would admit every pod of namespace monitoring to the metrics port (9546)",
    );
    // One label is enough: the NetworkPolicy admits the pods that carry it, in that namespace.
    const rules = metricsRules(writer({ scraper: { namespace: 'monitoring', podLabels: { app: 'prometheus' } } }));
    expect(rules.map((rule) => rule.from)).toEqual([
      [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
          podSelector: { matchLabels: { app: 'prometheus' } },
        },
      ],
    ]);
  });

  it('refuses what is not a Kubernetes namespace or label', () => {
    expect(refusal({ scraper: { namespace: 'Monitoring', podLabels: { app: 'prometheus' } } })).toMatch(
      /lacchain:monitoring\.scraper\.namespace: given "Monitoring"; allowed: a Kubernetes name/,
    );
    for (const podLabels of [{ 'bad key!': 'x' }, { app: 'has space' }, { 'a/b/c': 'x' }, { app: 'x'.repeat(64) }]) {
      expect(refusal({ scraper: { namespace: 'monitoring', podLabels } })).toMatch(
        /lacchain:monitoring\.scraper\.podLabels: .*allowed: a mapping of Kubernetes labels/,
      );
    }
    expect(
      writer({ scraper: { namespace: 'm', podLabels: { 'app.kubernetes.io/name': 'prometheus', tier: '' } } }),
    ).toBeDefined();
  });
});

describe("a cluster node's metrics", () => {
  it('by default: the relay pushes to the network as the node, and nobody may scrape the pod', () => {
    const node = writer();
    const relay = metricsRelayContainer(node, 'hyperledger/besu:24.1.0');
    expect(relay.image).toBe('hyperledger/besu:24.1.0');
    expect(relay.command).toEqual(['java', ...METRICS.podRelayJavaOptions, '/etc/besu/config/metrics-relay.java']);
    expect(Object.fromEntries(relay.env.map((e) => [e.name, e.value]))).toEqual({
      BESU_METRICS_URL: 'http://127.0.0.1:9545/metrics',
      PUSH_URL: `http://${node.network.metricsPushHost}:9091/metrics/job/org-writer`,
      INTERVAL: '5',
      LISTEN_PORT: String(METRICS.podPort),
      LAST_PUSH_SERIES: METRICS.lastPushSeries,
    });
    expect(relay.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    const pod = statefulSetManifest(describeNode(node), 'x', {
      configMap: 'besu-node-x-config-0123456789',
      digest: '0'.repeat(64),
    }).spec.template;
    expect(pod.spec.containers.map((c) => c.name)).toContain('writer-metrics-relay');
    expect(metricsRules(node)).toEqual([]);
    expect(scrapeAnnotations(node)).toEqual({});
    expect(prometheusOperatorManifests(node)).toBeUndefined();
  });

  it('with a scraper: its pods only, by namespace and labels together, and the prometheus.io annotations', () => {
    const node = writer({ scraper: SCRAPER });
    expect(metricsRules(node)).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
            podSelector: { matchLabels: SCRAPER.podLabels },
          },
        ],
        ports: [{ port: METRICS.podPort, protocol: 'TCP' }],
      },
    ]);
    const pod = statefulSetManifest(describeNode(node), 'x', {
      configMap: 'besu-node-x-config-0123456789',
      digest: '0'.repeat(64),
    }).spec.template;
    expect(pod.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(METRICS.podPort),
      'prometheus.io/path': '/metrics',
    });
    expect(pod.metadata.labels['lacchain.net/stack']).toBe('testnet');
    expect(prometheusOperatorManifests(node)).toBeUndefined();
  });

  it("with the Prometheus Operator: the Service, ServiceMonitor and this node's rules, labelled; no annotations", () => {
    const node = writer({ scraper: SCRAPER, prometheusOperator: true, resourceLabels: { release: 'kps' } });
    expect(scrapeAnnotations(node)).toEqual({});
    const { service, serviceMonitor, prometheusRule } = prometheusOperatorManifests(node)!;
    expect(service.spec).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'metrics', port: METRICS.podPort }] });
    expect(serviceMonitor.metadata.labels).toMatchObject({ release: 'kps' });
    expect(prometheusRule.metadata.labels).toMatchObject({ release: 'kps' });
    expect(serviceMonitor.spec.selector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'besu',
      'app.kubernetes.io/instance': 'writer',
      'lacchain.net/metrics': 'true',
    });
    expect(service.metadata.labels['lacchain.net/metrics']).toBe('true');
    const exprs = prometheusRule.spec.groups[0].rules.map((r) => r.expr).join('\n');
    expect(exprs).toContain('lacchain_stack="testnet", lacchain_node="writer"');
    expect(exprs).toContain('persistentvolumeclaim="besu-node-writer-data"');
    expect(exprs).toContain('pod="besu-node-writer-0"');
    for (const rule of prometheusRule.spec.groups[0].rules) {
      expect(rule.annotations.runbook).toMatch(/npm run node -- (status|check|logs) --stack testnet --node writer/);
    }
  });
});

/**
 * A cluster node's metrics and alerts against a real API server (testing/cluster/) with the Prometheus Operator's own
 * CRDs (v0.85.0's, fetched by tools/kubernetes/crds.sh: their schemas validate what is applied): with
 * `lacchain:monitoring.prometheusOperator`, the node's metrics Service, ServiceMonitor and PrometheusRule are admitted,
 * the Service selects the pod's metrics port, and the ServiceMonitor selects that Service only; without it, the pod
 * carries the `prometheus.io/*` annotations. Either way the pod runs its metrics relay beside Besu and the
 * NetworkPolicy admits the named scraper, by namespace and labels, to the metrics port only.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as yaml from 'js-yaml';
import * as path from 'path';
import * as zlib from 'zlib';
import { METRICS } from '../../core/catalog/metrics';
import { MONITORING_DIR } from '../../core/monitoring/files';
import { kubernetesPrometheusConfig } from '../../core/monitoring/prometheusConfig';
import { freePort } from '../../testing/ports';
import { startPrometheus, TestPrometheus } from '../../testing/prometheus';
import { PROJECT_DIR } from '../../testing/run';
import { applyServerSide, kubernetesManifests, Manifest } from '../../testing/cluster/manifests';
import { monitoringTools, prometheusOperatorCrds } from '../../testing/cluster/cluster';
import { fieldOf, fieldWhen, phaseWhenRunning, writerPod } from '../../testing/cluster/objects';
import { clusterForSuite } from '../../testing/cluster/suite';
import { EXPECTED_ALERTS, KEY_ONE } from '../../testing/fixtures';
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

/** What a test started: Prometheus, the Prometheus Operator. */
const children: ChildProcess[] = [];
const running: TestPrometheus[] = [];
afterAll(() => {
  children.forEach((child) => child.kill('SIGTERM'));
  running.forEach((prometheus) => prometheus.stop());
});

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
      const pod = writerPod(OPERATOR);
      expect(await phaseWhenRunning(cluster(), pod)).toBe('Running');
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
      expect(new Set(alerts)).toEqual(new Set(EXPECTED_ALERTS));
      for (const r of rule.spec.groups[0].rules) expect(r.expr).toMatch(/writer/);
    },
  );

  itWithCluster('without it: the prometheus.io annotations, no ServiceMonitor', async () => {
    const manifests = await apply(ANNOTATED, false);
    expect(manifests.some((m) => m.kind === 'ServiceMonitor' || m.kind === 'PrometheusRule')).toBe(false);
    const pod = writerPod(ANNOTATED);
    expect(await phaseWhenRunning(cluster(), pod)).toBe('Running');
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

  itWithCluster(
    "a Prometheus with monitoring/prometheus-kubernetes.yml finds the annotated pod's metrics port and labels it as the rules read",
    async () => {
      const config = kubernetesPrometheusConfig(path.join(PROJECT_DIR, MONITORING_DIR, 'alerts.yml'));
      // As the file says, with how this Prometheus reaches the API server: the test cluster's kubeconfig.
      config.scrape_configs[0].kubernetes_sd_configs = [
        { role: 'pod', kubeconfig_file: cluster().kubeconfig, namespaces: { names: [ANNOTATED, OPERATOR] } } as never,
      ];
      const prometheus = await startPrometheus(monitoringTools().binary('prometheus'), () => config);
      running.push(prometheus);
      const targets = await prometheus.targets();
      const podIP = await fieldOf(cluster(), writerPod(ANNOTATED), '{.status.podIP}');
      // One target: the annotated pod's metrics port (not its other ports, not the pod without annotations).
      expect(targets.map((t) => [t.labels, t.scrapeUrl])).toEqual([
        [
          {
            job: 'lacchain-besu',
            instance: `${podIP}:${METRICS.podPort}`,
            lacchain_stack: 'testnet',
            lacchain_node: 'writer',
            namespace: ANNOTATED,
            pod: 'besu-node-writer-0',
          },
          `http://${podIP}:${METRICS.podPort}/metrics`,
        ],
      ]);
    },
  );

  itWithCluster(
    'the Prometheus Operator turns them into a scrape job and rules that a real Prometheus runs, labelled as the rules read',
    async () => {
      const { binary } = monitoringTools();
      const kubeconfig = JSON.parse(fs.readFileSync(cluster().kubeconfig, 'utf8'));
      const user = kubeconfig.users[0].user;
      const server = kubeconfig.clusters[0].cluster;
      await cluster().kubectlOk(['create', 'namespace', SCRAPER.namespace]);
      const operator = spawn(binary('prometheus-operator'), [
        `--apiserver=${server.server}`,
        `--ca-file=${server['certificate-authority']}`,
        `--cert-file=${user['client-certificate']}`,
        `--key-file=${user['client-key']}`,
        `--namespaces=${OPERATOR},${SCRAPER.namespace}`,
        `--web.listen-address=127.0.0.1:${await freePort()}`,
      ]);
      let operatorLog = '';
      operator.stderr!.on('data', (chunk) => (operatorLog += chunk));
      children.push(operator);
      // The operator's cluster Prometheus, selecting ServiceMonitors and rules by the stack's resourceLabels.
      const prometheusObject = {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'Prometheus',
        metadata: { name: 'lacchain', namespace: SCRAPER.namespace },
        spec: {
          serviceMonitorSelector: { matchLabels: RELEASE_LABEL },
          serviceMonitorNamespaceSelector: {},
          ruleSelector: { matchLabels: RELEASE_LABEL },
          ruleNamespaceSelector: {},
        },
      };
      await cluster().kubectlOk(['apply', '--server-side', '-f', '-'], JSON.stringify(prometheusObject));
      // What it generates: the configuration (a Secret, gzipped) and the rule files (a ConfigMap).
      const read = async (kind: string, name: string) =>
        cluster()
          .kubectl(['get', kind, name, '-n', SCRAPER.namespace, '-o', 'json'])
          .then((r) => (r.code === 0 ? JSON.parse(r.stdout) : undefined));
      let generated: string | undefined;
      let rules: Record<string, string> | undefined;
      for (let i = 0; i < 90 && !(generated?.includes('besu-node-writer') && rules); i++) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const secret = await read('secret', 'prometheus-lacchain');
        const gz = secret?.data?.['prometheus.yaml.gz'];
        generated = gz ? zlib.gunzipSync(Buffer.from(gz, 'base64')).toString('utf8') : undefined;
        rules = (await read('configmap', 'prometheus-lacchain-rulefiles-0'))?.data;
      }
      expect([
        generated?.includes('serviceMonitor/monitoring-operator/besu-node-writer/0'),
        operatorLog.slice(-2000),
      ]).toEqual([true, expect.anything()]);
      const ruleFiles = Object.values(rules ?? {});
      expect(ruleFiles).toHaveLength(1);

      // A real Prometheus with that configuration and those rules, reaching the API server from here. The operator's
      // config-reloader fills in the pod's shard and name before Prometheus reads the file; so does this.
      const expanded = generated!.replace(/\$\(SHARD\)/g, '0').replace(/\$\(POD_NAME\)/g, 'prometheus-lacchain-0');
      const config = yaml.load(expanded) as {
        scrape_configs: { job_name: string; kubernetes_sd_configs?: Record<string, unknown>[] }[];
        rule_files?: string[];
      };
      config.scrape_configs = config.scrape_configs.filter((job) => job.job_name.includes('besu-node-writer'));
      for (const job of config.scrape_configs) {
        for (const sd of job.kubernetes_sd_configs ?? []) sd.kubeconfig_file = cluster().kubeconfig;
      }
      const prometheus = await startPrometheus(binary('prometheus'), (folder) => {
        fs.writeFileSync(path.join(folder, 'rules.yml'), ruleFiles[0]);
        return { ...config, rule_files: [path.join(folder, 'rules.yml')] };
      });
      running.push(prometheus);
      const targets = await prometheus.targets();
      const ruleNames = await prometheus.ruleNames();
      const podIP = await fieldOf(cluster(), writerPod(OPERATOR), '{.status.podIP}');
      expect(targets.map((t) => [t.labels, t.scrapeUrl])).toEqual([
        [
          expect.objectContaining({
            job: 'lacchain-besu',
            lacchain_stack: 'testnet',
            lacchain_node: 'writer',
            namespace: OPERATOR,
            pod: 'besu-node-writer-0',
            instance: `${podIP}:${METRICS.podPort}`,
          }),
          `http://${podIP}:${METRICS.podPort}/metrics`,
        ],
      ]);
      expect(new Set(ruleNames)).toEqual(new Set(EXPECTED_ALERTS));
    },
  );

  // kwok's workers enforce no NetworkPolicy: what the API server admitted is what is checked, not a connection.
  itWithCluster(
    'the NetworkPolicy declares the metrics port open to the named scraper alone, in every rule',
    async () => {
      const policy = await json(['get', 'networkpolicy', 'besu-node-writer', '-n', ANNOTATED]);
      // An ingress policy: what no rule admits is refused.
      expect(policy.spec.policyTypes).toEqual(['Ingress']);
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
    },
  );
});

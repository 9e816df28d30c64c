/**
 * Every alert of monitoring/alerts.yml names its node's stack and node on both paths, so its runbook line reads
 * `npm run node -- status --stack testnet --node writer`, never `--stack  --node `. A cluster node's disk and
 * companions are seen through the kubelet's and kube-state-metrics' series, which name only a namespace and a pod
 * or claim: the rules take the stack and node from the pod's Besu target. The alerts' promtool tests
 * (monitoring/alerts.test.yml, run by tests/tools/alerts.test.ts) feed them such series as those exporters write them.
 */
import { ALERT_RULES, SCRAPE } from '../../core/monitoring/alerts';
import { alertTestsDocument } from '../../core/monitoring/alertTests';

const document = alertTestsDocument('alerts.yml');
const NODE_LABELS = [SCRAPE.stackLabel, SCRAPE.nodeLabel];
/** The series exporters other than the node's own targets write: they know nothing of LACChain's labels. */
const FOREIGN_SERIES = /^(kubelet_volume_stats_\w+|kube_pod_container_status_ready)\{/;

describe("the alerts' tests", () => {
  const inputs = document.tests.flatMap((t) => t.input_series.map((s) => s.series));
  const alerts = document.tests.flatMap((t) =>
    t.alert_rule_test.flatMap((r) => r.exp_alerts.map((a) => ({ test: t.name, ...a }))),
  );

  it("give the kubelet's and kube-state-metrics' series only their own labels", () => {
    const foreign = inputs.filter((s) => FOREIGN_SERIES.test(s));
    expect(foreign.length).toBeGreaterThan(0);
    for (const series of foreign) {
      expect([series, NODE_LABELS.some((label) => series.includes(`${label}=`))]).toEqual([series, false]);
    }
  });

  it("expect every alert, a cluster node's disk and companions too, to name its stack and node", () => {
    for (const alert of alerts) {
      const labels: Record<string, string> = alert.exp_labels;
      expect([alert.test, labels[SCRAPE.stackLabel], labels[SCRAPE.nodeLabel]]).toEqual([
        alert.test,
        'testnet',
        expect.any(String),
      ]);
      expect([alert.test, alert.exp_annotations.runbook]).toEqual([
        alert.test,
        expect.stringMatching(/--stack testnet --node \w+/),
      ]);
    }
  });

  it('test each alert on a machine and on a cluster node where it reads different series', () => {
    const tested = (alert: string) => document.tests.filter((t) => t.alert_rule_test[0].alertname === alert);
    for (const alert of ['BesuDiskLow', 'CompanionDown']) {
      const firing = tested(alert).filter((t) => t.alert_rule_test[0].exp_alerts.length > 0);
      expect([alert, firing.some((t) => /machine/.test(t.name)), firing.some((t) => /cluster/.test(t.name))]).toEqual([
        alert,
        true,
        true,
      ]);
    }
    expect(new Set(ALERT_RULES.map((r) => r.alert))).toEqual(
      new Set(document.tests.map((t) => t.alert_rule_test[0].alertname)),
    );
  });
});

describe("the rules' cluster parts", () => {
  it("take the stack and node from the pod's Besu target, by namespace and pod", () => {
    for (const alert of ['BesuDiskLow', 'CompanionDown']) {
      for (const rule of ALERT_RULES.filter((r) => r.alert === alert)) {
        expect([alert, rule.expr]).toEqual([
          alert,
          expect.stringContaining(
            `* on (namespace, pod) group_left (${SCRAPE.stackLabel}, ${SCRAPE.nodeLabel}) group by (namespace, pod, ${SCRAPE.stackLabel}, ${SCRAPE.nodeLabel}) (up{job="${SCRAPE.besuJob}", pod!=""})`,
          ),
        ]);
      }
    }
  });
});

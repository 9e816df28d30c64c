/**
 * The monitoring files written from the code (`npm run docs` writes them, `npm run docs -- --check` and the tests
 * check them): the alert rules, their promtool tests and the Grafana dashboard, under monitoring/.
 */
import * as yaml from 'js-yaml';
import { alertRulesDocument } from './alerts';
import { alertTestsDocument } from './alertTests';
import { dashboardDocument } from './dashboard';
import { kubernetesPrometheusConfig, prometheusConfig } from './prometheusConfig';
import { METRICS } from '../catalog/metrics';

/** Where the monitoring files are, from the project folder. */
export const MONITORING_DIR = 'monitoring';
const RULES_FILE = 'alerts.yml';

const HEADER =
  '# Written by `npm run docs` from core/catalog/health.ts (the thresholds `npm run node -- check` judges by) and\n' +
  '# core/monitoring/: do not edit by hand.\n';

/** Each monitoring file: its path under the project and its text. */
export function monitoringFiles(): { file: string; text: string }[] {
  const dump = (document: unknown) => yaml.dump(document, { lineWidth: -1, noRefs: true });
  return [
    { file: `${MONITORING_DIR}/${RULES_FILE}`, text: HEADER + dump(alertRulesDocument()) },
    { file: `${MONITORING_DIR}/alerts.test.yml`, text: HEADER + dump(alertTestsDocument(RULES_FILE)) },
    { file: `${MONITORING_DIR}/dashboard.json`, text: `${JSON.stringify(dashboardDocument(), null, 2)}\n` },
    {
      file: `${MONITORING_DIR}/prometheus.yml`,
      text:
        HEADER +
        '# An EXAMPLE, not your stack\'s: one made-up machine (203.0.113.10, node writer of stack testnet), to show the\n' +
        '# form the alert rules expect. For your own stack\'s machines, with their addresses and certificates, run\n' +
        '# `npm run monitoring -- --stack <stack>` (monitoring/README.md).\n' +
        dump(
          prometheusConfig(
            [
              {
                target: `203.0.113.10:${METRICS.endpointPort}`,
                tokenFile: 'token.txt',
                caFile: 'node.crt',
                stack: 'testnet',
                node: 'writer',
              },
            ],
            RULES_FILE,
          ),
        ),
    },
    {
      file: `${MONITORING_DIR}/prometheus-kubernetes.yml`,
      text:
        HEADER +
        '# An example for any stack (`npm run monitoring -- --stack <stack>` writes one for your stack\'s nodes alone): a\n' +
        '# Prometheus in the cluster (without the Prometheus Operator) scraping the nodes whose stack sets\n' +
        '# lacchain:monitoring.scraper (its pods admitted by their NetworkPolicy) by their prometheus.io annotations. The\n' +
        "# disk and companion alerts read the kubelet's volume statistics and kube-state-metrics: scrape those too.\n" +
        dump(kubernetesPrometheusConfig(RULES_FILE)),
    },
  ];
}

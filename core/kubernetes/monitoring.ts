/**
 * A cluster node's metrics and alerts. Besu serves its metrics on the pod's loopback; the pod's metrics relay
 * (scripts/metrics-relay.java, run in Besu's own image) pushes them to the network's gateway as Besu's own push would,
 * and serves them on the pod's metrics port. Only the Prometheus the operator names (`lacchain:monitoring.scraper`)
 * is admitted there by the pod's NetworkPolicy. With the Prometheus Operator, a ServiceMonitor points it at the pod
 * and a PrometheusRule holds the node's alerts (monitoring/alerts.yml's rules, for this node); otherwise the pod
 * carries the `prometheus.io/*` annotations that monitoring/prometheus-kubernetes.yml's job scrapes by.
 */
import { kubernetesNames, POD_FILES, POD_PATHS, SCRAPE_ANNOTATIONS } from '../catalog/kubernetes';
import { METRICS } from '../catalog/metrics';
import { stackOfNetwork } from '../catalog/networks';
import { alertRules, clusterNodeScope, SCRAPE } from '../monitoring/alerts';
import { metricsPushUrl } from '../node/metrics';
import type { KubernetesNodeSettings } from '../settings/model';
import { metadata, RESTRICTED_CONTAINER, selectorLabels } from './podBasics';

/** The label of the metrics Service, which its ServiceMonitor selects it by (the node's other Service has not). */
const METRICS_SERVICE_LABEL = 'lacchain.net/metrics';
/** The Prometheus Operator's API. */
const MONITORING_API = 'monitoring.coreos.com/v1';

/** Whether an in-cluster Prometheus scrapes the node (`lacchain:monitoring.scraper` is set). */
function isScraped(node: KubernetesNodeSettings): boolean {
  return node.monitoring.scraper !== undefined;
}

/** The relay's scratch volume (the root filesystem is read-only). */
export const METRICS_RELAY_VOLUME = { name: 'metrics-relay-tmp', emptyDir: {} };

/** The relay's container: Besu's image, Java's source launcher, the relay's file from the ConfigMap. */
export function metricsRelayContainer(node: KubernetesNodeSettings, besuImage: string) {
  return {
    name: kubernetesNames(node.name).metricsRelayContainer,
    image: besuImage,
    command: ['java', ...METRICS.podRelayJavaOptions, `${POD_PATHS.configDir}/${POD_FILES.metricsRelay}`],
    env: [
      { name: 'BESU_METRICS_URL', value: `http://${METRICS.besuHost}:${METRICS.besuPort}${METRICS.besuPath}` },
      { name: 'PUSH_URL', value: metricsPushUrl(node) },
      { name: 'INTERVAL', value: String(METRICS.pushIntervalSeconds) },
      { name: 'LISTEN_PORT', value: String(METRICS.podPort) },
      { name: 'LAST_PUSH_SERIES', value: METRICS.lastPushSeries },
    ],
    ports: [{ name: METRICS.podPortName, containerPort: METRICS.podPort, protocol: 'TCP' }],
    // The JVM compiles the relay at start (about 100 MiB resident), then idles.
    resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '192Mi' } },
    livenessProbe: {
      tcpSocket: { port: METRICS.podPortName },
      initialDelaySeconds: 30,
      periodSeconds: 20,
      failureThreshold: 3,
    },
    volumeMounts: [
      { name: 'config', mountPath: POD_PATHS.configDir, readOnly: true },
      { name: METRICS_RELAY_VOLUME.name, mountPath: '/tmp' },
    ],
    securityContext: RESTRICTED_CONTAINER,
  };
}

/** The pod template's annotations for a conventional scrape job: only when scraped without the Prometheus Operator. */
export function scrapeAnnotations(node: KubernetesNodeSettings): Record<string, string> {
  if (!isScraped(node) || node.monitoring.prometheusOperator) return {};
  return {
    [SCRAPE_ANNOTATIONS.scrape]: 'true',
    [SCRAPE_ANNOTATIONS.port]: String(METRICS.podPort),
    [SCRAPE_ANNOTATIONS.path]: METRICS.besuPath,
  };
}

/** The NetworkPolicy's ingress rule admitting the named scraper's pods to the metrics port; none without one. */
export function scraperIngress(node: KubernetesNodeSettings) {
  const scraper = node.monitoring.scraper;
  if (!scraper) return [];
  return [
    {
      // One peer with both selectors: pods with these labels in that namespace (not either).
      from: [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': scraper.namespace } },
          podSelector: { matchLabels: scraper.podLabels },
        },
      ],
      ports: [{ port: METRICS.podPort, protocol: 'TCP' }],
    },
  ];
}

/** The objects of the Prometheus Operator's kind a scraped node has: its metrics Service, ServiceMonitor, rules. */
export function prometheusOperatorManifests(node: KubernetesNodeSettings) {
  if (!isScraped(node) || !node.monitoring.prometheusOperator) return undefined;
  const names = kubernetesNames(node.name);
  const base = metadata(node, names.monitoring);
  const labelled = { ...base, labels: { ...base.labels, ...node.monitoring.resourceLabels } };
  const stack = stackOfNetwork(node.network);
  const service = {
    apiVersion: 'v1' as const,
    kind: 'Service' as const,
    metadata: {
      ...metadata(node, names.metricsService),
      labels: { ...base.labels, [METRICS_SERVICE_LABEL]: 'true' },
    },
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(node),
      ports: [{ name: METRICS.podPortName, port: METRICS.podPort, targetPort: METRICS.podPortName, protocol: 'TCP' }],
    },
  };
  const replace = (targetLabel: string, replacement: string) => ({ action: 'replace', targetLabel, replacement });
  const serviceMonitor = {
    apiVersion: MONITORING_API,
    kind: 'ServiceMonitor',
    metadata: labelled,
    spec: {
      selector: { matchLabels: { ...selectorLabels(node), [METRICS_SERVICE_LABEL]: 'true' } },
      endpoints: [
        {
          port: METRICS.podPortName,
          path: METRICS.besuPath,
          interval: `${SCRAPE.intervalSeconds}s`,
          // The labels monitoring/alerts.yml and the dashboard read, as on a machine's scrape.
          relabelings: [
            replace('job', SCRAPE.besuJob),
            replace(SCRAPE.stackLabel, stack),
            replace(SCRAPE.nodeLabel, node.name),
          ],
        },
      ],
    },
  };
  const prometheusRule = {
    apiVersion: MONITORING_API,
    kind: 'PrometheusRule',
    metadata: labelled,
    spec: {
      groups: [
        {
          name: `lacchain-besu-node-${node.name}`,
          rules: alertRules(clusterNodeScope({ stack, name: node.name, namespace: node.namespace })),
        },
      ],
    },
  };
  return { service, serviceMonitor, prometheusRule };
}

/**
 * How the operator's Prometheus scrapes a machine's node (docs/monitoring.md, "Monitoring and alerts";
 * monitoring/prometheus.yml is written from it): Besu's series under the job the alert rules read, the machine's
 * (filesystem, services) under the node_exporter job, both from the node's metrics endpoint over TLS with the bearer
 * token, each target labelled with its stack and node, and the alert rules loaded.
 */
import { LABEL_KEYS, LABELS, SCRAPE_ANNOTATIONS, STACK_LABEL } from '../catalog/kubernetes';
import { METRICS } from '../catalog/metrics';
import { SCRAPE } from './alerts';

/** What a scrape of one machine needs. */
export interface ScrapeTarget {
  /** `<node IP>:9443`. */
  target: string;
  /** A file holding the bearer token (`lacchain:metricsToken`). */
  tokenFile: string;
  /** The node's certificate (its proxy's; `pulumi stack output` prints its fingerprint to check it against). */
  caFile: string;
  stack: string;
  node: string;
}

/**
 * One machine's two scrape jobs, Besu's series and the machine's. Each machine has its own self-signed certificate,
 * and a job has one TLS configuration, so each machine has its own jobs, named apart (`lacchain-besu/<stack>/<node>`)
 * and relabelled to the job the alert rules read (`lacchain-besu`, `lacchain-node-exporter`).
 */
function machineJobs(t: ScrapeTarget) {
  const job = (name: string, metricsPath: string) => ({
    job_name: `${name}/${t.stack}/${t.node}`,
    scheme: 'https',
    metrics_path: metricsPath,
    authorization: { type: 'Bearer', credentials_file: t.tokenFile },
    tls_config: { ca_file: t.caFile },
    static_configs: [{ targets: [t.target], labels: { [SCRAPE.stackLabel]: t.stack, [SCRAPE.nodeLabel]: t.node } }],
    relabel_configs: [{ target_label: 'job', replacement: name }],
  });
  return [job(SCRAPE.besuJob, METRICS.besuPath), job(SCRAPE.nodeExporterJob, METRICS.machinePath)];
}

/** A Prometheus configuration scraping `targets`, evaluating `rulesFile` every `intervalSeconds`. */
export function prometheusConfig(
  targets: readonly ScrapeTarget[],
  rulesFile: string,
  intervalSeconds: number = SCRAPE.intervalSeconds,
) {
  return {
    global: { scrape_interval: `${intervalSeconds}s`, evaluation_interval: `${intervalSeconds}s` },
    rule_files: [rulesFile],
    scrape_configs: targets.flatMap(machineJobs),
  };
}

/** A Kubernetes pod's `prometheus.io/<name>` annotation or label `<name>`, as Prometheus' service discovery names it. */
const meta = (kind: 'annotation' | 'label', name: string) =>
  `__meta_kubernetes_pod_${kind}_${name.replace(/[^A-Za-z0-9]/g, '_')}`;

/**
 * A Prometheus running in the cluster, without the Prometheus Operator: one job finding the nodes' pods by their
 * `prometheus.io/scrape` annotation and LACChain label, scraping the metrics relay's port at the annotated path, and
 * labelling each target with its stack and node (the pod's labels) as the alert rules read them. The disk and
 * companion rules read the kubelet's volume statistics and kube-state-metrics, which such a Prometheus scrapes too.
 */
export function kubernetesPrometheusConfig(
  rulesFile: string,
  intervalSeconds: number = SCRAPE.intervalSeconds,
  /** One stack's nodes only: its pods (by their stack label), in its namespaces. */
  only?: { stack: string; namespaces: readonly string[] },
) {
  return {
    global: { scrape_interval: `${intervalSeconds}s`, evaluation_interval: `${intervalSeconds}s` },
    rule_files: [rulesFile],
    scrape_configs: [
      {
        job_name: SCRAPE.besuJob,
        kubernetes_sd_configs: [{ role: 'pod', ...(only ? { namespaces: { names: [...only.namespaces] } } : {}) }],
        relabel_configs: [
          {
            source_labels: [meta('annotation', SCRAPE_ANNOTATIONS.scrape), meta('label', LABEL_KEYS.partOf)],
            regex: `true;${LABELS.partOf}`,
            action: 'keep',
          },
          ...(only ? [{ source_labels: [meta('label', STACK_LABEL)], regex: only.stack, action: 'keep' }] : []),
          { source_labels: ['__meta_kubernetes_pod_container_port_name'], regex: METRICS.podPortName, action: 'keep' },
          { source_labels: [meta('annotation', SCRAPE_ANNOTATIONS.path)], target_label: '__metrics_path__' },
          { source_labels: [meta('label', STACK_LABEL)], target_label: SCRAPE.stackLabel },
          { source_labels: [meta('label', LABEL_KEYS.instance)], target_label: SCRAPE.nodeLabel },
          { source_labels: ['__meta_kubernetes_namespace'], target_label: 'namespace' },
          { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
        ],
      },
    ],
  };
}

/**
 * How the operator's Prometheus scrapes a machine's node (docs/operations.md, "Monitoring and alerts";
 * monitoring/prometheus.yml is written from it): Besu's series under the job the alert rules read, the machine's
 * (filesystem, services) under the node_exporter job, both from the node's metrics endpoint over TLS with the bearer
 * token, each target labelled with its stack and node, and the alert rules loaded.
 */
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

/** A Prometheus configuration scraping `targets`, evaluating `rulesFile` every `intervalSeconds`. */
export function prometheusConfig(targets: readonly ScrapeTarget[], rulesFile: string, intervalSeconds: number = SCRAPE.intervalSeconds) {
  const job = (name: string, metricsPath: string) => ({
    job_name: name,
    scheme: 'https',
    metrics_path: metricsPath,
    authorization: { type: 'Bearer', credentials_file: targets[0]?.tokenFile },
    static_configs: targets.map((t) => ({
      targets: [t.target],
      labels: { [SCRAPE.stackLabel]: t.stack, [SCRAPE.nodeLabel]: t.node },
    })),
    tls_config: { ca_file: targets[0]?.caFile },
  });
  return {
    global: { scrape_interval: `${intervalSeconds}s`, evaluation_interval: `${intervalSeconds}s` },
    rule_files: [rulesFile],
    scrape_configs: [job(SCRAPE.besuJob, METRICS.besuPath), job(SCRAPE.nodeExporterJob, METRICS.machinePath)],
  };
}

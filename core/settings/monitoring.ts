/**
 * How the operator's Prometheus watches the stack's cluster nodes, from `lacchain:monitoring`: the scraper the pods'
 * NetworkPolicy admits, and whether the Prometheus Operator's objects are made. A setting that would do nothing is
 * refused (the operator's objects without a scraper to admit, their labels without the objects), and so is a scraper
 * without labels, which would admit every pod of its namespace.
 */
import { configKey } from '../catalog/defaults';
import { METRICS } from '../catalog/metrics';
import type { ClusterMonitoringSettings } from './model';
import { describeGiven, Problem } from './problems';
import { MonitoringInput, monitoringSchema } from './schema';

/** The schema's defaults, for a stack without `lacchain:monitoring`: no scraper, no Prometheus Operator objects. */
export const NO_CLUSTER_MONITORING: ClusterMonitoringSettings = monitoringSchema.parse({});

/** The cluster nodes' monitoring settings, checked. */
export function clusterMonitoring(
  input: MonitoringInput | undefined,
  file: string,
  problems: Problem[],
): ClusterMonitoringSettings {
  if (input === undefined) return NO_CLUSTER_MONITORING;
  const key = configKey('monitoring');
  if (input.prometheusOperator && input.scraper === undefined) {
    problems.push({
      file,
      key: `${key}.prometheusOperator`,
      given: describeGiven(true),
      allowed: `true only with ${key}.scraper (the namespace and pod labels of the Prometheus the pods admit), or false`,
    });
  }
  if (input.scraper && Object.keys(input.scraper.podLabels).length === 0) {
    // An empty pod selector selects every pod: with it, the NetworkPolicy admits the whole namespace.
    problems.push({
      file,
      key: `${key}.scraper.podLabels`,
      given: describeGiven(input.scraper.podLabels),
      allowed: `at least one label your Prometheus's pods carry (e.g. app.kubernetes.io/name: prometheus): with none, the pods' NetworkPolicy would admit every pod of namespace ${input.scraper.namespace} to the metrics port (${METRICS.podPort})`,
    });
  }
  if (!input.prometheusOperator && Object.keys(input.resourceLabels).length > 0) {
    problems.push({
      file,
      key: `${key}.resourceLabels`,
      given: describeGiven(input.resourceLabels),
      allowed: `labels only with ${key}.prometheusOperator: true (they label its ServiceMonitor and PrometheusRule)`,
    });
  }
  return {
    ...(input.scraper ? { scraper: input.scraper } : {}),
    prometheusOperator: input.prometheusOperator,
    resourceLabels: input.resourceLabels,
  };
}

/**
 * Where a node's metrics are pushed, on either path: the network's gateway, the job being the node's name on the
 * network (as Besu's own push). The relay that pushes is the machine's (core/remote/metricsRelay.ts) or the pod's
 * (core/kubernetes/metricsRelay.ts).
 */
import { METRICS_PUSH_PORT } from '../catalog/networks';
import type { NodeSettings } from '../settings/model';

/** The gateway's URL for the node: `http://<gateway>:9091/metrics/job/<node name>`. */
export function metricsPushUrl(node: Pick<NodeSettings, 'network' | 'nodeName'>): string {
  return `http://${node.network.metricsPushHost}:${METRICS_PUSH_PORT}/metrics/job/${encodeURIComponent(node.nodeName)}`;
}

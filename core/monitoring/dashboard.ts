/**
 * The Grafana dashboard of the nodes (monitoring/dashboard.json, importable as is: Grafana asks for the Prometheus
 * data source on import): chain head and best known block, peers, sync distance, block time, disk, JVM memory and GC,
 * the companions, the last push to the network's gateway. Metric names are Besu's (both before and after the JVM metrics' rename in 24.12.0). Pure.
 */
import { COMPANIONS } from '../catalog/companions';
import { BLOCK_PERIOD_SECONDS, DISK_FREE, MAX_PUSH_AGE_SECONDS } from '../catalog/health';
import { METRICS } from '../catalog/metrics';
import { SCRAPE } from './alerts';

const DATASOURCE = { type: 'prometheus', uid: '${DS_PROMETHEUS}' };
const BESU = `job="${SCRAPE.besuJob}", ${SCRAPE.stackLabel}=~"$stack", ${SCRAPE.nodeLabel}=~"$node"`;
const MACHINE = `job="${SCRAPE.nodeExporterJob}", ${SCRAPE.stackLabel}=~"$stack", ${SCRAPE.nodeLabel}=~"$node"`;
const VOLUME = `persistentvolumeclaim=~"besu-node-.+-data", ${SCRAPE.nodeLabel}=~"$node"`;
const COMPANION_NAMES = COMPANIONS.map((c) => c.name).join('|');
const LEGEND = `{{${SCRAPE.nodeLabel}}}`;

interface Target {
  expr: string;
  legend: string;
}

/** A time series panel at grid position (x, y), 12 columns wide and 8 high. */
function panel(id: number, title: string, unit: string, targets: Target[], description: string) {
  const x = ((id - 1) % 2) * 12;
  const y = Math.floor((id - 1) / 2) * 8;
  return {
    id,
    type: 'timeseries',
    title,
    description,
    datasource: DATASOURCE,
    gridPos: { h: 8, w: 12, x, y },
    fieldConfig: { defaults: { unit }, overrides: [] },
    options: { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi' } },
    targets: targets.map((t, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DATASOURCE,
      expr: t.expr,
      legendFormat: t.legend,
    })),
  };
}

/** A template variable listing a label's values among the nodes' Besu targets. */
function variable(name: string, label: string, query: string) {
  return {
    name,
    label,
    type: 'query',
    datasource: DATASOURCE,
    query: { query, refId: name },
    definition: query,
    includeAll: true,
    multi: true,
    current: { text: 'All', value: '$__all' },
    refresh: 2,
  };
}

export function dashboardDocument() {
  const panels = [
    panel(
      1,
      'Chain head and best known block',
      'none',
      [
        { expr: `ethereum_blockchain_height{${BESU}}`, legend: `${LEGEND} head` },
        { expr: `ethereum_best_known_block_number{${BESU}}`, legend: `${LEGEND} best known` },
      ],
      'The block the node is at, and the highest its peers announce.',
    ),
    panel(
      2,
      'Peers',
      'none',
      [{ expr: `ethereum_peer_count{${BESU}}`, legend: LEGEND }],
      'Zero peers: the node reaches no other node (npm run node -- check says why).',
    ),
    panel(
      3,
      'Sync distance',
      'none',
      [{ expr: `ethereum_best_known_block_number{${BESU}} - ethereum_blockchain_height{${BESU}}`, legend: LEGEND }],
      'Blocks behind the best known block.',
    ),
    panel(
      4,
      'Block time',
      's',
      [{ expr: `1 / rate(ethereum_blockchain_height{${BESU}}[5m])`, legend: LEGEND }],
      `Seconds between blocks over 5 minutes: ${BLOCK_PERIOD_SECONDS} s on the LACChain networks.`,
    ),
    panel(
      5,
      "Free space of the data's filesystem",
      'percentunit',
      [
        {
          expr: `node_filesystem_avail_bytes{${MACHINE}} / node_filesystem_size_bytes{${MACHINE}}`,
          legend: `${LEGEND} {{mountpoint}}`,
        },
        {
          expr: `kubelet_volume_stats_available_bytes{${VOLUME}} / kubelet_volume_stats_capacity_bytes{${VOLUME}}`,
          legend: `${LEGEND} {{persistentvolumeclaim}}`,
        },
      ],
      `Warning below ${DISK_FREE.warning * 100} %, critical below ${DISK_FREE.critical * 100} % (BesuDiskLow).`,
    ),
    panel(
      6,
      'Data size',
      'bytes',
      [
        {
          expr: `node_filesystem_size_bytes{${MACHINE}} - node_filesystem_avail_bytes{${MACHINE}}`,
          legend: `${LEGEND} {{mountpoint}}`,
        },
        { expr: `kubelet_volume_stats_used_bytes{${VOLUME}}`, legend: `${LEGEND} {{persistentvolumeclaim}}` },
      ],
      "Space used on the data's filesystem or volume.",
    ),
    panel(
      7,
      'JVM heap used',
      'bytes',
      [
        {
          expr: `jvm_memory_bytes_used{${BESU}, area="heap"} or jvm_memory_used_bytes{${BESU}, area="heap"}`,
          legend: LEGEND,
        },
      ],
      'Besu before 24.12.0 names it jvm_memory_bytes_used, from 24.12.0 jvm_memory_used_bytes.',
    ),
    panel(
      8,
      'JVM garbage collection',
      's',
      [{ expr: `rate(jvm_gc_collection_seconds_sum{${BESU}}[5m])`, legend: `${LEGEND} {{gc}}` }],
      'Seconds spent in garbage collection per second.',
    ),
    panel(
      9,
      'Companion services',
      'none',
      [
        {
          expr: `node_systemd_unit_state{${MACHINE}, name=~".+-(${COMPANION_NAMES})\\\\.service", state="active"}`,
          legend: `${LEGEND} {{name}}`,
        },
        {
          expr: `kube_pod_container_status_ready{container=~".+-(${COMPANION_NAMES})", ${SCRAPE.nodeLabel}=~"$node"}`,
          legend: `${LEGEND} {{container}}`,
        },
      ],
      '1 up, 0 down: the relay signer, the rotation client, the monitoring client (CompanionDown).',
    ),
    panel(
      10,
      'Besu up',
      'none',
      [{ expr: `up{${BESU}}`, legend: LEGEND }],
      "1 when the node's metrics answer (BesuDown).",
    ),
    panel(
      11,
      "Last push to the network's gateway",
      's',
      [
        {
          expr: `time() - ${METRICS.lastPushSeries}{${SCRAPE.stackLabel}=~"$stack", ${SCRAPE.nodeLabel}=~"$node"}`,
          legend: LEGEND,
        },
      ],
      `Seconds since the network's gateway took the node's metrics; the relay pushes every ${METRICS.pushIntervalSeconds} s (MetricsPushFailing past ${MAX_PUSH_AGE_SECONDS} s).`,
    ),
  ];
  return {
    __inputs: [
      {
        name: 'DS_PROMETHEUS',
        label: 'Prometheus',
        description: 'The Prometheus that scrapes the nodes',
        type: 'datasource',
        pluginId: 'prometheus',
        pluginName: 'Prometheus',
      },
    ],
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: '9.0.0' },
      { type: 'datasource', id: 'prometheus', name: 'Prometheus', version: '1.0.0' },
      { type: 'panel', id: 'timeseries', name: 'Time series', version: '' },
    ],
    title: 'LACChain Besu nodes',
    uid: 'lacchain-besu-nodes',
    tags: ['lacchain', 'besu'],
    timezone: 'utc',
    schemaVersion: 38,
    version: 1,
    editable: true,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    templating: {
      list: [
        variable('stack', 'Stack', `label_values(up{job="${SCRAPE.besuJob}"}, ${SCRAPE.stackLabel})`),
        variable(
          'node',
          'Node',
          `label_values(up{job="${SCRAPE.besuJob}", ${SCRAPE.stackLabel}=~"$stack"}, ${SCRAPE.nodeLabel})`,
        ),
      ],
    },
    annotations: { list: [] },
    panels,
  };
}

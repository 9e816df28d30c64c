/**
 * The unit tests of the alert rules for `promtool test rules` (monitoring/alerts.test.yml): for every rule, series
 * that make it fire (just past its threshold) and series that keep it quiet (just inside), made from the same
 * thresholds as the rules (core/catalog/health.ts). Pure: data in, the test document out.
 */
import { DISK_FREE, MAX_BLOCKS_BEHIND, MAX_PUSH_AGE_SECONDS, RESTART_LOOP } from '../catalog/health';
import { METRICS } from '../catalog/metrics';
import { ALERT_RULES, AlertRule, SCRAPE } from './alerts';

/** The labels of the test's node, as the operator's scrape config gives them. */
const NODE = { [SCRAPE.stackLabel]: 'testnet', [SCRAPE.nodeLabel]: 'writer' };
const BESU_TARGET = { job: SCRAPE.besuJob, instance: 'writer:9545', ...NODE };
const MACHINE_TARGET = { job: SCRAPE.nodeExporterJob, instance: 'writer:9100', ...NODE };

type Labels = Record<string, string>;

/** A series selector: `name{label="value", …}`. */
function series(name: string, labels: Labels): string {
  return `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(', ')}}`;
}

/**
 * The annotations a rule renders for an alert with `labels` (Go template `{{ $labels.x }}` filled in). An alert
 * without a label its runbook names would read `--stack  --node `: expecting one is a mistake in these tests.
 */
function rendered(rule: AlertRule, labels: Labels): Record<string, string> {
  const fill = (text: string) =>
    text.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_m, name: string) => {
      if (labels[name] === undefined) throw new Error(`${rule.alert}: an alert without the label ${name} its runbook names`);
      return labels[name];
    });
  return Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, fill(v)]));
}

function rulesNamed(alert: string): AlertRule[] {
  const rules = ALERT_RULES.filter((r) => r.alert === alert);
  if (rules.length === 0) throw new Error(`no alert rule ${alert}`);
  return rules;
}

/** The alert each rule of `alert` whose severity is in `severities` raises for a series with `labels`. */
function expected(alert: string, labels: Labels, severities?: string[]) {
  return rulesNamed(alert)
    .filter((rule) => !severities || severities.includes(rule.labels.severity))
    .map((rule) => {
      const all = { ...labels, ...rule.labels };
      return { exp_labels: all, exp_annotations: rendered(rule, all) };
    });
}

/** One promtool test: some series, then, at a time, the alerts expected (none: it stays quiet). */
function test(
  what: string,
  inputs: [string, string][],
  alert: string,
  evalTime: string,
  alerts: ReturnType<typeof expected>,
) {
  return {
    name: what,
    interval: '1m',
    input_series: inputs.map(([s, values]) => ({ series: s, values })),
    alert_rule_test: [{ eval_time: evalTime, alertname: alert, exp_alerts: alerts }],
  };
}

/** The share of free space of a filesystem of 1000 units with `free` units free. */
const disk = (free: number): [string, string][] => [
  [series('node_filesystem_avail_bytes', { ...MACHINE_TARGET, mountpoint: '/' }), `${free}x10`],
  [series('node_filesystem_size_bytes', { ...MACHINE_TARGET, mountpoint: '/' }), '1000x10'],
];
/**
 * A cluster node's pod as its Besu target is labelled (by the scrape job by annotations, or the Prometheus Operator),
 * and two machines' Besu targets beside it: the kubelet's and kube-state-metrics' series name only the namespace and
 * the pod (or claim), and the rules take the stack and node from there.
 */
const POD = { namespace: 'lacchain', pod: 'besu-node-writer-0' };
const podTargets: [string, string][] = [
  [series('up', { job: SCRAPE.besuJob, instance: '10.0.0.7:9546', ...POD, ...NODE }), '1x10'],
  [series('up', { ...BESU_TARGET, instance: 'validator:9443', [SCRAPE.nodeLabel]: 'validator' }), '1x10'],
  [series('up', { ...BESU_TARGET, instance: 'bootnode:9443', [SCRAPE.nodeLabel]: 'bootnode' }), '1x10'],
];
const CLAIM = { namespace: 'lacchain', persistentvolumeclaim: 'besu-node-writer-data' };
const volume = (free: number): [string, string][] => [
  [series('kubelet_volume_stats_available_bytes', CLAIM), `${free}x10`],
  [series('kubelet_volume_stats_capacity_bytes', CLAIM), '1000x10'],
  ...podTargets,
];
const warningFree = Math.round(DISK_FREE.warning * 1000) - 10;
const criticalFree = Math.round(DISK_FREE.critical * 1000) - 10;
const fineFree = Math.round(DISK_FREE.warning * 1000) + 10;
const companionService = { ...MACHINE_TARGET, name: 'besu-relay-signer.service', state: 'active' };
const companionContainer = { ...POD, container: 'writer-ethstats' };
/** A container of a pod that is no LACChain node's, named as a companion's. */
const foreignContainer = { namespace: 'other', pod: 'tools-0', container: 'tools-ethstats' };
/** Starts every minute, one more than a restart loop allows within its window. */
const restarts = Array.from({ length: RESTART_LOOP.restarts + 2 }, (_, i) => 1000 + 60 * i).join(' ');

/** The relay's last push at 1 min, the test evaluated `seconds` after it (at 1 min + seconds, on a 1 min grid). */
const lastPushAt60 = (labels: Labels): [string, string][] => [[series(METRICS.lastPushSeries, labels), '60x10']];
/** Evaluation times just past and just inside the push's age, rounded to the test's minutes. */
const pushStale = `${60 + Math.ceil((MAX_PUSH_AGE_SECONDS + 1) / 60) * 60}s`;
const pushFresh = `${60 + Math.floor(MAX_PUSH_AGE_SECONDS / 60) * 60}s`;

/** monitoring/alerts.test.yml. */
export function alertTestsDocument(ruleFile: string) {
  return {
    rule_files: [ruleFile],
    evaluation_interval: '1m',
    tests: [
      test('Besu down', [[series('up', BESU_TARGET), '0x10']], 'BesuDown', '3m', expected('BesuDown', BESU_TARGET)),
      test('Besu up', [[series('up', BESU_TARGET), '1x10']], 'BesuDown', '3m', []),
      test(
        'no peers',
        [[series('ethereum_peer_count', BESU_TARGET), '0x10']],
        'BesuNoPeers',
        '4m',
        expected('BesuNoPeers', BESU_TARGET),
      ),
      test('peers', [[series('ethereum_peer_count', BESU_TARGET), '3x10']], 'BesuNoPeers', '4m', []),
      test(
        'head stalled',
        [[series('ethereum_blockchain_height', BESU_TARGET), '100x10']],
        'BesuHeadStalled',
        '5m',
        expected('BesuHeadStalled', BESU_TARGET),
      ),
      test(
        'a target just seen: one sample is not a stalled head',
        [[series('ethereum_blockchain_height', BESU_TARGET), '_x4 100']],
        'BesuHeadStalled',
        '4m',
        [],
      ),
      test(
        'head advancing (30 blocks a minute)',
        [[series('ethereum_blockchain_height', BESU_TARGET), '100+30x10']],
        'BesuHeadStalled',
        '5m',
        [],
      ),
      test(
        'behind',
        [
          [series('ethereum_best_known_block_number', BESU_TARGET), `${100 + MAX_BLOCKS_BEHIND + 1}x10`],
          [series('ethereum_blockchain_height', BESU_TARGET), '100x10'],
        ],
        'BesuBehind',
        '7m',
        expected('BesuBehind', BESU_TARGET),
      ),
      test(
        'within the blocks a node may be behind',
        [
          [series('ethereum_best_known_block_number', BESU_TARGET), `${100 + MAX_BLOCKS_BEHIND}x10`],
          [series('ethereum_blockchain_height', BESU_TARGET), '100x10'],
        ],
        'BesuBehind',
        '7m',
        [],
      ),
      test(
        "a machine's disk below the warning",
        disk(warningFree),
        'BesuDiskLow',
        '7m',
        expected('BesuDiskLow', { ...MACHINE_TARGET, mountpoint: '/' }, ['warning']),
      ),
      test(
        "a machine's disk below the critical share",
        disk(criticalFree),
        'BesuDiskLow',
        '7m',
        expected('BesuDiskLow', { ...MACHINE_TARGET, mountpoint: '/' }),
      ),
      test("a machine's disk with room", disk(fineFree), 'BesuDiskLow', '7m', []),
      test(
        "a cluster node's volume below the critical share",
        volume(criticalFree),
        'BesuDiskLow',
        '7m',
        expected('BesuDiskLow', { ...CLAIM, pod: POD.pod, ...NODE }),
      ),
      test(
        'a restart loop',
        [[series('process_start_time_seconds', BESU_TARGET), restarts]],
        'BesuRestarting',
        `${RESTART_LOOP.restarts + 2}m`,
        expected('BesuRestarting', BESU_TARGET),
      ),
      test(
        'one restart',
        [[series('process_start_time_seconds', BESU_TARGET), '1000 1060x10']],
        'BesuRestarting',
        '5m',
        [],
      ),
      test(
        "a machine's companion service down",
        [[series('node_systemd_unit_state', companionService), '0x10']],
        'CompanionDown',
        '4m',
        expected('CompanionDown', companionService),
      ),
      test(
        "a cluster node's companion container not ready",
        [[series('kube_pod_container_status_ready', companionContainer), '0x10'], ...podTargets],
        'CompanionDown',
        '4m',
        expected('CompanionDown', { ...companionContainer, ...NODE }),
      ),
      test(
        "a container of a pod that is no node's, named as a companion",
        [[series('kube_pod_container_status_ready', foreignContainer), '0x10'], ...podTargets],
        'CompanionDown',
        '4m',
        [],
      ),
      test(
        'companions up',
        [
          [series('node_systemd_unit_state', companionService), '1x10'],
          [series('kube_pod_container_status_ready', companionContainer), '1x10'],
          ...podTargets,
        ],
        'CompanionDown',
        '4m',
        [],
      ),
      test(
        "a machine's relay: the gateway took no push for too long",
        lastPushAt60(MACHINE_TARGET),
        'MetricsPushFailing',
        pushStale,
        expected('MetricsPushFailing', MACHINE_TARGET),
      ),
      test(
        "a pod's relay: the gateway took no push for too long",
        lastPushAt60(BESU_TARGET),
        'MetricsPushFailing',
        pushStale,
        expected('MetricsPushFailing', BESU_TARGET),
      ),
      test("a relay's last push just recent enough", lastPushAt60(MACHINE_TARGET), 'MetricsPushFailing', pushFresh, []),
      test(
        'a relay pushing every minute',
        [[series(METRICS.lastPushSeries, MACHINE_TARGET), '60+60x10']],
        'MetricsPushFailing',
        '8m',
        [],
      ),
    ],
  };
}

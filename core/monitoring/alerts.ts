/**
 * The alert rules of a node (monitoring/alerts.yml, Prometheus' rule format) and their unit tests for `promtool test
 * rules` (monitoring/alerts.test.yml), both written from the thresholds `npm run node -- check` judges by
 * (core/catalog/health.ts) by `npm run docs`. Pure: data in, rule documents out.
 */
import { COMPANIONS } from '../catalog/companions';
import { kubernetesNames } from '../catalog/kubernetes';
import {
  BEHIND_FOR_MINUTES,
  COMPANION_DOWN_FOR_MINUTES,
  DISK_FREE,
  DOWN_FOR_MINUTES,
  MAX_BLOCKS_BEHIND,
  MAX_HEAD_AGE_SECONDS,
  NO_PEERS_FOR_MINUTES,
  MAX_PUSH_AGE_SECONDS,
  RESTART_LOOP,
} from '../catalog/health';
import { METRICS } from '../catalog/metrics';

/**
 * How the operator's Prometheus names what it scrapes (docs/operations.md, "Monitoring"): the nodes' Besu metrics under
 * one job, their machines' node_exporter under another, each target labelled with its stack and node.
 */
export const SCRAPE = {
  besuJob: 'lacchain-besu',
  nodeExporterJob: 'lacchain-node-exporter',
  stackLabel: 'lacchain_stack',
  nodeLabel: 'lacchain_node',
  /** How often the nodes are scraped, in seconds. */
  intervalSeconds: 15,
} as const;

/** One alert rule. */
export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: 'warning' | 'critical' };
  annotations: { summary: string; runbook: string };
}

/**
 * Which series the rules watch: every node's (monitoring/alerts.yml, for the operator's Prometheus) or one cluster
 * node's (its PrometheusRule, with the Prometheus Operator), and how a runbook names the command that diagnoses it.
 */
export interface RuleScope {
  /** Label matchers of the node's Besu series. */
  besu: string;
  /** The free share of the data's filesystem (or volume). */
  diskFree: string;
  /** A companion down: a machine's service not active, a pod's container not ready. */
  companionDown: string;
  /** Label matchers of the relay's own series: beside the machine's (node_exporter job) or Besu's (a pod's). */
  relay: string;
  /** The `npm run node` command of an operation. */
  run: (operation: string) => string;
}

/** A regular expression matching any companion's container or service name suffix. */
const COMPANION_NAMES = COMPANIONS.map((c) => c.name).join('|');
const BESU = `job="${SCRAPE.besuJob}"`;
const NODE_EXPORTER = `job="${SCRAPE.nodeExporterJob}"`;
/** The free share of a PersistentVolumeClaim, from the kubelet's volume statistics. */
const volumeFree = (claim: string) =>
  `kubelet_volume_stats_available_bytes{${claim}} / kubelet_volume_stats_capacity_bytes{${claim}}`;

/**
 * A cluster node's stack and node, for the kubelet's and kube-state-metrics' series (which name only a namespace and a
 * pod or claim): its Besu target's labels, by its namespace and pod (the scrape job by annotations and the Prometheus
 * Operator both label a pod's target with them; a machine's target has no pod, and is left out so that the machines'
 * targets do not make the match ambiguous). A pod that is no LACChain node's matches nothing.
 */
const POD_NODE = `group by (namespace, pod, ${SCRAPE.stackLabel}, ${SCRAPE.nodeLabel}) (up{${BESU}, pod!=""})`;
/** `expr`'s series (each with a namespace and a pod) labelled with the stack and node of that pod. */
const withPodNode = (expr: string) =>
  `${expr} * on (namespace, pod) group_left (${SCRAPE.stackLabel}, ${SCRAPE.nodeLabel}) ${POD_NODE}`;
/** A data volume's claim names its node's pod: `besu-node-<node>-data` is the volume of `besu-node-<node>-0`. */
const withClaimPod = (expr: string) =>
  `label_replace(${expr}, "pod", "${kubernetesNames('$1').pod}", "persistentvolumeclaim", "${kubernetesNames('(.+)').dataVolume}")`;

/**
 * Every node the operator's Prometheus scrapes, machines and cluster nodes, told apart by their labels; every alert
 * carries the node's stack and node (a cluster node's taken from its Besu target), so every runbook is filled in.
 */
export const EVERY_NODE: RuleScope = {
  besu: BESU,
  diskFree:
    `(node_filesystem_avail_bytes{${NODE_EXPORTER}} / node_filesystem_size_bytes{${NODE_EXPORTER}})` +
    ` or (${withPodNode(withClaimPod(volumeFree(`persistentvolumeclaim=~"${kubernetesNames('.+').dataVolume}"`)))})`,
  companionDown:
    `(node_systemd_unit_state{${NODE_EXPORTER}, name=~".+-(${COMPANION_NAMES})\\\\.service", state="active"} == 0)` +
    ` or (${withPodNode(`(kube_pod_container_status_ready{container=~".+-(${COMPANION_NAMES})"} == 0)`)})`,
  relay: `job=~"${SCRAPE.besuJob}|${SCRAPE.nodeExporterJob}"`,
  // Filled in from the alert's labels.
  run: (operation) =>
    `npm run node -- ${operation} --stack {{ $labels.${SCRAPE.stackLabel} }} --node {{ $labels.${SCRAPE.nodeLabel} }}`,
};

/** One cluster node: its Besu series (labelled by its ServiceMonitor), its data volume, its pod's containers. */
export function clusterNodeScope(node: { stack: string; name: string; namespace: string }): RuleScope {
  const names = kubernetesNames(node.name);
  const namespace = `namespace="${node.namespace}"`;
  return {
    besu: `${BESU}, ${SCRAPE.stackLabel}="${node.stack}", ${SCRAPE.nodeLabel}="${node.name}"`,
    diskFree: volumeFree(`${namespace}, persistentvolumeclaim="${names.dataVolume}"`),
    companionDown: `kube_pod_container_status_ready{${namespace}, pod="${names.pod}", container=~"${names.companionContainer(`(${COMPANION_NAMES})`)}"} == 0`,
    relay: `${BESU}, ${SCRAPE.stackLabel}="${node.stack}", ${SCRAPE.nodeLabel}="${node.name}"`,
    run: (operation) => `npm run node -- ${operation} --stack ${node.stack} --node ${node.name}`,
  };
}

const minutes = (m: number) => `${m}m`;
const percent = (share: number) => `${Math.round(share * 100)} %`;

function diskRule(scope: RuleScope, severity: 'warning' | 'critical'): AlertRule {
  return {
    alert: 'BesuDiskLow',
    expr: `(${scope.diskFree}) < ${DISK_FREE[severity]}`,
    for: minutes(5),
    labels: { severity },
    annotations: {
      summary: `The filesystem of the node's data has less than ${percent(DISK_FREE[severity])} free.`,
      runbook: `${scope.run('status')} shows the data's size and the free space; a full disk can corrupt Besu's database: grow the disk or the volume before it fills.`,
    },
  };
}

/** The rules for a scope, in the order an operator reads them. */
export function alertRules(scope: RuleScope): AlertRule[] {
  const { besu, run } = scope;
  return [
    {
      alert: 'BesuDown',
      expr: `up{${besu}} == 0`,
      for: minutes(DOWN_FOR_MINUTES),
      labels: { severity: 'critical' },
      annotations: {
        summary: "The node's Besu does not answer its metrics scrape.",
        runbook: `${run('status')} says whether the service or pod runs; ${run('check')} --fix restarts it (the recovery rule).`,
      },
    },
    {
      alert: 'BesuNoPeers',
      expr: `ethereum_peer_count{${besu}} == 0`,
      for: minutes(NO_PEERS_FOR_MINUTES),
      labels: { severity: 'critical' },
      annotations: {
        summary: 'The node has no peer: it reaches no other node of the network.',
        runbook: `${run('check')} tells why (permissioning, the p2p port, the enode's address); --fix restarts it.`,
      },
    },
    {
      alert: 'BesuHeadStalled',
      // Half the age without a change, held for the other half: a target Prometheus has only just seen (one sample,
      // no change yet) is pending, not firing, while a head stalled for MAX_HEAD_AGE_SECONDS fires.
      expr: `changes(ethereum_blockchain_height{${besu}}[${MAX_HEAD_AGE_SECONDS / 2}s]) == 0`,
      for: `${MAX_HEAD_AGE_SECONDS / 2}s`,
      labels: { severity: 'critical' },
      annotations: {
        summary: `No new block for ${MAX_HEAD_AGE_SECONDS} s (blocks come every 2 s).`,
        runbook: `${run('check')} shows the block sync and the last import; ${run('logs')} shows why.`,
      },
    },
    {
      alert: 'BesuBehind',
      expr: `ethereum_best_known_block_number{${besu}} - ethereum_blockchain_height{${besu}} > ${MAX_BLOCKS_BEHIND}`,
      for: minutes(BEHIND_FOR_MINUTES),
      labels: { severity: 'warning' },
      annotations: {
        summary: `More than ${MAX_BLOCKS_BEHIND} blocks behind the best known block for ${BEHIND_FOR_MINUTES} minutes.`,
        runbook: `${run('check')} shows how far behind it is and whether it advances.`,
      },
    },
    diskRule(scope, 'warning'),
    diskRule(scope, 'critical'),
    {
      alert: 'BesuRestarting',
      expr: `changes(process_start_time_seconds{${besu}}[${RESTART_LOOP.minutes}m]) > ${RESTART_LOOP.restarts}`,
      labels: { severity: 'warning' },
      annotations: {
        summary: `Besu started more than ${RESTART_LOOP.restarts} times in ${RESTART_LOOP.minutes} minutes: a restart loop.`,
        runbook: `${run('logs')} shows why it stops (a missing key, a config the release refuses, a full disk).`,
      },
    },
    {
      alert: 'CompanionDown',
      expr: scope.companionDown,
      for: minutes(COMPANION_DOWN_FOR_MINUTES),
      labels: { severity: 'critical' },
      annotations: {
        summary:
          'A companion service the network requires beside Besu (relay signer, rotation client or monitoring client) is down.',
        runbook: `${run('status')} shows each companion's state; ${run('check')} names the one that is down.`,
      },
    },
    {
      alert: 'MetricsPushFailing',
      expr: `time() - ${METRICS.lastPushSeries}{${scope.relay}} > ${MAX_PUSH_AGE_SECONDS}`,
      labels: { severity: 'warning' },
      annotations: {
        summary: `The network's gateway has taken none of the node's metrics for more than ${MAX_PUSH_AGE_SECONDS} s: the network sees the node as gone.`,
        runbook: `${run('status')} shows whether the node runs; the metrics relay's log says why the push fails (journalctl -u <service>-metrics-relay on a machine, kubectl logs <pod> -c <node>-metrics-relay on a cluster): the gateway (port 9091) must be reachable from the machine or pod.`,
      },
    },
  ];
}

/** The rules of monitoring/alerts.yml: every node's. */
export const ALERT_RULES: readonly AlertRule[] = alertRules(EVERY_NODE);

/** monitoring/alerts.yml: one group of every rule. */
export function alertRulesDocument() {
  return { groups: [{ name: 'lacchain-besu-node', rules: ALERT_RULES }] };
}

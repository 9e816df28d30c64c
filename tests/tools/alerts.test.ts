/**
 * The alert rules (monitoring/alerts.yml) and their unit tests (monitoring/alerts.test.yml) with the real promtool
 * (Debian's prometheus package; tests/setup.sh installs it): the rules are valid, each fires just past its threshold
 * and stays quiet just inside it, and a rule whose threshold drifts from the check's fails those tests. Both files,
 * and the dashboard, are as the code writes them from the thresholds `npm run node -- check` judges by.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DISK_FREE, MAX_BLOCKS_BEHIND, MAX_HEAD_AGE_SECONDS } from '../../core/catalog/health';
import { MAX_IMPORT_AGE_SECONDS } from '../../core/operations/health';
import { ALERT_RULES } from '../../core/monitoring/alerts';
import { monitoringFiles } from '../../core/monitoring/files';
import { PROJECT_DIR } from '../../testing/run';
import * as yaml from 'js-yaml';
import { NO_PEERS_FOR_MINUTES, COMPANION_DOWN_FOR_MINUTES } from '../../core/catalog/health';
import { prometheusOperatorManifests } from '../../core/kubernetes/monitoring';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { EXPECTED_ALERTS, loadTestnet, validTestnetConfig } from '../../testing/fixtures';

const PROMTOOL = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim();
/** Without promtool the promtool tests say why they are skipped; under CI=true they run, and fail. */
const withPromtool = PROMTOOL || process.env.CI === 'true' ? it : it.skip;
if (!PROMTOOL && process.env.CI !== 'true') {
  process.stderr.write('promtool is not installed (apt-get install prometheus): the promtool tests are skipped\n');
}
const promtool = (args: string[]) => spawnSync(PROMTOOL || 'promtool', args, { encoding: 'utf8' });

describe('the monitoring files', () => {
  it.each(monitoringFiles().map((f) => [f.file, f.text]))(
    '%s is as the code writes it (npm run docs)',
    (file, text) => {
      expect(fs.readFileSync(path.join(PROJECT_DIR, file), 'utf8')).toBe(text);
    },
  );

  it("take their thresholds from the check's", () => {
    expect(MAX_IMPORT_AGE_SECONDS).toBe(MAX_HEAD_AGE_SECONDS);
    const expr = (alert: string) => ALERT_RULES.filter((r) => r.alert === alert).map((r) => r.expr);
    // No change in half the age, held for the other half: MAX_HEAD_AGE_SECONDS in all.
    const stalled = ALERT_RULES.filter((r) => r.alert === 'BesuHeadStalled');
    expect(stalled.map((r) => [r.expr, r.for])).toEqual([
      [expect.stringContaining(`[${MAX_HEAD_AGE_SECONDS / 2}s]`), `${MAX_HEAD_AGE_SECONDS / 2}s`],
    ]);
    expect(expr('BesuBehind')).toEqual([expect.stringMatching(new RegExp(`> ${MAX_BLOCKS_BEHIND}$`))]);
    expect(expr('BesuDiskLow')).toEqual([
      expect.stringMatching(new RegExp(`< ${DISK_FREE.warning}$`)),
      expect.stringMatching(new RegExp(`< ${DISK_FREE.critical}$`)),
    ]);
  });

  it('give every rule a severity and a runbook naming the npm run node command that diagnoses it', () => {
    for (const rule of ALERT_RULES) {
      expect([rule.alert, rule.labels.severity]).toEqual([rule.alert, expect.stringMatching(/^(warning|critical)$/)]);
      expect(rule.annotations.runbook).toMatch(
        /npm run node -- (status|check|logs) --stack \{\{ \$labels\.lacchain_stack \}\}/,
      );
    }
    expect(new Set(ALERT_RULES.map((r) => r.alert))).toEqual(new Set(EXPECTED_ALERTS));
  });
});

describe('the alert rules under promtool', () => {
  withPromtool('are valid rules (promtool check rules)', () => {
    const result = promtool(['check', 'rules', path.join(PROJECT_DIR, 'monitoring/alerts.yml')]);
    expect(result.stdout + result.stderr).toMatch(/SUCCESS: 9 rules found/);
    expect(result.status).toBe(0);
  });

  withPromtool('fire just past each threshold and stay quiet inside it (promtool test rules)', () => {
    const result = promtool(['test', 'rules', path.join(PROJECT_DIR, 'monitoring/alerts.test.yml')]);
    expect(result.stdout + result.stderr).toMatch(/SUCCESS/);
    expect(result.status).toBe(0);
  });

  withPromtool("fail their tests when a rule's threshold drifts", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-alerts-'));
    const rules = fs.readFileSync(path.join(PROJECT_DIR, 'monitoring/alerts.yml'), 'utf8');
    const drifted = rules.replace(`> ${MAX_BLOCKS_BEHIND}\n`, `> ${MAX_BLOCKS_BEHIND + 1}\n`);
    expect(drifted).not.toBe(rules);
    fs.writeFileSync(path.join(dir, 'alerts.yml'), drifted);
    fs.copyFileSync(path.join(PROJECT_DIR, 'monitoring/alerts.test.yml'), path.join(dir, 'alerts.test.yml'));
    const result = promtool(['test', 'rules', path.join(dir, 'alerts.test.yml')]);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(result.status).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/alertname: BesuBehind/);
  });
});

describe("a cluster node's PrometheusRule under promtool", () => {
  const node = loadTestnet({
    ...validTestnetConfig(),
    'lacchain:monitoring': {
      scraper: { namespace: 'monitoring', podLabels: { app: 'prometheus' } },
      prometheusOperator: true,
    },
  }).nodes.find((n) => n.target === 'kubernetes') as KubernetesNodeSettings;
  const rule = prometheusOperatorManifests(node)!.prometheusRule;
  /** The labels its ServiceMonitor gives the node's Besu series, and the Prometheus Operator's own. */
  const besu = (name: string) =>
    `{job="lacchain-besu", lacchain_stack="testnet", lacchain_node="${name}", namespace="lacchain", pod="besu-node-${name}-0"}`;
  const ready = (pod: string) =>
    `kube_pod_container_status_ready{namespace="lacchain", pod="${pod}", container="writer-relay-signer"}`;
  const after = (m: number) => `${m + 1}m`;

  withPromtool('holds valid rules for this node only: they fire for its series and not for another node', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-rule-'));
    fs.writeFileSync(path.join(dir, 'rules.yml'), yaml.dump({ groups: rule.spec.groups }));
    const check = promtool(['check', 'rules', path.join(dir, 'rules.yml')]);
    expect(check.stdout + check.stderr).toMatch(/SUCCESS: 9 rules found/);
    const tests = {
      rule_files: ['rules.yml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            { series: `ethereum_peer_count${besu('writer')}`, values: '0x10' },
            { series: `ethereum_peer_count${besu('other')}`, values: '0x10' },
            { series: ready('besu-node-writer-0'), values: '0x10' },
            { series: ready('besu-node-other-0'), values: '0x10' },
          ],
          alert_rule_test: [
            {
              eval_time: after(NO_PEERS_FOR_MINUTES),
              alertname: 'BesuNoPeers',
              exp_alerts: [
                {
                  exp_labels: {
                    severity: 'critical',
                    job: 'lacchain-besu',
                    lacchain_stack: 'testnet',
                    lacchain_node: 'writer',
                    namespace: 'lacchain',
                    pod: 'besu-node-writer-0',
                  },
                  exp_annotations: {
                    summary: 'The node has no peer: it reaches no other node of the network.',
                    runbook:
                      "npm run node -- check --stack testnet --node writer tells why (permissioning, the p2p port, the enode's address); --fix restarts it.",
                  },
                },
              ],
            },
            {
              eval_time: after(COMPANION_DOWN_FOR_MINUTES),
              alertname: 'CompanionDown',
              exp_alerts: [
                {
                  exp_labels: {
                    severity: 'critical',
                    namespace: 'lacchain',
                    pod: 'besu-node-writer-0',
                    container: 'writer-relay-signer',
                  },
                  exp_annotations: {
                    summary:
                      'A companion service the network requires beside Besu (relay signer, rotation client or monitoring client) is down.',
                    runbook:
                      "npm run node -- status --stack testnet --node writer shows each companion's state; npm run node -- check --stack testnet --node writer names the one that is down.",
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    fs.writeFileSync(path.join(dir, 'rules.test.yml'), yaml.dump(tests));
    const result = promtool(['test', 'rules', path.join(dir, 'rules.test.yml')]);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(result.stdout + result.stderr).toMatch(/SUCCESS/);
    expect(result.status).toBe(0);
  });
});

describe('the Grafana dashboard', () => {
  const dashboard = JSON.parse(fs.readFileSync(path.join(PROJECT_DIR, 'monitoring/dashboard.json'), 'utf8'));

  it('is importable as is: it asks for its Prometheus data source, and every panel and query uses it', () => {
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })]);
    for (const panel of dashboard.panels) {
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      for (const target of panel.targets) expect(target.datasource.uid).toBe('${DS_PROMETHEUS}');
    }
    expect(new Set(dashboard.panels.map((p: { id: number }) => p.id)).size).toBe(dashboard.panels.length);
  });

  it('shows the head, best known block, peers, sync distance, block time, disk, data size, JVM and companions', () => {
    const queries = dashboard.panels
      .flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr))
      .join('\n');
    for (const metric of [
      'ethereum_blockchain_height',
      'ethereum_best_known_block_number',
      'ethereum_peer_count',
      'node_filesystem_avail_bytes',
      'kubelet_volume_stats_used_bytes',
      // Both names of the JVM's memory, before and after Besu 24.12.0.
      'jvm_memory_bytes_used',
      'jvm_memory_used_bytes',
      'jvm_gc_collection_seconds_sum',
      'node_systemd_unit_state',
      'kube_pod_container_status_ready',
    ]) {
      expect([metric, queries.includes(metric)]).toEqual([metric, true]);
    }
  });
});

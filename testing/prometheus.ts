/**
 * A Prometheus run by a test on this machine's loopback, with a configuration the test gives: started in a folder of
 * its own, asked through its HTTP API, stopped with its folder removed.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as yaml from 'js-yaml';
import * as os from 'os';
import * as path from 'path';
import { freePort } from './ports';

/** A target as Prometheus' API lists it. */
export interface PrometheusTarget {
  labels: Record<string, string>;
  scrapeUrl: string;
  /** `up`, `down` or `unknown` (not scraped yet). */
  health: string;
}

/** An alert as Prometheus' API lists it. */
export interface PrometheusAlert {
  labels: Record<string, string>;
  state: string;
}

/** A running Prometheus. */
export interface TestPrometheus {
  /** Its active targets, once they are as `ready` says (any found, by default; `seconds` at most): the last read. */
  targets(seconds?: number, ready?: (targets: PrometheusTarget[]) => boolean): Promise<PrometheusTarget[]>;
  /** Its alerts, pending and firing. */
  alerts(): Promise<PrometheusAlert[]>;
  /** The names of the rules it has loaded. */
  ruleNames(): Promise<string[]>;
  stop(): void;
}

/** Starts `binary` with the configuration `config` makes from its folder (where it may write rule files first). */
export async function startPrometheus(binary: string, config: (folder: string) => unknown): Promise<TestPrometheus> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-prometheus-'));
  fs.writeFileSync(path.join(folder, 'prometheus.yml'), yaml.dump(config(folder)));
  const port = await freePort();
  const child = spawn(binary, [
    `--config.file=${path.join(folder, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(folder, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ]);
  const api = (what: string) =>
    fetch(`http://127.0.0.1:${port}/api/v1/${what}`)
      .then((r) => r.json() as Promise<{ data: Record<string, unknown[]> }>)
      .catch(() => undefined);
  return {
    async targets(seconds = 60, ready = (targets) => targets.length > 0) {
      let targets: PrometheusTarget[] = [];
      for (let i = 0; i < seconds && !ready(targets); i++) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        targets = ((await api('targets'))?.data.activeTargets ?? []) as PrometheusTarget[];
      }
      return targets;
    },
    async alerts() {
      return ((await api('alerts'))?.data.alerts ?? []) as PrometheusAlert[];
    },
    async ruleNames() {
      const groups = ((await api('rules'))?.data.groups ?? []) as { rules: { name: string }[] }[];
      return groups.flatMap((g) => g.rules.map((r) => r.name));
    },
    stop() {
      child.kill('SIGTERM');
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * The rule file `rules` written into `folder` with the hold (`for:`) of the alerts named cut to `seconds`: their
 * expressions as they are, judged against what a real endpoint serves, without waiting out the real hold in real time
 * (the holds are judged by promtool's unit tests in simulated time: monitoring/alerts.test.yml,
 * tests/tools/alerts.test.ts). The other rules keep theirs.
 */
export function rulesHeldFor(rules: string, folder: string, alerts: string[], seconds: number): string {
  const file = yaml.load(fs.readFileSync(rules, 'utf8')) as { groups: { rules: { alert?: string; for?: string }[] }[] };
  const cut = file.groups.flatMap((group) => group.rules).filter((rule) => alerts.includes(rule.alert ?? ''));
  if (cut.length === 0) throw new Error(`${rules} has no rule ${alerts.join(', ')}`);
  for (const rule of cut) rule.for = `${seconds}s`;
  const written = path.join(folder, `held-${path.basename(rules)}`);
  fs.writeFileSync(written, yaml.dump(file));
  return written;
}

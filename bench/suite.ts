/**
 * Part "suite": the test suite's own wall time, tier by tier (`npx jest tests/<tier>`: unit, program, tools, cli, cluster,
 * e2e; see tests/README.md), with each test file's time from jest's report, against the shortest time any schedule of
 * those files could take on this machine.
 *
 * The end-to-end tests use the test host 'sshnode' (41): this part first waits (bounded) until no other end-to-end
 * run is going on. Failing tests are reported, not a benchmark error.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { fixed, PartResult, progress, runTimed, sectionTop, table } from './common';

/** The test tiers, in the order `npm test` reports them: each a folder of tests/ (tests/README.md says what each needs). */
const TEST_TIERS = ['unit', 'program', 'tools', 'cli', 'cluster', 'engine', 'e2e'] as const;

/** The longest wait for another end-to-end run to finish. */
const WAIT_LIMIT_MS = 60 * 60_000;

interface JestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTotalTestSuites: number;
  numRuntimeErrorTestSuites?: number;
  testResults: { name: string; status: string; startTime: number; endTime: number }[];
}

interface SuiteRun {
  label: string;
  command: string;
  seconds: number;
  code: number;
  report?: JestReport;
}

async function otherE2eRun(): Promise<string | undefined> {
  const found = await runTimed('pgrep', ['-af', 'jest tests/e2e']);
  const lines = found.stdout
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith(`${process.pid} `) && !/\bpgrep\b/.test(l));
  return lines.length > 0 ? lines.join('; ') : undefined;
}

async function runJest(label: string, dir: string): Promise<SuiteRun> {
  const out = path.join(os.tmpdir(), `lacchain-bench-jest-${process.pid}-${label}.json`);
  const args = ['jest', dir, '--json', `--outputFile=${out}`];
  progress(`suite: npx ${args.slice(0, 2).join(' ')}`);
  const result = await runTimed('npx', args, { timeoutMs: 40 * 60_000 });
  let report: JestReport | undefined;
  try {
    report = JSON.parse(fs.readFileSync(out, 'utf8')) as JestReport;
  } catch {
    report = undefined;
  }
  fs.rmSync(out, { force: true });
  if (!report) throw new Error(`npx jest ${dir} wrote no report (exit ${result.code}):\n${result.stderr.slice(-3000)}`);
  progress(`suite: ${label}: ${result.seconds.toFixed(1)} s (exit ${result.code})`);
  return { label, command: `npx jest ${dir}`, seconds: result.seconds, code: result.code, report };
}

/** Runs the suite benchmark. */
export async function benchSuite(): Promise<PartResult> {
  for (let waited = 0; ; waited += 10_000) {
    const other = await otherE2eRun();
    if (!other) break;
    if (waited >= WAIT_LIMIT_MS) throw new Error(`another end-to-end run is still going on after 60 min: ${other}`);
    if (waited === 0) progress(`suite: waiting for another end-to-end run to finish: ${other}`);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  }
  const runs: SuiteRun[] = [];
  for (const tier of TEST_TIERS) runs.push(await runJest(tier, `tests/${tier}`));
  return { name: 'suite', markdown: await report(runs) };
}

async function report(runs: SuiteRun[]): Promise<string> {
  const cores = os.cpus().length;
  const rows = runs.map((run) => {
    const r = run.report!;
    const files = r.testResults.map((t) => ({
      name: path.relative(process.cwd(), t.name),
      seconds: Math.max(0, t.endTime - t.startTime) / 1000,
    }));
    const sum = files.reduce((s, f) => s + f.seconds, 0);
    const slowest = files.reduce((a, b) => (b.seconds > a.seconds ? b : a), { name: '', seconds: 0 });
    // No schedule of these files can end before its slowest file, nor before their total spread over every core.
    const floor = Math.max(slowest.seconds, sum / cores);
    return [
      `\`${run.command}\``,
      `${r.numPassedTests} passed, ${r.numFailedTests} failed${r.numPendingTests ? `, ${r.numPendingTests} skipped` : ''}`,
      String(files.length),
      `**${fixed(run.seconds, 1)}**`,
      fixed(sum, 1),
      `${slowest.name} ${fixed(slowest.seconds, 1)} s`,
      fixed(floor, 1),
      `+${fixed(run.seconds - floor, 1)} s (${fixed(run.seconds / floor)}x)`,
    ];
  });
  const lines: string[] = await sectionTop(
    "The test suite's own time",
    'One run each, jest and ts-jest caches as earlier runs left them, from spawn to exit of `npx jest …` ' +
      '(what `npm run test:<tier>` runs, without the summary line). "Files total" adds up the time jest reports ' +
      'for each test file.',
  );
  lines.push('');
  lines.push(
    table(
      [
        'Command',
        'Tests',
        'Files',
        'Wall time (s)',
        'Files total (s)',
        'Slowest file',
        'Lower bound (s)',
        'Above the lower bound',
      ],
      rows,
    ),
  );
  lines.push('');
  lines.push(
    `Lower bound: no schedule of the same files on this machine ends before its slowest file, nor before the files' ` +
      `total time spread over all ${cores} cores. ` +
      (cores - 1 <= 1
        ? `Jest's default is one worker per core but one (1 here), so the files run one after the other: the ` +
          'distance is mostly the idle core (`--maxWorkers` could use it, at the price of a busier machine), and ' +
          "the rest, wall time minus files total, is jest's own start. "
        : `Jest's default is one worker per core but one (${cores - 1} here): the distance is workers left idle ` +
          "and jest's own start. ") +
      "Each file's time includes compiling its TypeScript (ts-jest). The slowest " +
      'end-to-end file builds and boots a real test host and provisions it (see the SSH section for what that ' +
      'costs) before its checks, in sequence.',
  );
  const failed = runs.filter((r) => r.code !== 0);
  if (failed.length > 0) {
    const names = (r: SuiteRun) =>
      r
        .report!.testResults.filter((t) => t.status !== 'passed')
        .map((t) => path.relative(process.cwd(), t.name))
        .join(', ');
    lines.push('');
    lines.push(
      `Note: ${failed.map((r) => `\`${r.command}\` exited ${r.code} (failing: ${names(r) || 'none reported'})`).join('; ')}: ` +
        'reported, not a benchmark failure.',
    );
  }
  const slowest = runs[0]
    .report!.testResults.map((t) => ({
      name: path.relative(process.cwd(), t.name),
      seconds: Math.max(0, t.endTime - t.startTime) / 1000,
    }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 5);
  lines.push('');
  lines.push(`Slowest unit test files: ${slowest.map((f) => `${f.name} ${fixed(f.seconds, 1)} s`).join(', ')}.`);
  return lines.join('\n');
}

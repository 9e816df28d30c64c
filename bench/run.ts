/**
 * `npm run bench [-- --only plan|program|ssh|backups|proxy|cli|cuts|rollout|suite] [--runs N] [--before REF]`: measures what a plan, a deploy, a no-op and an update cost,
 * prints a markdown table per part and writes them, with the machine and the date, to bench/RESULTS.md (the sections
 * of the parts run are replaced, the others kept).
 *   --only PART  run one part: plan (offline plan, 1-100 nodes), program (the program's own time under
 *                `pulumi up`, SSH-only and cluster stacks), ssh (a deploy on the real SSH test host, needs root),
 *                cli (the command-line tools' start: --help and a usage error, beside npm --version),
 *                cuts (the fault-injection matrix: every remote step cut and recovered on the real SSH test host),
 *                rollout (a change of three SSH nodes one at a time against all at once, on three real test hosts),
 *                suite (the test suite's own time, unit and end-to-end)
 *   --runs N     plan: measured runs per stack (default 5); program: runs per stack (default 3); ssh: cycles,
 *                each on a fresh test host (default 3)
 *   --before REF program, cli: also time the program or the tools at an earlier commit (e.g. before a speed-up)
 *
 * Benchmarks report; they never fail because a target is missed. The exit code is non-zero only on a real error
 * (a plan that fails, a provisioning step that fails, a bad option).
 */
import { parseArgs } from 'util';
import { Part, PartResult, PARTS, progress, RESULTS_FILE, writeResults } from './common';
import { endQuietlyOnBrokenPipe } from '../cli/cli';

/**
 * Each part's measurement, loaded only when the part runs: `--help` and a usage error start without compiling the
 * parts and the test fixtures they use.
 */
const MEASURE: Record<Part, (runs: number | undefined, before: string | undefined) => Promise<PartResult>> = {
  plan: async (runs) => (await import('./plan')).benchPlan(runs),
  program: async (runs, before) => (await import('./programRun')).benchProgram(runs, before),
  ssh: async (runs) => (await import('./ssh')).benchSsh(runs),
  backups: async () => (await import('./backups')).benchBackups(),
  proxy: async () => (await import('./proxyLoad')).benchProxy(),
  cli: async (runs, before) => (await import('./cli')).benchCli(runs, before),
  cuts: async () => (await import('./cuts')).benchCuts(),
  rollout: async (runs) => (await import('./rollout')).benchRollout(runs),
  suite: async () => (await import('./suite')).benchSuite(),
};

const USAGE =
  'npm run --silent bench -- [--only plan|program|ssh|backups|proxy|cli|cuts|rollout|suite] [--runs N] [--before REF]';

/** What --help prints: the usage, then the parts and options as this file's header describes them. */
const HELP = `usage: ${USAGE}
Measures what a plan, a deploy, a no-op and an update cost; prints a table per part and writes them to bench/RESULTS.md.
  --only PART   one part: ${PARTS.join(', ')} (ssh, backups, cuts and rollout need root: the real SSH test hosts)
  --runs N      measured runs per stack or cycles (1 to 50)
  --before REF  program, cli: also time the program or the tools at an earlier commit
  --help        this text
Benchmarks report; they never fail because a target is missed.
`;

async function main(): Promise<number> {
  endQuietlyOnBrokenPipe();
  let values: { only?: string; runs?: string; before?: string; help?: boolean };
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      options: {
        only: { type: 'string' },
        runs: { type: 'string' },
        before: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\nusage: ${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const only = values.only;
  if (only !== undefined && !(PARTS as readonly string[]).includes(only)) {
    process.stderr.write(`error: --only ${only}: allowed: ${PARTS.join(', ')}\nusage: ${USAGE}\n`);
    return 2;
  }
  const runs = values.runs === undefined ? undefined : Number(values.runs);
  if (runs !== undefined && !(Number.isInteger(runs) && runs >= 1 && runs <= 50)) {
    process.stderr.write(`error: --runs ${values.runs}: allowed: a whole number from 1 to 50\nusage: ${USAGE}\n`);
    return 2;
  }
  const parts: Part[] = only ? [only as Part] : [...PARTS];
  const results: PartResult[] = [];
  let failed = false;
  for (const part of parts) {
    progress(`part ${part}: starting`);
    try {
      const result = await MEASURE[part](runs, values.before);
      results.push(result);
      process.stdout.write(`\n${result.markdown.trim()}\n\n`);
      // Written after each part, so that a later part's failure keeps what was measured.
      writeResults([result]);
    } catch (error) {
      failed = true;
      process.stderr.write(
        `error: part ${part} could not be measured: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    }
  }
  if (results.length > 0) progress(`wrote ${RESULTS_FILE} (${results.map((r) => r.name).join(', ')})`);
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`unexpected error: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  },
);

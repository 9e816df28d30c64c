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
 *
 * This file (built into bin/ with the tools, so `--help` and a usage error start as fast as theirs) reads the command
 * line; the parts run from their TypeScript sources (bench/measure.ts, through ts-node: they use the test harness,
 * which the build leaves out).
 */
import * as path from 'path';
import { parseArgs } from 'util';
import { PROJECT_DIR } from '../core/projectDir';
import { Measurement, Part, PARTS } from './parts';

/** The parts' measurements (bench/measure.ts), from their TypeScript sources through ts-node, as launcher.js runs them. */
function measurement(): Measurement {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const launcher = require(path.join(PROJECT_DIR, 'launcher.js')) as { loadSource(entry: string): unknown };
  return launcher.loadSource('bench/measure') as Measurement;
}

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
  return measurement().measureParts(only ? [only as Part] : [...PARTS], runs, values.before);
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

/**
 * The parts of `npm run bench` (its command line: bench/run.ts), each loaded only when it runs, so a run of one part
 * compiles neither the others nor the test fixtures they use: each part measured in turn, its table printed and
 * written to bench/RESULTS.md as soon as it is done.
 */
import { progress, RESULTS_FILE, writeResults } from './common';
import { Part, PartResult } from './parts';

/** Each part's measurement, loaded only when the part runs. */
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

/** Measures `parts` in turn; returns the exit code: 1 when a part could not be measured, else 0. */
export async function measureParts(
  parts: Part[],
  runs: number | undefined,
  before: string | undefined,
): Promise<number> {
  const results: PartResult[] = [];
  let failed = false;
  for (const part of parts) {
    progress(`part ${part}: starting`);
    try {
      const result = await MEASURE[part](runs, before);
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

/**
 * The benchmark's parts by name, and what a part hands back: all that `npm run bench`'s command line needs, so its
 * `--help` and a usage error load nothing else (bench/run.ts; the parts themselves run from bench/measure.ts).
 */

/** The parts, in the order a whole run measures them. */
export const PARTS = ['plan', 'program', 'ssh', 'backups', 'proxy', 'cli', 'cuts', 'rollout', 'suite'] as const;
export type Part = (typeof PARTS)[number];

/** The result of one part: its markdown section (heading included) and a short summary for the console. */
export interface PartResult {
  name: Part;
  markdown: string;
}

/** What bench/measure.ts offers bench/run.ts: the parts measured in turn, the exit code (1 when one could not be). */
export interface Measurement {
  measureParts(parts: Part[], runs: number | undefined, before: string | undefined): Promise<number>;
}

/**
 * The command-line tools' start (`npm run bench -- --only cli [--runs N] [--before REF]`): the wall and CPU time of
 * `npm run --silent <tool> -- --help` and of a mistake in its command line (an unknown option), for every operator's
 * tool, beside `npm --version` measured in the same run (npm's own start, the floor of any `npm run`). With
 * `--before REF`, the same command lines in a worktree of an earlier commit (where the tools ran through ts-node and
 * had no --help: the time to their first answer, a usage error).
 *
 * Goal (issue 32): each tool answers in under 1 s on this machine, and within 3x of `npm --version`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { fixed, machine, median, now, PartResult, PROJECT_DIR, progress, runTimed, table, worktreeAt } from './common';

/** The operator's tools, as package.json names them. */
const TOOLS = ['node', 'init', 'plan', 'keygen', 'identity', 'monitoring'] as const;
/** The goals: under this many seconds, and within this factor of `npm --version`. */
const GOAL_SECONDS = 1;
const GOAL_FACTOR = 3;

/** Median wall and CPU seconds of `runs` runs of a command (after one warm-up run). */
async function timed(
  command: string,
  args: string[],
  cwd: string | undefined,
  runs: number,
): Promise<{ wall: number; cpu: number }> {
  await runTimed(command, args, { cwd });
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < runs; i++) {
    const run = await runTimed(command, args, { cwd, measureMemory: true });
    walls.push(run.seconds);
    cpus.push(run.cpuSeconds ?? NaN);
  }
  return { wall: median(walls), cpu: median(cpus) };
}

/** The tools the tree at `cwd` has (a script of that name in its package.json). */
function toolsOf(packageJson: { scripts?: Record<string, string> }): string[] {
  return TOOLS.filter((tool) => packageJson.scripts?.[tool] !== undefined);
}

/** Runs the part. */
export async function benchCli(runs = 5, before?: string): Promise<PartResult> {
  // As after npm install: the tools' build current (else the launcher runs the sources through ts-node, and says so).
  const build = await runTimed('npm', ['run', '--silent', 'build:program']);
  if (build.code !== 0) throw new Error(`npm run build:program failed: ${build.stderr}`);
  const npm = await timed('npm', ['--version'], undefined, runs);
  progress(`npm --version: ${fixed(npm.wall)} s`);
  const trees: Array<{ label: string; dir?: string; remove?: () => void }> = [{ label: 'now' }];
  if (before) trees.unshift({ label: `before (${before})`, ...worktreeAt(before) });
  const rows: (string | number)[][] = [];
  try {
    for (const tree of trees) {
      const packageJson = JSON.parse(fs.readFileSync(path.join(tree.dir ?? PROJECT_DIR, 'package.json'), 'utf8')) as {
        scripts?: Record<string, string>;
      };
      for (const tool of toolsOf(packageJson)) {
        for (const [what, args] of [
          ['--help', ['--help']],
          ['unknown option', ['--stak', 'testnet']],
        ] as const) {
          const result = await timed('npm', ['run', '--silent', tool, '--', ...args], tree.dir, runs);
          const first = await runTimed('npm', ['run', '--silent', tool, '--', ...args], { cwd: tree.dir });
          if (tree.label === 'now' && /older than the sources|not built/.test(first.stderr)) {
            throw new Error(`npm run ${tool} did not run from its build: ${first.stderr.split('\n')[0]}`);
          }
          const met = result.wall < GOAL_SECONDS && result.wall <= GOAL_FACTOR * npm.wall;
          progress(`${tree.label} ${tool} ${what}: ${fixed(result.wall)} s`);
          rows.push([
            tree.label,
            `npm run ${tool} -- ${args.join(' ')}`,
            fixed(result.wall),
            fixed(result.cpu),
            `${fixed(result.wall / npm.wall, 1)}x`,
            tree.label === 'now' ? (met ? 'met' : 'missed') : '',
          ]);
        }
      }
    }
  } finally {
    for (const tree of trees) tree.remove?.();
  }
  const markdown = `## The command-line tools' start (bench/cli.ts)

${now()}, ${await machine()}. Median of ${runs} runs (one warm-up run not counted) of each command line, wall time
from spawn to exit and CPU time (user + system, GNU time), through \`npm run --silent\` as an operator types it.
\`npm --version\` in the same run: **${fixed(npm.wall)} s** wall, ${fixed(npm.cpu)} s CPU. Goal: under ${GOAL_SECONDS} s
and within ${GOAL_FACTOR}x of \`npm --version\`.${before ? ` "before" is the tree at ${before} (the tools through ts-node, no --help: the time to their first answer).` : ''}

${table(['tree', 'command', 'wall s', 'CPU s', 'x npm --version', 'goal'], rows)}
`;
  return { name: 'cli', markdown };
}

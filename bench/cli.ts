/**
 * The command-line tools' start (`npm run bench -- --only cli [--runs N] [--before REF]`): the wall and CPU time of
 * `npm run --silent <tool> -- --help` and of a mistake in its command line (an unknown option), for every tool
 * package.json names (the operator's, the developers' `docs` and the benchmarks' own `bench`), each run paired with a
 * run of `npm --version` just before it (npm's own start, the floor of any `npm run`): the ratio is the median of the
 * pairs' ratios, so a machine whose speed drifts (a shared one) moves both sides of each pair alike. With
 * `--before REF`, the same command lines in a worktree of an earlier commit.
 *
 * Goal (issue 67, item 3): each tool within 2x of `npm --version`, and under 1 s on this machine (issue 32).
 */
import * as fs from 'fs';
import * as path from 'path';
import { fixed, machine, median, now, PartResult, PROJECT_DIR, progress, runTimed, table, worktreeAt } from './common';

/** The tools, as package.json names them: the operator's, the developers' docs and the benchmarks. */
const TOOLS = ['node', 'init', 'plan', 'keygen', 'identity', 'monitoring', 'docs', 'bench'] as const;
/** The goals: under this many seconds, and within this factor of `npm --version` (the pairs' median ratio). */
const GOAL_SECONDS = 1;
const GOAL_FACTOR = 2;

/** Medians of `runs` pairs: `npm --version`, then the command (after one warm-up run of each). */
interface Paired {
  /** The command's median wall and CPU seconds. */
  wall: number;
  cpu: number;
  /** `npm --version`'s median wall seconds, over the same pairs. */
  npmWall: number;
  /** The median of the pairs' ratios, command / `npm --version` (wall). */
  ratio: number;
  /** The same of their CPU times: less moved by other work on a shared machine. */
  cpuRatio: number;
}

/** Times `runs` pairs of `npm --version` and the command, one right after the other. */
async function pairedWithNpm(command: string, args: string[], cwd: string | undefined, runs: number): Promise<Paired> {
  await runTimed('npm', NPM_VERSION);
  await runTimed(command, args, { cwd });
  const [walls, cpus, npmWalls, ratios, cpuRatios]: number[][] = [[], [], [], [], []];
  for (let i = 0; i < runs; i++) {
    const npm = await runTimed('npm', NPM_VERSION, { measureMemory: true });
    const run = await runTimed(command, args, { cwd, measureMemory: true });
    walls.push(run.seconds);
    cpus.push(run.cpuSeconds ?? NaN);
    npmWalls.push(npm.seconds);
    ratios.push(run.seconds / npm.seconds);
    cpuRatios.push((run.cpuSeconds ?? NaN) / (npm.cpuSeconds ?? NaN));
  }
  const [wall, cpu, npmWall, ratio, cpuRatio] = [walls, cpus, npmWalls, ratios, cpuRatios].map(median);
  return { wall, cpu, npmWall, ratio, cpuRatio };
}

/** npm's own start: the floor of any `npm run`. */
const NPM_VERSION = ['--version'];

/** The tools the tree at `cwd` has (a script of that name in its package.json). */
function toolsOf(packageJson: { scripts?: Record<string, string> }): string[] {
  return TOOLS.filter((tool) => packageJson.scripts?.[tool] !== undefined);
}

/** Runs the part. */
export async function benchCli(runs = 5, before?: string): Promise<PartResult> {
  // As after npm install: the tools' build current (else the launcher runs the sources through ts-node, and says so).
  const build = await runTimed('npm', ['run', '--silent', 'build:program']);
  if (build.code !== 0) throw new Error(`npm run build:program failed: ${build.stderr}`);
  const npmWalls: number[] = [];
  const trees: Array<{ label: string; dir?: string; remove?: () => void }> = [{ label: 'now' }];
  if (before) {
    const tree = worktreeAt(before);
    trees.unshift({ label: `before (${before})`, ...tree });
    // As after npm install there too: its tools from their build when it has one (else through ts-node, as then).
    const scripts = JSON.parse(fs.readFileSync(path.join(tree.dir, 'package.json'), 'utf8')).scripts ?? {};
    if (scripts['build:program']) await runTimed('npm', ['run', '--silent', 'build:program'], { cwd: tree.dir });
  }
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
          const result = await pairedWithNpm('npm', ['run', '--silent', tool, '--', ...args], tree.dir, runs);
          npmWalls.push(result.npmWall);
          const first = await runTimed('npm', ['run', '--silent', tool, '--', ...args], { cwd: tree.dir });
          if (tree.label === 'now' && /older than the sources|not built/.test(first.stderr)) {
            throw new Error(`npm run ${tool} did not run from its build: ${first.stderr.split('\n')[0]}`);
          }
          const met = result.wall < GOAL_SECONDS && result.ratio <= GOAL_FACTOR;
          progress(`${tree.label} ${tool} ${what}: ${fixed(result.wall)} s, ${fixed(result.ratio)}x npm --version`);
          rows.push([
            tree.label,
            `npm run ${tool} -- ${args.join(' ')}`,
            fixed(result.wall),
            fixed(result.cpu),
            fixed(result.npmWall),
            `${fixed(result.ratio)}x`,
            `${fixed(result.cpuRatio)}x`,
            tree.label === 'now' ? (met ? 'met' : 'missed') : '',
          ]);
        }
      }
    }
  } finally {
    for (const tree of trees) tree.remove?.();
  }
  const markdown = `## The command-line tools' start (bench/cli.ts)

${now()}, ${await machine()} (at the end). Median of ${runs} runs (one warm-up run not
counted) of each command line, wall time from spawn to exit and CPU time (user + system, GNU time), through
\`npm run --silent\` as an operator types it, each run right after a run of \`npm --version\` (median
${fixed(median(npmWalls))} s wall over all pairs); the ratio is the median of the pairs' ratios. Goal: under
${GOAL_SECONDS} s and within ${GOAL_FACTOR}x of \`npm --version\`.${before ? ` "before" is the tree at ${before}, built as npm install builds it (an older tree without a build runs its tools through ts-node).` : ''}

${table(['tree', 'command', 'wall s', 'CPU s', 'npm --version s', 'x npm --version', 'x npm, CPU', 'goal'], rows)}
`;
  return { name: 'cli', markdown };
}

/**
 * Running the project's command-line tools as an operator would (`npm run --silent <tool> -- ...`).
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/** The project folder. */
export const PROJECT_DIR = path.resolve(__dirname, '..');

/** How a test runs a tool: through npm (`viaNpm`), or the command npm would run for it (the default, below). */
export interface ToolRunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Through `npm run --silent` itself, not only the command npm runs for the script: for the tests of what npm adds
   * (the usage lines' `npm run --silent`, a tool named on npm's command line). Always so in another folder than the
   * project's, and for a script that is not a tool's `node launcher.js <entry>`.
   */
  viaNpm?: boolean;
}

/** The project's tool scripts (package.json): `node launcher.js <entry>`, by the script's name. */
let toolEntries: Map<string, string> | undefined;
function toolEntry(script: string): string | undefined {
  if (!toolEntries) {
    const scripts = (
      JSON.parse(fs.readFileSync(path.join(PROJECT_DIR, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    toolEntries = new Map(
      Object.entries(scripts).flatMap(([name, line]) => {
        const entry = /^node launcher\.js (\S+)$/.exec(line)?.[1];
        return entry ? [[name, entry] as [string, string]] : [];
      }),
    );
  }
  return toolEntries.get(script);
}

/**
 * The command `npm run --silent <script> -- args` comes to in the project folder: for a tool, the `node launcher.js
 * <entry> args` its script names, run by this Node with npm's own additions to the environment that a tool could see
 * (node_modules/.bin first on PATH, INIT_CWD): the same process an operator's command runs, without npm's own start
 * before it (about 0.25 s of a core each, some 400 times a full run: process accounting, tests/README.md).
 */
export function toolCommand(
  script: string,
  args: string[],
  options: ToolRunOptions = {},
): { command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = options.cwd ?? PROJECT_DIR;
  const env = guardedEnv(options.env);
  const entry = options.viaNpm || path.resolve(cwd) !== PROJECT_DIR ? undefined : toolEntry(script);
  if (!entry) return { command: 'npm', args: ['run', '--silent', script, '--', ...args], cwd, env };
  return {
    command: process.execPath,
    args: [path.join(PROJECT_DIR, 'launcher.js'), entry, ...args],
    cwd,
    env: {
      ...env,
      PATH: [path.join(PROJECT_DIR, 'node_modules', '.bin'), env.PATH].filter(Boolean).join(path.delimiter),
      INIT_CWD: cwd,
    },
  };
}

/**
 * The program's and tools' build in bin/ made current once per test process (tests/run.sh builds it first): built only
 * when stale, never rewritten under the suites running beside this one.
 */
let built = false;
export function ensureBuilt(): void {
  if (built) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { staleBuild } = require(path.join(PROJECT_DIR, 'launcher.js')) as {
    staleBuild: (dir: string, entry: string) => string | undefined;
  };
  if (staleBuild(PROJECT_DIR, 'cli/node')) {
    spawnSync('npm', ['run', '--silent', 'build:program'], { cwd: PROJECT_DIR, stdio: 'ignore' });
  }
  built = true;
}

/** testing/netGuard.js's refusal line and the environment that loads it (see there). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { REFUSED_MARK } = require('./netGuardMark.js') as { REFUSED_MARK: string };
const GUARD = path.join(__dirname, 'netGuard.js');

/**
 * The environment of an operator's command in a test: the caller's, with testing/netGuard.js loaded into every Node
 * process of the command (npm, the tool, the Pulumi program), and npm's update check (a registry call) off.
 */
export function guardedEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const merged = { ...process.env, ...env };
  return {
    ...merged,
    NODE_OPTIONS: [merged.NODE_OPTIONS, `--require ${GUARD}`].filter(Boolean).join(' '),
    npm_config_update_notifier: 'false',
  };
}

/** Throws when the guard refused something: a test never passes with a probe or dial that would have left the machine. */
function refusedNothing(stderr: string): void {
  const line = stderr.split('\n').find((each) => each.startsWith(REFUSED_MARK));
  if (line !== undefined) throw new Error(line);
}

/**
 * Runs `npm run --silent <script> -- args` in the project folder, from the tools' build as an operator does (a tool:
 * the command its script names, toolCommand).
 */
export function runNpm(
  script: string,
  args: string[],
  options: ToolRunOptions & { input?: string } = {},
): { code: number; stdout: string; stderr: string } {
  ensureBuilt();
  const command = toolCommand(script, args, options);
  const result = spawnSync(command.command, command.args, {
    cwd: command.cwd,
    env: command.env,
    input: options.input,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const stderr = result.stderr
    .split('\n')
    .filter((l) => !l.startsWith('npm warn'))
    .join('\n');
  refusedNothing(stderr);
  return { code: result.status ?? -1, stdout: result.stdout, stderr };
}

/** Like runNpm, without blocking the event loop (tests that serve files or proxy apt in-process need that). */
export function runNpmAsync(
  script: string,
  args: string[],
  options: ToolRunOptions = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return startNpm(script, args, options).result;
}

/**
 * Like runNpmAsync, in a process group of its own that `kill()` ends at once (npm, the tool and the ssh or kubectl it
 * started), as a lost terminal or a killed CI job ends an operator's command.
 */
export function startNpm(
  script: string,
  args: string[],
  options: ToolRunOptions = {},
): { result: Promise<{ code: number; stdout: string; stderr: string }>; kill(): void } {
  ensureBuilt();
  const command = toolCommand(script, args, options);
  const child = spawn(command.command, command.args, { cwd: command.cwd, env: command.env, detached: true });
  const result = new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end();
    child.on('close', (code) => {
      const said = stderr
        .split('\n')
        .filter((l) => !l.startsWith('npm warn'))
        .join('\n');
      try {
        refusedNothing(said);
        resolve({ code: code ?? -1, stdout, stderr: said });
      } catch (error) {
        reject(error);
      }
    });
  });
  return {
    result,
    kill: () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already ended */
      }
    },
  };
}

/** A command's outcome in one line: `exit 0`, or the exit code with the end of what it said on stderr (for expect). */
export function outcome(result: { code: number; stderr: string }): string {
  return result.code === 0 ? 'exit 0' : `exit ${result.code}: ${result.stderr.trim().slice(-600)}`;
}

/**
 * Running the project's command-line tools as an operator would (`npm run --silent <tool> -- ...`).
 */
import { spawn, spawnSync } from 'child_process';
import * as path from 'path';

/** The project folder. */
export const PROJECT_DIR = path.resolve(__dirname, '..');

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

/** Runs `npm run --silent <script> -- args` in the project folder, from the tools' build as an operator does. */
export function runNpm(
  script: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): { code: number; stdout: string; stderr: string } {
  ensureBuilt();
  const result = spawnSync('npm', ['run', '--silent', script, '--', ...args], {
    cwd: options.cwd ?? PROJECT_DIR,
    env: guardedEnv(options.env),
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
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
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
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): { result: Promise<{ code: number; stdout: string; stderr: string }>; kill(): void } {
  ensureBuilt();
  const child = spawn('npm', ['run', '--silent', script, '--', ...args], {
    cwd: options.cwd ?? PROJECT_DIR,
    env: guardedEnv(options.env),
    detached: true,
  });
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

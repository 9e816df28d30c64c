/**
 * What the benchmark parts share: running a child process asynchronously with its wall time and peak memory, medians,
 * markdown tables, the machine's description and the sections of bench/RESULTS.md.
 *
 * Everything here is async (child_process.spawn): the SSH part keeps a test host's apt proxy and file server in this
 * process's event loop, which a synchronous child would stall.
 */
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { canBuildHosts } from '../testing/host/testHost';
import { Part, PARTS, PartResult } from './parts';

export type { PartResult } from './parts';

/** The project folder. */
export const PROJECT_DIR = path.resolve(__dirname, '..');
/** The results file, overwritten (per part) by every run. */
export const RESULTS_FILE = path.join(__dirname, 'RESULTS.md');

/** A finished child process. */
export interface Finished {
  code: number;
  stdout: string;
  stderr: string;
  /** Wall time in seconds, from spawn to exit. */
  seconds: number;
  /** Peak resident set size in MiB of the process (and its waited-for children), when measured. */
  peakMiB?: number;
  /** CPU time (user + system) in seconds, when measured by GNU time. */
  cpuSeconds?: number;
}

const GNU_TIME = '/usr/bin/time';

/** Seconds since an hrtime.bigint() reading. */
export function since(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** A process's VmHWM (peak resident set) in KiB, or undefined once it is gone. */
function vmHwmKiB(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs a command and waits for it, without blocking the event loop. With `measureMemory`, its peak resident set is
 * measured by GNU time (`%M`, exact) when /usr/bin/time exists, else by polling /proc/<pid>/status VmHWM every 10 ms.
 */
export function runTimed(
  command: string,
  args: string[],
  options: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    input?: string;
    timeoutMs?: number;
    measureMemory?: boolean;
  } = {},
): Promise<Finished> {
  const useGnuTime = options.measureMemory === true && fs.existsSync(GNU_TIME);
  const timeFile = useGnuTime ? path.join(os.tmpdir(), `lacchain-bench-time-${process.pid}-${Date.now()}`) : '';
  const [cmd, argv] = useGnuTime ? [GNU_TIME, ['-f', '%M %U %S', '-o', timeFile, command, ...args]] : [command, args];
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    const child = spawn(cmd, argv, {
      cwd: options.cwd ?? PROJECT_DIR,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let peakKiB = 0;
    const poll =
      options.measureMemory && !useGnuTime && child.pid !== undefined
        ? setInterval(() => (peakKiB = Math.max(peakKiB, vmHwmKiB(child.pid as number) ?? 0)), 10)
        : undefined;
    const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => {
      if (poll) clearInterval(poll);
      if (timer) clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `${command}: ${error.message}`, seconds: since(start) });
    });
    child.on('close', (code, signal) => {
      const seconds = since(start);
      if (poll) clearInterval(poll);
      if (timer) clearTimeout(timer);
      let peakMiB: number | undefined = peakKiB > 0 ? peakKiB / 1024 : undefined;
      let cpuSeconds: number | undefined;
      if (useGnuTime) {
        try {
          // The figures are the last line (GNU time writes "Command exited with non-zero status N" before them).
          const lines = fs.readFileSync(timeFile, 'utf8').trim().split('\n');
          const [maxKiB, user, system] = lines[lines.length - 1].split(' ').map(Number);
          peakMiB = maxKiB / 1024;
          cpuSeconds = user + system;
        } catch {
          peakMiB = undefined;
        }
        fs.rmSync(timeFile, { force: true });
      }
      resolve({ code: code ?? (signal ? 128 : 255), stdout, stderr, seconds, peakMiB, cpuSeconds });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** The median of some numbers (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** A number with a fixed count of decimals ("n/a" when it is not a number). */
export function fixed(value: number | undefined, decimals = 2): string {
  if (value === undefined || !Number.isFinite(value)) return 'n/a';
  const text = value.toFixed(decimals);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}

/** A markdown table. */
export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** "met" or "NOT met", for a target line. */
export function verdict(met: boolean): string {
  return met ? 'met' : 'NOT met';
}

/** Progress on stderr, so stdout keeps the tables. */
export function progress(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

/** The machine the figures were measured on. */
export async function machine(): Promise<string> {
  const cpuinfo = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  const nproc = await runTimed('nproc', []);
  const cores = nproc.code === 0 ? nproc.stdout.trim() : String(os.cpus().length);
  const memGiB = (os.totalmem() / 1024 ** 3).toFixed(1);
  const kernel = `${os.type()} ${os.release()}`;
  // Other work on the machine slows every figure: the 1-minute load average when the part ended says how busy it was.
  const load = os.loadavg()[0].toFixed(2);
  return `${cores} cores (${model}), ${memGiB} GiB memory, ${kernel}, Node.js ${process.version}; load average ${load}`;
}

/** Now, as `YYYY-MM-DD HH:MM UTC`. */
export function now(): string {
  return `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The top of a part's section: its heading, when and on what machine it was measured, and how. */
export async function sectionTop(title: string, method: string): Promise<string[]> {
  return [`## ${title}`, '', `Measured ${now()} on ${await machine()}.`, '', method];
}

/**
 * The part's result when this machine cannot boot test hosts (not root on Linux, or a tool missing): "not measured",
 * and why; nothing when it can.
 */
export async function withoutTestHosts(name: Part, heading: string): Promise<PartResult | undefined> {
  const possible = process.platform === 'linux' && process.getuid?.() === 0;
  const check = possible ? await canBuildHosts() : { ok: false, reason: 'needs root on Linux' };
  if (check.ok) return undefined;
  progress(`${name}: skipped: ${check.reason}`);
  return { name, markdown: `${heading}\n\nNot measured (${now()}): ${check.reason}.\n` };
}

const RESULTS_HEAD = `# Benchmark results

Written by \`npm run bench\` (scripts in \`bench/\`); each part's section is replaced by the latest run of that part
(\`npm run bench -- --only plan|program|ssh|backups|proxy|cli|cuts|rollout|suite\`). Benchmarks report: they never fail CI, whatever the figures.
`;

/** Replaces (or adds) the sections of the parts just run in bench/RESULTS.md, keeping the others. */
export function writeResults(results: PartResult[]): void {
  const existing = fs.existsSync(RESULTS_FILE) ? fs.readFileSync(RESULTS_FILE, 'utf8') : '';
  const sections = new Map<Part, string>();
  for (const part of PARTS) {
    const match = new RegExp(`<!-- bench:${part} -->\\n([\\s\\S]*?)<!-- /bench:${part} -->`).exec(existing);
    if (match) sections.set(part, match[1]);
  }
  for (const result of results) sections.set(result.name, `${result.markdown.trim()}\n`);
  const body = PARTS.filter((p) => sections.has(p))
    .map((p) => `<!-- bench:${p} -->\n${sections.get(p)}<!-- /bench:${p} -->\n`)
    .join('\n');
  fs.writeFileSync(RESULTS_FILE, `${RESULTS_HEAD}\n${body}`);
}

/** A git worktree of `ref` in a temporary folder, with this tree's node_modules, to measure an earlier commit. */
export function worktreeAt(ref: string): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-before-'));
  execFileSync('git', ['worktree', 'add', '--detach', dir, ref], { cwd: PROJECT_DIR, stdio: 'ignore' });
  fs.symlinkSync(path.join(PROJECT_DIR, 'node_modules'), path.join(dir, 'node_modules'));
  return {
    dir,
    remove: () => execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: PROJECT_DIR, stdio: 'ignore' }),
  };
}

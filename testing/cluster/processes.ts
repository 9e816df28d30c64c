/**
 * The test cluster's processes: each started with its output in a log file of its own, and stopped by its process id
 * (SIGTERM, then SIGKILL), also when the test process exits without stopping them.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/** One running process of the cluster. */
export interface ClusterProcess {
  name: string;
  pid: number;
  /** Its log file (standard output and error). */
  log: string;
  /** The last lines of its log, for a failure message. */
  tail(): string;
  /** True while it runs. */
  running(): boolean;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts `binary args` with its log in `dir/<name>.log`. */
export function startProcess(dir: string, name: string, binary: string, args: string[]): ClusterProcess {
  const log = path.join(dir, `${name}.log`);
  const out = fs.openSync(log, 'a');
  const child = spawn(binary, args, { stdio: ['ignore', out, out], cwd: dir });
  fs.closeSync(out);
  children.add(child);
  let exited = false;
  child.on('exit', () => {
    exited = true;
    children.delete(child);
  });
  return {
    name,
    pid: child.pid ?? -1,
    log,
    tail: () => fs.readFileSync(log, 'utf8').split('\n').slice(-30).join('\n'),
    running: () => !exited,
  };
}

/** Stops a process by its id: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopProcess(proc: ClusterProcess, graceMs = 5000): Promise<void> {
  const alive = () => {
    try {
      process.kill(proc.pid, 0);
      return proc.running();
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(proc.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  if (alive()) process.kill(proc.pid, 'SIGKILL');
}

/** Waits until `ready()` is true, failing with `what` and the process's log after `timeoutMs`. */
export async function waitFor(
  what: string,
  ready: () => Promise<boolean>,
  timeoutMs: number,
  proc?: ClusterProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return;
    if (proc && !proc.running()) throw new Error(`${proc.name} exited while waiting for ${what}:\n${proc.tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${proc ? `:\n${proc.tail()}` : ''}`);
}

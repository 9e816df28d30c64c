/**
 * A cut run that cannot hang silently: the run cut (a move, its network dropped at a moment) must end within a bound
 * once its cut was made, and within a longer one in all; past either, the test fails at once with what was still
 * running (this process's clients through the cut network, and `ps` on the machines), and those clients are ended so
 * that the run's promise settles and the next case starts clean (a cold run of 9f36a7b: a move whose carry waited for
 * ever, its `ssh tar c` writing into a pipe nobody read once the `ssh tar x` had ended, took jest's whole 600 s, and
 * the node it had stopped from every case after it).
 */
import { execFile } from 'child_process';
import type { TestHost } from '../host/testHost';

/** How long a run may go on after its cut, and in all (seconds). */
export interface CutBounds {
  /**
   * After the cut: a dropped connection ends at once; one that does not is ended by ssh's keepalive
   * (core/operations/clients.ts sshArguments, about a minute) or by a step's own time limit.
   */
  afterCut: number;
  /** In all, cut or not (a moment that never came, a run stuck before its cut). */
  total: number;
}

/** This process's descendants, each `pid ppid seconds state command`, whose command line holds `marker`. */
export async function localProcesses(marker: string): Promise<{ pid: number; line: string }[]> {
  const listing = await new Promise<string>((resolve) =>
    execFile('ps', ['-eo', 'pid=,ppid=,etimes=,stat=,args='], { maxBuffer: 16 * 1024 * 1024 }, (_e, stdout) =>
      resolve(stdout),
    ),
  );
  const rows = listing
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [pid, ppid] = line.split(/\s+/, 2).map(Number);
      return { pid, ppid, line };
    });
  const mine = new Set([process.pid]);
  // Parents come before their children in ps's order only mostly: repeat until no new descendant is found.
  for (let grew = true; grew;) {
    grew = false;
    for (const row of rows) {
      if (!mine.has(row.pid) && mine.has(row.ppid)) {
        mine.add(row.pid);
        grew = true;
      }
    }
  }
  return rows.filter((row) => row.pid !== process.pid && mine.has(row.pid) && row.line.includes(marker));
}

/** What runs on a machine now (as root, `ps` and the login sessions), or why it could not be read. */
async function machineProcesses(host: TestHost): Promise<string> {
  const result = await host.ssh('loginctl list-sessions --no-legend; ps -eo pid,ppid,etimes,stat,user,args --forest', {
    timeoutMs: 20_000,
  });
  return result.code === 0 ? result.stdout.trim() : `(not read: exit ${result.code}: ${result.stderr.trim()})`;
}

/**
 * Waits for `run` (a run being cut; `cutAt()`: when its cut was made, epoch ms, undefined before) within `bounds`.
 * Past a bound: the processes of this process whose command line holds `clientMarker` (the run's clients through the
 * cut network) are listed and ended (SIGTERM), `ps` of `hosts` read, and the wait fails saying so.
 */
export async function withinCutBounds<T>(
  run: Promise<T>,
  cutAt: () => number | undefined,
  bounds: CutBounds,
  clientMarker: string,
  hosts: TestHost[],
): Promise<T> {
  const started = Date.now();
  let settled = false;
  const watched = run.finally(() => (settled = true));
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<string>((resolve) => {
    const check = () => {
      const cut = cutAt();
      if (cut !== undefined && Date.now() - cut > bounds.afterCut * 1000) {
        resolve(`the run did not end within ${bounds.afterCut} s of its cut`);
      } else if (Date.now() - started > bounds.total * 1000) {
        resolve(`the run did not end within ${bounds.total} s (${cut === undefined ? 'never cut' : 'cut'})`);
      } else {
        timer = setTimeout(check, 1000);
      }
    };
    check();
  });
  const first = await Promise.race([watched.then(() => undefined), overdue]);
  clearTimeout(timer);
  if (first === undefined || settled) return watched;
  const clients = await localProcesses(clientMarker);
  const machines = await Promise.all(hosts.map(async (host) => `--- ${host.name}:\n${await machineProcesses(host)}`));
  for (const client of clients) {
    try {
      process.kill(client.pid, 'SIGTERM');
    } catch {
      // Ended meanwhile.
    }
  }
  // The run's promise settles once its clients ended; its outcome is no longer the test's.
  await Promise.race([watched.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  throw new Error(
    [
      `${first}: stuck; this process's clients through the cut network (ended now):`,
      ...(clients.length > 0 ? clients.map((c) => c.line) : ['(none)']),
      "the machines' sessions and processes:",
      ...machines,
    ].join('\n'),
  );
}

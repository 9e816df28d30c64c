/**
 * The container runtime's shims of a real worker (testing/cluster/kubelet.ts): containerd starts one
 * `containerd-shim-runc-v2 … -address <its socket>` per pod, which outlives containerd by design (it holds the pod's
 * containers while containerd restarts). A shim whose task containerd never deleted (a pod started while the worker
 * stopped) stays behind after containerd stops, its containers under it; once the worker's folder is gone (its state
 * folder with it), nothing can reach it but its process id. So the worker ends them, by the socket they name, after
 * containerd stopped and before its folder is removed.
 */
import * as fs from 'fs';

/** The shim's program, as containerd starts it. */
const SHIM = 'containerd-shim-runc-v2';

/** The command line of process `pid` as its arguments, or undefined once it is gone. */
function argumentsOf(pid: number): string[] | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return undefined;
  }
}

/** The parent process id of `pid`, or undefined once it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    // /proc/<pid>/stat: `pid (comm) state ppid …`; comm may hold spaces and parentheses, so read after the last ')'.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

const processIds = () =>
  fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);

/** The shims of the containerd whose socket is `socket` (`-address <socket>` on their command line). */
export function shimsOf(socket: string): number[] {
  return processIds().filter((pid) => {
    const args = argumentsOf(pid);
    if (!args || !args[0]?.endsWith(SHIM)) return false;
    const address = args.indexOf('-address');
    return address >= 0 && args[address + 1] === socket;
  });
}

/** `pids` and every process under them (children, their children, …). */
function withDescendants(pids: number[]): number[] {
  const parents = new Map(processIds().map((pid) => [pid, parentOf(pid)]));
  const tree = new Set(pids);
  for (let grown = true; grown;) {
    grown = false;
    for (const [pid, parent] of parents) {
      if (parent !== undefined && tree.has(parent) && !tree.has(pid)) {
        tree.add(pid);
        grown = true;
      }
    }
  }
  return [...tree];
}

/** Whether process `pid` is still there. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Ends the shims of the containerd at `socket` and every process under them (the containers they hold), with SIGKILL,
 * and waits (10 s at most) until they are gone; returns the ids of the shims it found.
 */
export async function endShims(socket: string): Promise<number[]> {
  const shims = shimsOf(socket);
  if (shims.length === 0) return [];
  const all = withDescendants(shims);
  for (const pid of all) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  const deadline = Date.now() + 10_000;
  while (all.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return shims;
}

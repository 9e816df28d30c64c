/**
 * A real worker's leftover shims (testing/cluster/runtimeShims.ts): found by the containerd socket their command line
 * names, ended with every process under them (the containers they hold), and no other worker's. Stand-ins for the
 * shims: shells whose argv[0] is the shim's program and whose arguments name a socket, each running a child as a
 * shim runs its containers.
 */
import { ChildProcess, spawn } from 'child_process';
import { alive, endShims, shimsOf } from '../../testing/cluster/runtimeShims';

const started: ChildProcess[] = [];
const MINE = '/tmp/lacchain-kubelet-mine/containerd.sock';
const OTHER = '/tmp/lacchain-kubelet-other/containerd.sock';

/** A stand-in shim of the containerd at `socket`, with a child (its "container"); resolves once the child runs. */
async function shimStandIn(socket: string): Promise<{ shim: number; container: number }> {
  const shim = spawn(
    '/bin/sh',
    ['-c', 'sleep 600 & echo $!; wait', 'shim', '-namespace', 'k8s.io', '-id', 'pod', '-address', socket],
    { argv0: '/usr/bin/containerd-shim-runc-v2', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  started.push(shim);
  const container = await new Promise<number>((resolve) => shim.stdout!.once('data', (d) => resolve(Number(d))));
  return { shim: shim.pid!, container };
}

afterAll(async () => {
  await endShims(OTHER);
  for (const child of started) child.stdout?.destroy();
});

test("a worker's shims are found by its socket; ended, with what runs under them; another worker's left running", async () => {
  const mine = await shimStandIn(MINE);
  const other = await shimStandIn(OTHER);
  expect(shimsOf(MINE)).toEqual([mine.shim]);
  expect(shimsOf('/tmp/lacchain-kubelet-mine')).toEqual([]);

  expect(await endShims(MINE)).toEqual([mine.shim]);
  // Reaped by this process, the shim's parent: gone once its exit is seen.
  await new Promise((resolve) =>
    started[0].exitCode !== null || started[0].signalCode ? resolve(0) : started[0].once('exit', resolve),
  );
  expect([alive(mine.shim), alive(mine.container)]).toEqual([false, false]);
  expect([alive(other.shim), alive(other.container)]).toEqual([true, true]);
  expect(shimsOf(MINE)).toEqual([]);
  expect(await endShims(MINE)).toEqual([]);
});

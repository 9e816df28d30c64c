/**
 * testing/host/unrelated-signals.py reads a trace of trace-signals.sh and names the signals that end a process sent to
 * one that is neither the sender nor its descendant (issue 54: what ends a step's SSH session with nothing said).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PROJECT_DIR } from '../../testing/run';

const SCRIPT = path.join(PROJECT_DIR, 'testing/host/unrelated-signals.py');

/** Trace lines as the kernel writes them: `task-pid [cpu] flags time: event: fields`. */
const fork = (time: number, comm: string, pid: number, child: number) =>
  `${comm}-${pid} [000] ..... ${time}: sched_process_fork: comm=${comm} pid=${pid} child_comm=${comm} child_pid=${child}`;
const exec = (time: number, pid: number, file: string) =>
  `x-${pid} [000] ..... ${time}: sched_process_exec: filename=${file} pid=${pid} old_pid=${pid}`;
const signal = (time: number, comm: string, pid: number, sig: number, to: string, toPid: number) =>
  `${comm}-${pid} [001] d..1. ${time}: signal_generate: sig=${sig} errno=0 code=0 comm=${to} pid=${toPid} grp=1 res=0`;

/**
 * pid 1 (born before the trace) starts the test process 10, which starts ssh 11 and, later, bash 20; bash starts sleep
 * 21. Signals: bash ends its own sleep (a descendant), ssh's SIGCHLD-like routine signal, a process signalling itself,
 * and bash's SIGTERM to ssh 11, which it never started (the one to name).
 */
const TRACE = [
  'start wall=1795983802.915455849 uptime=100.00',
  fork(100.1, 'node', 1, 10),
  exec(100.11, 10, '/usr/bin/node'),
  fork(100.2, 'node', 10, 11),
  exec(100.21, 11, '/usr/bin/ssh'),
  fork(100.3, 'node', 10, 20),
  exec(100.31, 20, '/usr/bin/bash'),
  fork(100.4, 'bash', 20, 21),
  exec(100.41, 21, '/usr/bin/sleep'),
  signal(101.0, 'bash', 20, 15, 'sleep', 21),
  signal(101.1, 'bash', 20, 17, 'ssh', 11),
  signal(101.2, 'ssh', 11, 2, 'ssh', 11),
  signal(101.5, 'bash', 20, 15, 'ssh', 11),
  '',
].join('\n');

function analyze(...args: string[]) {
  return spawnSync('python3', [SCRIPT, ...args], { encoding: 'utf8' });
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'unrelated-signals-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test('names a SIGTERM to a process its sender never started, and nothing sent to a descendant or to itself', () => {
  const trace = path.join(dir, 'signals.trace');
  fs.writeFileSync(trace, TRACE);
  const result = analyze(trace, '--each');
  expect([result.status, result.stderr]).toEqual([0, '']);
  expect(result.stdout.split('\n').filter(Boolean)).toEqual([
    '     1  sig=15 bash -> ssh   (nearest common ancestor: node)',
    '101.500000 sig=15 bash-20 -> ssh-11 (born 1.300 s before)',
  ]);
});

test('a wrong call says what it takes (exit 2); --help prints the usage (exit 0)', () => {
  expect(analyze('--help').stdout).toMatch(/^unrelated-signals\.py TRACE \[--each\]/);
  const none = analyze();
  expect([none.status, none.stderr]).toEqual([
    2,
    'unrelated-signals.py: give one TRACE file and at most --each (given: nothing); e.g. python3 testing/host/unrelated-signals.py /var/tmp/signals.trace\n',
  ]);
  const missing = analyze(path.join(dir, 'none.trace'));
  expect(missing.status).toBe(2);
  expect(missing.stderr).toMatch(/cannot read .*none\.trace: No such file or directory; give the FILE/);
});

/**
 * A cut's moment is checked on the machine itself (testing/cuts/cut.ts, untilHolds): a moment that lasts less than one
 * SSH round trip, as a restart's stop does on a busy machine, is still seen. Here the "machine" is this one, reached
 * through a stand-in for the test host's ssh that takes a second per session, as a loaded machine's round trip can.
 */
import { execFile, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { untilHolds } from '../../testing/cuts/cut';
import type { TestHost } from '../../testing/host/testHost';

const ROUND_TRIP_MS = 1000;

/** A test host whose sessions run here, each a round trip late; `starts` records when each began. */
function slowHost(starts: number[] = []): TestHost {
  const ssh = (command: string) => {
    starts.push(Date.now());
    return new Promise((resolve) => setTimeout(resolve, ROUND_TRIP_MS)).then(
      () =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
          execFile('bash', ['-c', command], (error, stdout, stderr) =>
            resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
          ),
        ),
    );
  };
  return { ssh } as unknown as TestHost;
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cut-moment-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a moment shorter than a round trip is seen: a file there for 0.3 s, each session a second late', async () => {
  const flag = path.join(dir, 'stopped');
  // The moment comes 1.5 s from now and lasts 0.3 s.
  spawn('sh', ['-c', `sleep 1.5; touch ${flag}; sleep 0.3; rm -f ${flag}`], { stdio: 'ignore' });
  const started = Date.now();
  expect(await untilHolds(slowHost(), `[ -f ${flag} ]`, () => false)).toBe(true);
  expect(Date.now() - started).toBeLessThan(8000);
});

test('a run that ends first ends the wait: false, and no session begins after it ended', async () => {
  let endedAt: number | undefined;
  setTimeout(() => (endedAt = Date.now()), 1500);
  const starts: number[] = [];
  expect(await untilHolds(slowHost(starts), 'false', () => endedAt !== undefined)).toBe(false);
  expect(starts.length).toBeGreaterThan(0);
  expect(starts.filter((start) => start >= endedAt!)).toEqual([]);
});

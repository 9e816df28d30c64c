/**
 * The pod's metrics relay (scripts/metrics-relay.java), run here by Java's source launcher with the pod's own JVM
 * options, in front of the Besu stand-in serving Besu's metric names on the loopback and a push gateway stand-in: it
 * pushes what Besu serves as Besu's own push would (POST, text format, job = the node's name, at a fixed rate; DELETE
 * when stopped), and answers GET /metrics for a scraper that addresses the pod, which Besu itself refuses, with its own
 * series beside Besu's: when the gateway last took a push.
 */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { METRICS } from '../../core/catalog/metrics';
import { RunningStandin, startBesuStandin } from '../../testing/besuStandin';
import { KEY_ONE } from '../../testing/fixtures';
import { freePort } from '../../testing/ports';
import { answeredPushAt, PushGateway, seriesNames, startPushGateway } from '../../testing/pushGateway';
import { PROJECT_DIR } from '../../testing/run';

jest.setTimeout(120_000);

const RELAY = path.join(PROJECT_DIR, 'scripts/metrics-relay.java');
/** A shorter interval than the networks' 5 s, so that the test sees several pushes quickly: the same code paths. */
const INTERVAL = 2;
const JOB = '/metrics/job/writer-1';
/** How long the gateway holds one push's answer: most of an interval, so that the next push is due soon after. */
const HELD_ANSWER_MS = 1500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let standin: RunningStandin;
let gateway: PushGateway;
let relay: ChildProcess;
let besuPort: number;
let relayPort: number;
let output = '';

beforeAll(async () => {
  besuPort = await freePort();
  relayPort = await freePort();
  standin = await startBesuStandin(KEY_ONE, '190.113.0.10', 60606, undefined, besuPort);
  gateway = await startPushGateway('127.0.0.1');
  relay = spawn('java', [...METRICS.podRelayJavaOptions, RELAY], {
    env: {
      PATH: process.env.PATH,
      BESU_METRICS_URL: `http://127.0.0.1:${besuPort}${METRICS.besuPath}`,
      PUSH_URL: `http://127.0.0.1:${gateway.port}${JOB}`,
      INTERVAL: String(INTERVAL),
      LISTEN_PORT: String(relayPort),
      LAST_PUSH_SERIES: METRICS.lastPushSeries,
    },
  });
  relay.stdout!.on('data', (chunk) => (output += chunk));
  relay.stderr!.on('data', (chunk) => (output += chunk));
  for (let i = 0; i < 100 && !output.includes('serving'); i++) await sleep(200);
});

afterAll(async () => {
  relay?.kill('SIGKILL');
  await standin?.stop();
  await gateway?.close();
});

it('compiles for Java 11, the oldest Java of a Besu image', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-relay-'));
  const result = spawnSync('javac', ['--release', '11', '-Xlint:all', '-Werror', '-d', out, RELAY], {
    encoding: 'utf8',
  });
  fs.rmSync(out, { recursive: true, force: true });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
});

it('pushes what Besu serves, as Besu would: POST, job = the node name, text format', async () => {
  const posts = () => gateway.pushes.filter((p) => p.method === 'POST' && p.path === JOB);
  for (let i = 0; i < 60 && posts().length < 5; i++) await sleep(500);
  const besu = await fetch(`http://127.0.0.1:${besuPort}${METRICS.besuPath}`).then((r) => r.text());
  expect(besu).toMatch(/^ethereum_blockchain_height \d+$/m);
  const pushes = posts();
  expect(pushes.length).toBeGreaterThanOrEqual(5);
  for (const push of pushes) {
    expect(push.contentType).toBe('text/plain; version=0.0.4');
    expect(seriesNames(push.body)).toEqual(seriesNames(besu));
  }
  expect(output).toContain(`metrics-relay: pushing to http://127.0.0.1:${gateway.port}${JOB}`);
});

it('pushes at a fixed rate: a push answered late is followed by an early one', async () => {
  const posts = () => gateway.pushes.filter((p) => p.method === 'POST' && p.path === JOB);
  const before = posts().length;
  gateway.holdNextAnswer(HELD_ANSWER_MS);
  for (let i = 0; i < 60 && posts().length < before + 2; i++) await sleep(250);
  const [held, next] = posts().slice(before, before + 2);
  expect(held?.answeredAt).toBeGreaterThanOrEqual(held.at + HELD_ANSWER_MS);
  // Due one interval after the held push was due, not one interval after its answer (a fixed delay would be).
  expect(next.at - held.answeredAt!).toBeLessThan(INTERVAL * 1000);
});

it("serves Besu's metrics to a scraper that addresses the pod, which Besu's own server refuses", async () => {
  // A scraper sends the address it scrapes as Host: the pod's IP, which Besu's host allowlist does not hold.
  const asScraper = (port: number) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.get(
        { host: '127.0.0.1', port, path: METRICS.besuPath, headers: { Host: `10.244.1.7:${port}` } },
        (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
    });
  expect((await asScraper(besuPort)).status).toBe(403);
  const served = await asScraper(relayPort);
  expect(served.status).toBe(200);
  expect(served.body).toMatch(/^ethereum_peer_count \d+$/m);
  const besu = await fetch(`http://127.0.0.1:${besuPort}${METRICS.besuPath}`).then((r) => r.text());
  // Besu's series, and the relay's own: when the gateway last took a push, one it answered.
  expect(seriesNames(served.body)).toEqual(new Set([...seriesNames(besu), METRICS.lastPushSeries]));
  const lastPush = Number(served.body.match(new RegExp(`^${METRICS.lastPushSeries} (\\d+)$`, 'm'))?.[1]);
  expect(answeredPushAt(gateway, lastPush, INTERVAL)).toBe(true);
});

it('serves nothing else: another path is 404, another method 405', async () => {
  expect((await fetch(`http://127.0.0.1:${relayPort}/`)).status).toBe(404);
  expect((await fetch(`http://127.0.0.1:${relayPort}/metrics/job/x`)).status).toBe(404);
  const post = await fetch(`http://127.0.0.1:${relayPort}${METRICS.besuPath}`, { method: 'POST', body: 'x' });
  expect(post.status).toBe(405);
});

it('answers 503 while Besu does not serve its metrics, says so once, and withdraws its series when stopped', async () => {
  await standin.stop();
  const besuUp = () =>
    fetch(`http://127.0.0.1:${besuPort}${METRICS.besuPath}`).then(
      () => true,
      () => false,
    );
  for (let i = 0; i < 50 && (await besuUp()); i++) await sleep(100);
  expect((await fetch(`http://127.0.0.1:${relayPort}${METRICS.besuPath}`)).status).toBe(503);
  for (let i = 0; i < 20 && !output.includes('Besu does not serve'); i++) await sleep(500);
  await sleep(3 * INTERVAL * 1000);
  expect(output.match(/Besu does not serve its metrics at/g)).toHaveLength(1);
  const exited = new Promise((resolve) => relay.on('exit', resolve));
  relay.kill('SIGTERM');
  await exited;
  expect(gateway.pushes[gateway.pushes.length - 1]).toMatchObject({ method: 'DELETE', path: JOB });
});

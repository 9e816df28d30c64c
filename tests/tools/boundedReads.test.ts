/**
 * Every read of `npm run node` from a machine, a pod or the network is bounded (core/catalog/answers.ts): a client or
 * a port that answers without end is stopped at its bound with one line saying so, and never fills the operator's
 * memory. The machine here is a stand-in ssh on PATH answering without end; the pod's RPC a local HTTP server.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import { ANSWER_LIMITS } from '../../core/catalog/answers';
import { fetchWithin } from '../../core/fetchWithin';
import { runClient, streamClient } from '../../cli/operations/process';
import { PROJECT_DIR } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(60_000);

const work = workFolder('lacchain-bounded-reads-');
const bin = path.join(work, 'bin');
fs.mkdirSync(bin);
// A machine where the node is deployed, and which answers every other command without end (20 MiB of 'a').
fs.writeFileSync(
  path.join(bin, 'ssh'),
  [
    '#!/bin/sh',
    'case "$*" in',
    '  *"systemctl cat"*) echo deployed ;;',
    "  *) head -c 20971520 /dev/zero | tr '\\0' a ;;",
    'esac',
    '',
  ].join('\n'),
  { mode: 0o755 },
);

/**
 * What `call` (an expression on `client`, the node's client of npm run node) gives, run in a Node of its own whose
 * PATH finds the stand-in ssh first: `{ error }` with its message when it fails.
 */
function withMachine(call: string): { value?: unknown; error?: string } {
  const script = `const { nodeClient } = require('./cli/operations/nodeClient');
const { layoutNode } = require('./testing/nodeLayout');
const { sshValidatorEntry } = require('./testing/fixtures');
const client = nodeClient(layoutNode({ inventory: sshValidatorEntry({ host: '127.0.0.1', start_timeout_seconds: 30 }).inventory }), { stack: 'testnet', configFile: 'Pulumi.testnet.yaml', ssh: { options: [] } });
Promise.resolve().then(() => ${call}).then(
  (value) => process.stdout.write(JSON.stringify({ value: value ?? null })),
  (error) => process.stdout.write(JSON.stringify({ error: error.message })),
).then(() => process.exit(0));`;
  const child = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
    cwd: PROJECT_DIR,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` },
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(child.stdout);
}

const ONE_LINE = /^[^\n]+$/;

describe('a client answering without end', () => {
  it('is stopped at the default bound, in one line, though nothing asked for a bound', async () => {
    const answer = runClient('sh', ['-c', 'head -c 20971520 /dev/zero; exit 0'], undefined, 30_000);
    await expect(answer).rejects.toThrow(`answered more than ${ANSWER_LIMITS.client} bytes`);
    await expect(answer).rejects.toThrow(ONE_LINE);
  });

  it('is stopped when it streams one line without end', async () => {
    const lines: string[] = [];
    const answer = streamClient(
      'sh',
      ['-c', 'head -c 20971520 /dev/zero; echo'],
      (line) => lines.push(line),
      (text) => text,
    );
    await expect(answer).rejects.toThrow(`answered more than ${ANSWER_LIMITS.line} bytes`);
    expect(lines).toEqual([]);
  });
});

describe("a machine's answers to npm run node are read within their own bounds", () => {
  it.each([
    ['the recorded enode', 'client.recordedEnode()', ANSWER_LIMITS.enode],
    ["a backup's recorded enode", "client.backups.recordedEnode({ id: 'abc' })", ANSWER_LIMITS.enode],
    ['an RPC answer', "client.rpc('net_enode', [])", ANSWER_LIMITS.rpc],
    ['the rollout record', 'client.rolloutState()', ANSWER_LIMITS.rolloutRecord],
  ])('%s: one line saying the bound', (_, call, limit) => {
    const { error } = withMachine(`client.reach().then(() => ${call})`);
    expect(error).toContain(`answered more than ${limit} bytes`);
    expect(error).toMatch(ONE_LINE);
  });
});

describe("an HTTP answer without end (the cluster's RPC, the genesis download)", () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    // 1 MiB every 10 ms: past the default bound within a second, and never more than about 500 MiB in the 5 s a read
    // is given (what a read without bound holds when its time is up).
    server = http.createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      const timer = setInterval(() => (response.destroyed ? clearInterval(timer) : response.write(chunk)), 10);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('is stopped at the default bound, not only at the time limit', async () => {
    const started = Date.now();
    await expect(fetchWithin(url, {}, 5_000)).rejects.toThrow(`passed ${ANSWER_LIMITS.http} bytes`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('is stopped at the bound a read gives', async () => {
    await expect(fetchWithin(url, {}, 5_000, fetch, 1024)).rejects.toThrow('passed 1024 bytes');
  });
});

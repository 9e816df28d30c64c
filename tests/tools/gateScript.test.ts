/**
 * A node's health gate in a rollout (scripts/remote/gate.sh, run as the command provider runs a step) against the
 * Besu stand-in on this machine's loopback (tests/fixtures/besu-standin, not Besu): it passes once the node answers
 * with its enode, has a peer, is not behind and its head advances (a validator: it proposes again), saying what it
 * saw; otherwise it fails when its time is up, with one line naming the node, what was checked, what it saw last, the
 * nodes left unchanged and the commands to continue or go back.
 */
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { gateRecordState } from '../../core/operations/rolloutState';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { gateParameters, GATE_SCRIPT } from '../../core/remote/gate';
import { stepCommand, stepInput, stepScript } from '../../core/remote/shell';
import { startBesuStandin, RunningStandin } from '../../testing/besuStandin';
import { KEY_ONE, loadTestnet, sshValidatorEntry, sshValidatorStack } from '../../testing/fixtures';
import type { SshNodeSettings } from '../../core/settings/model';

jest.setTimeout(60_000);

const P2P = { host: '190.51.100.7', port: 60606 };
const identity = deriveIdentity(KEY_ONE, P2P.host, P2P.port);
const ENODE = identity.enode;

/** The stack's validator (SSH), whose gate asks for its signer metrics; as a writer, whose gate does not. */
function nodeOf(typenode: 'validator' | 'writer'): SshNodeSettings {
  return loadTestnet(sshValidatorStack({ ...sshValidatorEntry(), typenode })).nodes[0] as SshNodeSettings;
}

let standin: RunningStandin;
let recordDir: string;
/** The gate's record (ROLLOUT_RECORD), in a folder of the test's own instead of the node home. */
const record = () => path.join(recordDir, 'rollout-gate');
const recorded = () => gateRecordState(fs.readFileSync(record(), 'utf8'), Date.now() / 1000);
beforeAll(async () => {
  standin = await startBesuStandin(KEY_ONE, P2P.host, P2P.port, undefined, undefined, ['ETH', 'NET', 'IBFT']);
  recordDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-gate-'));
});
afterAll(() => {
  fs.rmSync(recordDir, { recursive: true, force: true });
  return standin.stop();
});

/** The change digest the gates here are given. */
const CHANGE = 'c0ffee'.repeat(10) + 'abcd';
/** Where a curl on the gate's PATH writes the environment each call had (with curlEnvironments). */
const curlEnvironments = () => path.join(recordDir, 'curl-environments');

/**
 * Runs the gate of `node` against the stand-in, for at most `seconds`; with `curlEnvironments`, its curl records its
 * environment first (then runs the real one).
 */
function gate(
  node: SshNodeSettings,
  seconds: number,
  enode = ENODE,
  options: { curlEnvironments?: boolean; port?: string } = {},
) {
  const port = options.port ?? new URL(standin.rpcUrl).port;
  let pathVariable = process.env.PATH!;
  if (options.curlEnvironments) {
    const bin = path.join(recordDir, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    const curl = execFileSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).trim();
    fs.writeFileSync(
      path.join(bin, 'curl'),
      `#!/bin/sh
env >>${curlEnvironments()}
exec ${curl} "$@"
`,
      {
        mode: 0o755,
      },
    );
    pathVariable = `${bin}:${pathVariable}`;
  }
  const env = {
    ...gateParameters(node, {
      stack: 'testnet',
      nextNodes: ['bootnode', 'validator-2'],
      timeoutSeconds: seconds,
      enode,
      address: identity.address,
      change: CHANGE,
    }),
    RPC_PORT: port,
    ROLLOUT_RECORD: record(),
    PATH: pathVariable,
  };
  const input = stepInput('lacchain-besu-node: the health gate of node validator', env, stepScript(GATE_SCRIPT));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('sh', ['-c', stepCommand('root')]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() }));
    child.stdin.end(input);
  });
}

const HEALTHY = { peers: 3, blockAdvancing: true, syncing: false, proposing: true };
const STOPS =
  'The rollout stops here: bootnode, validator-2 not changed. Fix it (npm run node -- check --stack testnet --node validator), then run pulumi up again to continue from here; or go back (npm run node -- rollback --stack testnet --node validator, and set its release back)';

describe("a node's health gate", () => {
  it('passes a healthy validator once its head advances and it proposed a block since, saying what it saw', async () => {
    standin.setState(HEALTHY);
    const result = await gate(nodeOf('validator'), 30);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^gate: ok: node validator is healthy: its enode, 3 peers, head \d+ advancing, 0 blocks behind, proposed block \d+$/,
    );
    // The record npm run node -- status reads: done, with what it saw.
    expect(recorded()).toMatchObject({ state: 'done', seen: expect.stringMatching(/^its enode, 3 peers, head \d+/) });
    expect(fs.statSync(record()).mode & 0o777).toBe(0o644);
  });

  it('writes its change digest (a function of the secrets) nowhere, and gives it to no command it runs', async () => {
    standin.setState(HEALTHY);
    const result = await gate(nodeOf('validator'), 30, ENODE, { curlEnvironments: true });
    expect(result.code).toBe(0);
    expect(fs.readFileSync(record(), 'utf8')).not.toContain(CHANGE);
    const environments = fs.readFileSync(curlEnvironments(), 'utf8');
    expect(environments).toContain('RPC_PORT=');
    expect(environments).not.toContain(CHANGE);
  });

  it('records that it waits while it waits, with what it sees, for npm run node -- status', async () => {
    standin.setState({ ...HEALTHY, peers: 0 });
    const running = gate(nodeOf('writer'), 6);
    let waiting: ReturnType<typeof recorded> | undefined;
    for (
      let i = 0;
      i < 40 && waiting?.seen !== 'it has no peer (is it permissioned? npm run node -- check says why)';
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      waiting = fs.existsSync(record()) ? recorded() : undefined;
    }
    expect(waiting).toMatchObject({ state: 'changing', seen: expect.stringContaining('it has no peer') });
    const result = await running;
    expect(result.code).toBe(1);
    expect(recorded()).toMatchObject({ state: 'stopped', seen: expect.stringContaining('it has no peer') });
  });

  it('passes a healthy writer without asking for blocks it proposed', async () => {
    standin.setState({ ...HEALTHY, proposing: false });
    const result = await gate(nodeOf('writer'), 30);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^gate: ok: node validator is healthy: its enode, 3 peers, head \d+ advancing, 0 blocks behind$/,
    );
  });

  it.each([
    ['a node without a peer', { ...HEALTHY, peers: 0 }, ENODE, 'it has no peer'],
    [
      'a node far behind',
      { ...HEALTHY, syncing: true, blocksBehind: 100 },
      ENODE,
      'it is 100 blocks behind the best block it knows (at most 2)',
    ],
    [
      'a node whose head stands still',
      { ...HEALTHY, blockAdvancing: false },
      ENODE,
      'its head has not advanced from block',
    ],
    [
      'a validator that proposes no block',
      { ...HEALTHY, proposing: false },
      ENODE,
      'it has proposed no block since block',
    ],
    [
      'a node answering another enode',
      HEALTHY,
      ENODE.replace(/^enode:\/\/./, 'enode://f'),
      'it answers net_enode with enode://',
    ],
  ])('stops the rollout at %s, saying what it saw and how to go on', async (_what, state, enode, seen) => {
    standin.setState(state);
    const result = await gate(nodeOf('validator'), 4, enode);
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      'gate: node validator is not healthy after 4 s (checked: its enode, a peer, at most 2 blocks behind, its head advancing, a block proposed): ',
    );
    expect(lines[0]).toContain(seen);
    expect(lines[0]).toContain(STOPS);
  });
});

describe('a health gate answered by another program on the RPC port (any local user, while Besu restarts)', () => {
  let server: http.Server;
  let port: string;
  /** What the program answers to every request. */
  let answer = '';
  beforeAll(async () => {
    server = http.createServer((_, response) => response.end(answer));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = String((server.address() as AddressInfo).port);
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const failsWith = async (seen: string | RegExp) => {
    const result = await gate(nodeOf('validator'), 3, ENODE, { port });
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^gate: node validator is not healthy after 3 s/);
    expect(lines[0]).toMatch(seen);
    expect(lines[0]).toContain(STOPS);
    // Nothing it answered reaches the output raw, nor adds a line to the record npm run node -- status reads.
    expect(result.stdout + result.stderr).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
    const text = fs.readFileSync(record(), 'utf8');
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((line) => line.split('=')[0]),
    ).toEqual(['state', 'since', 'until', 'seen']);
    expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
    expect(recorded()).toMatchObject({ state: 'stopped' });
  };

  it('an empty quantity ("0x"): fails with its message, never silently', async () => {
    answer = '{"jsonrpc":"2.0","id":1,"result":"0x"}';
    await failsWith('it did not answer on 127.0.0.1');
  });

  it('an answer of several lines: refused, and no line of it in the record', async () => {
    answer = ['{"jsonrpc":"2.0","id":1,"result":"0x10"}', '{"result":"state=passed"}', '{"result":"since=1"}'].join(
      '\n',
    );
    await failsWith(new RegExp(`127\\.0\\.0\\.1:${port} gave an answer of more than one line to net_`));
  });

  it('an answer with control characters: refused, none of them shown', async () => {
    answer = '{"jsonrpc":"2.0","id":1,"result":"enode://\u001b]0;owned\u0007\u001b[2J"}';
    await failsWith('gave an answer with control characters to net_enode');
  });

  it('an enode of another shape: said, not shown', async () => {
    answer = '{"jsonrpc":"2.0","id":1,"result":"0x10"}';
    await failsWith('it answers net_enode with something that is not an enode');
  });
});

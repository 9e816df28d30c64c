/**
 * A plain peer of a test network: the Besu stand-in's p2p program (tests/fixtures/besu-standin/p2p, go-ethereum's
 * p2p package: RLPx and discovery v4) run alone on this machine, keeping every connection (`--allow-all`). It stands
 * for the network's nodes a node under test reaches: the node dials it (a static node) or it dials the node, over the
 * test's own network, and the node's own permissioning decides (the peer's enode registered in the node's contract).
 */
import { spawn, spawnSync } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { deriveIdentity } from '../core/identity/nodeKey';
import { PROJECT_DIR } from './run';

/** How long the p2p program may take to listen. */
const LISTEN_MS = 10_000;

/** A running plain peer. */
export interface PlainPeer {
  /** Its enode: its address on the test network and its port. */
  enode: string;
  /** What its p2p layer said so far, one JSON line each (`up`, `down` with the connections' addresses). */
  events(): Record<string, unknown>[];
  stop(): void;
}

/** The stand-in's p2p program (built by tests/setup.sh: tests/fixtures/besu-standin/p2p/build.sh). */
export function p2pProgram(): string {
  const found = spawnSync('bash', [path.join(PROJECT_DIR, 'tests/fixtures/besu-standin/p2p/build.sh'), '--check'], {
    encoding: 'utf8',
  });
  if (found.status !== 0) throw new Error(found.stderr.trim());
  return found.stdout.trim();
}

/**
 * Starts a plain peer listening on `ip`:`port` (TCP, and UDP with discovery), dialing `dials` (enodes) as static
 * nodes, accepting and dialing only `netrestrict` (CIDRs), in the network namespace `namespace` when given (a machine
 * outside a test cluster: testing/cluster/workerLan.ts); resolves once it listens.
 */
export async function startPlainPeer(
  ip: string,
  port: number,
  options: { dials?: readonly string[]; netrestrict: string; key?: string; namespace?: string },
): Promise<PlainPeer> {
  const key = options.key ?? randomBytes(32).toString('hex');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-peer-'));
  fs.writeFileSync(path.join(work, 'key'), key, { mode: 0o600 });
  const events = path.join(work, 'events');
  const out = fs.openSync(events, 'w');
  const [command, ...inNamespace] = options.namespace
    ? ['/usr/sbin/ip', 'netns', 'exec', options.namespace, p2pProgram()]
    : [p2pProgram()];
  const child = spawn(
    command,
    [
      ...inNamespace,
      `--key=${path.join(work, 'key')}`,
      `--listen=${ip}:${port}`,
      `--host=${ip}`,
      `--port=${port}`,
      '--allow-all',
      `--netrestrict=${options.netrestrict}`,
      `--static=${(options.dials ?? []).join(',')}`,
    ],
    { stdio: ['ignore', out, 'ignore'] },
  );
  fs.closeSync(out);
  const stop = () => {
    child.kill('SIGTERM');
    fs.rmSync(work, { recursive: true, force: true });
  };
  const deadline = Date.now() + LISTEN_MS;
  while (!fs.readFileSync(events, 'utf8').includes('"listening"')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const said = fs.readFileSync(events, 'utf8');
      stop();
      throw new Error(`the plain peer on ${ip}:${port} did not start: ${said.trim() || 'no word'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const said = () =>
    fs
      .readFileSync(events, 'utf8')
      .split('\n')
      .filter((line) => line.endsWith('}'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { enode: deriveIdentity(key, ip, port).enode, events: said, stop };
}

/**
 * The Besu stand-in (tests/fixtures/besu-standin, a test fixture, not Besu) run on this machine's loopback with a
 * node key and p2p address: a JSON-RPC endpoint answering as that node would (net_enode, net_peerCount, ...), for the
 * day-2 checks given as `--rpc-url`, as an operator gives a port-forward. Its peers are real: its p2p layer listens on
 * a loopback address of its own at the enode's port, and plain peers (the stand-in's p2p program alone) dial it.
 * Asked, the enode's own address forwards to it, as a node's static IP does (enodeAddressForward).
 */
import { ChildProcess, execFileSync, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { deriveIdentity } from '../core/identity/nodeKey';
import { p2pProgram } from './networkPeer';
import { freePort } from './ports';
import { PROJECT_DIR } from './run';
import { keepTestPublicNetworkHere } from './testNetworks';

/** How long real peers may take to connect (a dial, the RLPx handshake, the permissioning's answer). */
const PEERS_MS = 30_000;
/** The plain peers a stand-in may be given (setPeers), their identities fixed at its start (to register them). */
const PLAIN_PEERS = 3;

/** How long the stand-in may take to answer its first call (a busy test machine starts Python slowly). */
const STANDIN_START_MS = 60_000;
/** How long a stopping stand-in or peer gets after SIGTERM before SIGKILL. */
const STOP_MS = 5_000;

/** Sends SIGTERM and resolves once the process ended (SIGKILL after `ms`). */
function ended(running: ChildProcess, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const kill = setTimeout(() => running.kill('SIGKILL'), ms);
    running.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    running.kill('SIGTERM');
  });
}

/** A running stand-in. */
export interface RunningStandin {
  rpcUrl: string;
  /** Steers the simulated chain (blockAdvancing, syncing, blocksBehind, proposing): the stand-in's state file. */
  setState(state: Record<string, number | boolean>): void;
  /** The node's enode at the address its p2p layer listens on here (a loopback address of its own). */
  reachableEnode: string;
  /** The enodes of the plain peers setPeers starts (on 127.0.0.1), to register them in the contract. */
  peerEnodes: readonly string[];
  /**
   * Real peers: `count` plain peers dialing the node afresh (the first `count` of peerEnodes; the others stopped), then
   * waits until net_peerCount says `expected` (`count` unless given: the node keeps them when registered, if
   * permissioning is on); with `expected` null, does not wait.
   */
  setPeers(count: number, expected?: number | null): Promise<void>;
  /** Waits until net_peerCount says `count` (the node drops a peer the contract stops allowing at its next block). */
  waitForPeers(count: number): Promise<void>;
  /** The simulated chain's head. */
  head(): Promise<number>;
  /** What the node-permissioning contract holds: these enodes, each from its block on (the stand-in's registry file). */
  register(nodes: readonly { enode: string; fromBlock?: number }[]): void;
  /** Stops the node and its peers, waits for them to end (a few seconds at most), and removes the node's folder. */
  stop(): Promise<void>;
}

/** The node-permissioning contract the stand-in answers for, with the node's bootnodes (as a node of a network has). */
export interface StandinPermissioning {
  contract: string;
  bootnodes: readonly string[];
}

/** nftables' nft. */
const NFT = '/usr/sbin/nft';

/**
 * The enode's own address forwarded to the stand-in's p2p layer, as a node's static IP forwards to it (a cloud's load
 * balancer, a machine's NAT): the enode's address is one of the test stacks' public addresses, kept on this machine
 * (testing/testNetworks.ts), and an nftables table of the stand-in's own DNATs what this machine sends to its p2p port,
 * TCP and UDP, to the loopback address the p2p layer listens on. So what probes the enode's address from here (check's
 * 60606 TCP and UDP) reaches the node's real p2p layer, never another machine; the plain peers still dial the loopback
 * address (go-ethereum takes one inbound connection a 30 s from a public address). One stand-in per enode address:
 * the table is named by it and replaces a table a killed run left. Gives the function that removes it.
 */
function enodeAddressForward(host: string, port: number, to: string): () => void {
  keepTestPublicNetworkHere();
  const table = `lacchain_enode_${host.replace(/\./g, '_')}_${port}`;
  const rules = ['tcp', 'udp'].map(
    (protocol) => `    ip daddr ${host} ${protocol} dport ${port} dnat to ${to}:${port}`,
  );
  const script = [
    `table ip ${table} {}`,
    `delete table ip ${table}`,
    `table ip ${table} {`,
    '  chain output {',
    '    type nat hook output priority -100; policy accept;',
    ...rules,
    '  }',
    '}',
  ].join('\n');
  execFileSync(NFT, ['-f', '-'], { input: script, stdio: ['pipe', 'ignore', 'pipe'] });
  return () => execFileSync(NFT, ['delete', 'table', 'ip', table], { stdio: 'ignore' });
}

/** Writes a file the stand-in re-reads, whole at once. */
function replaceFile(file: string, content: string): void {
  fs.writeFileSync(`${file}.tmp`, content);
  fs.renameSync(`${file}.tmp`, file);
}

/**
 * Starts the stand-in with `key`, advertising `p2pHost:p2pPort`, and waits until its RPC answers. With `permissioning`,
 * it checks connections with the contract as the networks' nodes do: it has peers only once registered. With
 * `metricsPort`, it serves Besu's metrics on that loopback port; `rpcApis`, the API groups its RPC serves. With
 * `forwardEnodeAddress`, its discovery is on and the enode's own address forwards to its p2p layer
 * (enodeAddressForward), so check's probes of the enode's address find the node's port open.
 */
export async function startBesuStandin(
  key: string,
  p2pHost: string,
  p2pPort: number,
  permissioning?: StandinPermissioning,
  metricsPort?: number,
  rpcApis: readonly string[] = ['ETH', 'NET', 'WEB3'],
  forwardEnodeAddress = false,
): Promise<RunningStandin> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-standin-'));
  const port = await freePort();
  // The p2p layer listens at the enode's port on a loopback address of its own (the enode's host is elsewhere: a pod,
  // a machine), so stand-ins of tests side by side, all at the same enode port, do not collide.
  const p2pInterface = `127.${1 + (randomBytes(1)[0] % 250)}.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0] % 250)}`;
  const data = path.join(work, 'data');
  fs.mkdirSync(data);
  fs.writeFileSync(path.join(data, 'key'), key);
  const target = deriveIdentity(key, p2pInterface, p2pPort).enode;
  const peers = await Promise.all(
    Array.from({ length: PLAIN_PEERS }, async (_, i) => {
      const peerKey = randomBytes(32).toString('hex');
      const peerPort = await freePort();
      const keyFile = path.join(work, `peer-${i}.key`);
      fs.writeFileSync(keyFile, peerKey);
      return {
        enode: deriveIdentity(peerKey, '127.0.0.1', peerPort).enode,
        args: [`--key=${keyFile}`, `--listen=127.0.0.1:${peerPort}`, `--port=${peerPort}`, '--discovery=false'],
        process: undefined as ChildProcess | undefined,
      };
    }),
  );
  fs.writeFileSync(
    path.join(work, 'config.toml'),
    [
      `data-path = "${data}"`,
      `p2p-host = "${p2pHost}"`,
      `p2p-port = ${p2pPort}`,
      'rpc-http-enabled = true',
      'rpc-http-host = "127.0.0.1"',
      `rpc-http-port = ${port}`,
      `rpc-http-api = [${rpcApis.map((api) => JSON.stringify(api)).join(', ')}]`,
      `p2p-interface = "${p2pInterface}"`,
      // Discovery's UDP port open where the enode's address forwards to (its bootnodes outside loopback never pinged).
      `discovery-enabled = ${forwardEnodeAddress}`,
      ...(metricsPort ? ['metrics-enabled = true', 'metrics-host = "127.0.0.1"', `metrics-port = ${metricsPort}`] : []),
      ...(permissioning
        ? [
            'permissions-nodes-contract-enabled = true',
            `permissions-nodes-contract-address = "${permissioning.contract}"`,
            // The plain peers stand for the network's bootnodes this machine reaches (a node still syncing takes
            // only its bootnodes as peers); the network's own are never dialed (the p2p layer dials only loopback).
            `bootnodes = [${[...permissioning.bootnodes, ...peers.map((peer) => peer.enode)]
              .map((b) => JSON.stringify(b))
              .join(', ')}]`,
          ]
        : []),
    ].join('\n'),
  );
  // Its log goes to a file: a pipe nobody reads fills up after some minutes of block imports, and the stand-in, blocked
  // writing its next line, would stop answering.
  const logFile = path.join(work, 'standin.log');
  const log = fs.openSync(logFile, 'a');
  const child: ChildProcess = spawn(
    'python3',
    [
      path.join(PROJECT_DIR, 'tests/fixtures/besu-standin/lib/besu_standin.py'),
      `--config-file=${path.join(work, 'config.toml')}`,
    ],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  const rpcUrl = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + STANDIN_START_MS;
  for (;;) {
    const up = await fetch(rpcUrl, {
      method: 'POST',
      body: '{"jsonrpc":"2.0","method":"net_enode","params":[],"id":1}',
    })
      .then(() => true)
      .catch(() => false);
    if (up) break;
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      const tail = fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-5).join('\n');
      fs.rmSync(work, { recursive: true, force: true });
      const why = Date.now() > deadline ? `did not answer within ${STANDIN_START_MS / 1000} s` : 'exited';
      throw new Error(`the Besu stand-in at ${rpcUrl} ${why}; its log ends:\n${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const unforward = forwardEnodeAddress ? enodeAddressForward(p2pHost, p2pPort, p2pInterface) : () => undefined;
  const rpc = async (method: string) => {
    const answer = await fetch(rpcUrl, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', method, params: [], id: 1 }),
    });
    return ((await answer.json()) as { result: string }).result;
  };
  const stopPeers = () => peers.forEach((peer) => peer.process?.kill('SIGTERM'));
  const waitForPeers = async (count: number) => {
    const deadline = Date.now() + PEERS_MS;
    let seen = Number.parseInt(await rpc('net_peerCount'), 16);
    while (seen !== count && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      seen = Number.parseInt(await rpc('net_peerCount'), 16);
    }
    if (seen !== count) {
      throw new Error(`the Besu stand-in has ${seen} peers, not ${count}, after ${PEERS_MS / 1000} s (registered?)`);
    }
  };
  return {
    rpcUrl,
    reachableEnode: target,
    peerEnodes: peers.map((peer) => peer.enode),
    setPeers: async (count, expected = count) => {
      // Afresh: a peer refused once waits half a minute before it dials the same node again (go-ethereum's dialer).
      stopPeers();
      for (const [i, peer] of peers.entries()) {
        peer.process =
          i < count
            ? spawn(p2pProgram(), [...peer.args, '--allow-all', `--static=${target}`], { stdio: 'ignore' })
            : undefined;
      }
      if (expected !== null) await waitForPeers(expected);
    },
    waitForPeers,
    head: async () => Number.parseInt(await rpc('eth_blockNumber'), 16),
    setState: (state) => replaceFile(path.join(data, 'standin-state.json'), JSON.stringify(state)),
    register: (nodes) => replaceFile(path.join(data, 'standin-permissioning.json'), JSON.stringify({ nodes })),
    stop: async () => {
      const running = [child, ...peers.map((peer) => peer.process)].filter(
        (one): one is ChildProcess => one !== undefined && one.exitCode === null && one.signalCode === null,
      );
      // Ended before the folder goes: a node still stopping writes into it (ENOTEMPTY in a fresh clone's run).
      await Promise.all(running.map((one) => ended(one, STOP_MS)));
      unforward();
      fs.rmSync(work, { recursive: true, force: true, maxRetries: 10 });
    },
  };
}

/** A line of Besu's log saying it imported a block `secondsAgo` seconds ago (what the health check reads). */
export function besuImportLine(secondsAgo: number): string {
  const time = new Date(Date.now() - secondsAgo * 1000).toISOString().replace('T', ' ').replace('Z', '+00:00');
  return `${time} | EthScheduler-Workers-0 | INFO  | PersistBlockTask | Imported #42 / 0 tx / 0 om / 0 (0.0%) gas / (0xab) in 0.001s. Peers: 3`;
}

/**
 * A stack of three SSH nodes on real test hosts for rollouts (tests/e2e/rollout.test.ts, `npm run bench -- --only
 * rollout`): a writer, a bootnode and a validator of open-protestnet, each on a Debian 12 host of its own (real systemd
 * and sshd, the Besu stand-in, not Besu), its `pulumi up` replayed as the engine runs it (testing/engineReplay.ts),
 * and what the tests and the bench read on the machines: releases, the services' stopped intervals, `npm run node --
 * status --all`, the gate's record.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { recordProgram } from './pulumi';
import { declareProgram, Declared } from './program';
import { startTestHost, TestHost } from './host/testHost';
import type { FileServer } from './host/fileServer';
import { packagesInstalledDisk } from './host/packagesDisk';
import { packStandinReleases, startReleaseServer } from './standinReleases';
import { sshNodeStack } from './sshStacks';
import { changedCommands, remoteCommands, RemoteStep } from './replay';
import { EngineOptions, EngineReplay, runAsEngine } from './engineReplay';
import { DEFAULT_NODE_HOME } from '../core/catalog/defaults';
import { infoLogPath, NODE_HOME_LAYOUT } from '../core/catalog/remote';
import { deriveIdentity } from '../core/identity/nodeKey';
import { permissioned, registerOnHost } from './permissioning';
import { PORTS } from '../core/catalog/ports';
import { nodeTool, operatorStackFile } from './nodeTool';

/** The rollout's order, each node on a host of its own (name, host, index). */
export const ROLLOUT_NODES = [
  { name: 'writer', typenode: 'writer', host: 'roll-w', index: 71 },
  { name: 'bootnode', typenode: 'bootnode', host: 'roll-b', index: 72 },
  { name: 'validator', typenode: 'validator', host: 'roll-v', index: 73 },
] as const;
/** The Besu service on each machine. */
const SERVICE = 'besu';
/** The nodes' keys. */
const KEYS: Record<string, string> = {
  writer: `0x${'0'.repeat(62)}71`,
  bootnode: `0x${'0'.repeat(62)}72`,
  validator: `0x${'0'.repeat(62)}73`,
};
/** The shortest gate a stack may set: a node that is not healthy in it stops the rollout. */
export const GATE_SECONDS = 60;

/** Each node's release, by node name. */
export type Versions = Record<string, string>;

/** A service's stop: from systemd's `Stopping` to the next `Started` (ms since the epoch; Infinity: not started). */
export type StoppedInterval = [number, number];

/** The three nodes' lab. */
export class RolloutLab {
  private readonly recorded = recordProgram();
  readonly hosts: TestHost[] = [];
  private readonly servers: FileServer[] = [];
  /** What each command last ran with successfully: the state the next `pulumi up` is compared with. */
  private readonly applied = new Map<string, RemoteStep>();

  private constructor(readonly work: string) {}

  /** Boots the three hosts (from the packages-installed disk) with a release server each, for `releases`. */
  static async open(releases: string[]): Promise<RolloutLab> {
    const lab = new RolloutLab(fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-rollout-')));
    try {
      await packStandinReleases(releases, lab.work);
      const base = await packagesInstalledDisk();
      for (const node of ROLLOUT_NODES) {
        const host = await startTestHost(node.host, node.index, { base });
        lab.hosts.push(host);
        lab.servers.push(await startReleaseServer(host, lab.work));
      }
      // One login key for the stack (lacchain:sshPrivateKey): the first host's, authorised on the others too.
      const publicKey = (await lab.on(0, 'cat /root/.ssh/authorized_keys')).trim();
      for (const i of [1, 2]) {
        const sudoUser = lab.hosts[i].sudoUser;
        await lab.on(i, `tee -a /root/.ssh/authorized_keys >>/home/${sudoUser}/.ssh/authorized_keys`, `${publicKey}\n`);
      }
      await lab.connectHosts();
      return lab;
    } catch (error) {
      await lab.close();
      throw error;
    }
  }

  /**
   * The three machines reach each other, as a network's nodes do: each routes the others' addresses through this
   * machine, which forwards between the lab's own veths only (IPv4 forwarding of those interfaces; the machine's
   * `ip_forward` is left alone, and the setting goes with the veths at the hosts' stop).
   */
  private async connectHosts(): Promise<void> {
    for (const host of this.hosts) {
      const forwarding = `/proc/sys/net/ipv4/conf/lct-${host.name}/forwarding`;
      fs.writeFileSync(forwarding, '1\n');
    }
    for (const [i, host] of this.hosts.entries()) {
      const routes = this.hosts
        .filter((other) => other !== host)
        .map((other) => `ip route replace ${other.ip}/32 via ${host.gateway}`);
      await this.on(i, routes.join(' && '));
    }
  }

  /** The enode of each node of the lab (its key, its host's address, the p2p port). */
  enodeOf(node: number): string {
    return deriveIdentity(KEYS[ROLLOUT_NODES[node].name], this.hosts[node].ip, PORTS.p2p).enode;
  }

  /**
   * The lab's nodes node `node` is connected to now, each as `<enode> from <address:port>` (the address the connection
   * came from or went to), from the real connections: its peer count (net_peerCount) and, for each lab node, the
   * stand-in's last word on it in its info log (`Peer connected: <enode> from <address>` or `Peer disconnected`).
   */
  async labPeersOf(node: number): Promise<{ count: number; peers: string[] }> {
    const count = Number.parseInt(
      JSON.parse(
        await this.on(
          node,
          `curl -s -H 'Host: localhost' -H 'Content-Type: application/json' --data '{"jsonrpc":"2.0","method":"net_peerCount","params":[],"id":1}' http://127.0.0.1:${PORTS.rpcHttp}/`,
        ),
      ).result,
      16,
    );
    const log = await this.on(node, `grep -h 'EthPeers' ${infoLogPath(DEFAULT_NODE_HOME, SERVICE)} || true`);
    const peers: string[] = [];
    for (const [i] of ROLLOUT_NODES.entries()) {
      if (i === node) continue;
      const id = this.enodeOf(i).split('@')[0].slice('enode://'.length);
      const last = log
        .split('\n')
        .filter((line) => line.includes(id) || line.includes(`0x${id.slice(0, 16)}`))
        .pop();
      const connected = last?.match(/Peer connected: (\S+) from (\S+)/);
      if (connected) peers.push(`${connected[1]} from ${connected[2]}`);
    }
    return { count, peers };
  }

  /** Stops what `open` started, whatever of it did start. */
  async close(): Promise<void> {
    for (const server of this.servers) await server.close();
    for (const host of this.hosts) await host.stop();
    fs.rmSync(this.work, { recursive: true, force: true });
  }

  /** The stack: the three nodes on their hosts at `versions`, with the first host's login key on every host. */
  stack(versions: Versions, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const entries = ROLLOUT_NODES.map((node, i) => {
      const single = sshNodeStack(this.hosts[i], {
        version: versions[node.name],
        releaseBaseUrl: this.servers[i].url,
        releaseDir: this.work,
        nodeName: `org-${node.name}`,
        dnsName: `${node.name}.example.org`,
        node: node.name,
        typenode: node.typenode,
        network: 'open-protestnet',
      });
      return (single['lacchain:nodes'] as unknown[])[0];
    });
    return {
      'lacchain:network': 'open-protestnet',
      'lacchain:nodes': entries,
      'lacchain:sshPrivateKey': this.hosts[0].privateKey,
      'lacchain:companions': {
        relaySigner: { enabled: false },
        rotationValidator: { enabled: false },
        ethstats: { enabled: false },
      },
      'lacchain:nodeKeys': KEYS,
      'lacchain:rollout': { gateTimeoutSeconds: GATE_SECONDS },
      ...extra,
    };
  }

  /**
   * `pulumi up` of the stack at `versions` (and `extra` settings), replayed as the engine runs it (`options`: a cut, or
   * the change as before the rollout); what succeeded becomes the state.
   */
  async up(
    versions: Versions,
    extra: Record<string, unknown> = {},
    options: EngineOptions = {},
  ): Promise<{ declared: Declared; replay: EngineReplay }> {
    const declared = await declareProgram(this.recorded, 'testnet', this.stack(versions, extra), {});
    const declaredSteps = remoteCommands(declared);
    const steps = changedCommands([...this.applied.values()], declaredSteps);
    const replay = await runAsEngine(declared, steps, this.hosts, options);
    for (const run of replay.runs) {
      if (run.code === 0)
        this.applied.set(
          run.name,
          declaredSteps.find((s) => s.name === run.name)!,
        );
    }
    return { declared, replay };
  }

  /**
   * The network permissions each node (the stand-in's contract), with its host's network peer (a real peer it dials,
   * testing/host/testHost.ts): they get that peer.
   */
  async permissionEveryNode(): Promise<void> {
    for (const i of ROLLOUT_NODES.keys()) await this.permission(i, true);
  }

  /**
   * The network permissions node `node` (with the lab's other nodes and its host's network peer) or no longer does: it
   * drops its peers at its next block and is refused after, as a node the network took out of its contract.
   */
  async permission(node: number, permitted: boolean): Promise<void> {
    const { typenode } = ROLLOUT_NODES[node];
    const enode = this.enodeOf(node);
    const others = ROLLOUT_NODES.map((_, i) => this.enodeOf(i)).filter((each) => each !== enode);
    const registered = permissioned(enode, 'open-protestnet', typenode, [...others, this.hosts[node].networkPeer]);
    await registerOnHost(
      this.hosts[node],
      `${DEFAULT_NODE_HOME}/data`,
      permitted ? registered : registered.filter((each) => each.enode !== enode),
    );
  }

  /** Runs a root command on a node's host (with `input`); its standard output. */
  async on(node: number, command: string, input?: string): Promise<string> {
    const result = await this.hosts[node].ssh(command, input === undefined ? {} : { input });
    if (result.code !== 0) throw new Error(`${ROLLOUT_NODES[node].host}: ${command}: ${result.stderr}`);
    return result.stdout;
  }

  /** The release a node runs. */
  async releaseOf(node: number): Promise<string> {
    return path.basename((await this.on(node, `readlink ${DEFAULT_NODE_HOME}/releases/current`)).trim());
  }

  /** Its service's state and main process, as `systemctl` says them. */
  serviceOf(node: number): Promise<string> {
    return this.on(node, `systemctl is-active ${SERVICE}; systemctl show -p MainPID --value ${SERVICE}`);
  }

  /**
   * A node's service's stopped intervals since `since` (ms), from its journal: from the first sign that its process
   * is going or gone (systemd's Stopping, Main process exited, Failed with result, Scheduled restart job, Stopped: a
   * stop asked for, a crash or a kill, and systemd's restart of it) to the next Started; and a new start of the unit
   * (another invocation id) that none of those came before counts from the entry before it.
   */
  async stoppedIntervals(node: number, since: number): Promise<StoppedInterval[]> {
    const lines = (
      await this.on(node, `journalctl -u ${SERVICE} -o json --since @${Math.floor(since / 1000)} --no-pager`)
    )
      .split('\n')
      .filter(Boolean)
      .map(
        (line) =>
          JSON.parse(line) as {
            MESSAGE: string;
            __REALTIME_TIMESTAMP: string;
            INVOCATION_ID?: string;
            _SYSTEMD_INVOCATION_ID?: string;
          },
      );
    return stoppedIntervalsOf(
      lines.map((entry) => ({
        at: Number(entry.__REALTIME_TIMESTAMP) / 1000,
        message: typeof entry.MESSAGE === 'string' ? entry.MESSAGE : '',
        invocation: entry.INVOCATION_ID ?? entry._SYSTEMD_INVOCATION_ID,
      })),
    );
  }

  /** A node's service's main process now (systemd's MainPID; 0 when it runs none). */
  async mainPid(node: number): Promise<number> {
    return Number((await this.on(node, `systemctl show -p MainPID --value ${SERVICE}`)).trim());
  }

  /** Every node's main process now, in the nodes' order. */
  everyMainPid(): Promise<number[]> {
    return Promise.all(ROLLOUT_NODES.map((_, i) => this.mainPid(i)));
  }

  /** Every node's stopped intervals since `since`, in the nodes' order. */
  everyStop(since: number): Promise<StoppedInterval[][]> {
    return Promise.all(ROLLOUT_NODES.map((_, i) => this.stoppedIntervals(i, since)));
  }

  /** `npm run node -- status --all` of the stack at `versions` (and `extra`), as the operator runs it. */
  async statusAll(versions: Versions, extra: Record<string, unknown> = {}): Promise<string> {
    // The operator's copy of the stack file: its node keys are pulumi up's only (the operations never read them).
    const config = this.stack(versions, extra);
    delete config['lacchain:nodeKeys'];
    const result = await nodeTool(operatorStackFile(this.work, config), this.hosts[0].privateKeyFile)(
      'status',
      '--all',
    );
    // 0: every node healthy; 1: one is not (the one the rollout is at). Anything else is the tool's own failure.
    if (result.code !== 0 && result.code !== 1) throw new Error(`status --all exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  }

  /** Waits until the gate record of node `node` says `state` (scripts/remote/gate.sh), for at most `seconds`. */
  async gateSays(node: number, state: string, seconds = 120): Promise<void> {
    const deadline = Date.now() + seconds * 1000;
    while ((await this.hosts[node].ssh(`grep -qx state=${state} ${gateRecord()}`)).code !== 0) {
      if (Date.now() > deadline) throw new Error(`${ROLLOUT_NODES[node].host}: the gate record never said ${state}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** The gate's record on a machine (scripts/remote/gate.sh). */
export function gateRecord(): string {
  return `${DEFAULT_NODE_HOME}/${NODE_HOME_LAYOUT.rolloutRecord}`;
}

/** A message of systemd's that a unit's process is going or gone (asked to stop, crashed, killed, restarted). */
const GOING = [/^Stopping /, /: Main process exited/, /: Failed with result/, /: Scheduled restart job/, /^Stopped /];

/**
 * The stopped intervals of a unit's journal entries (its messages, their times in ms and invocation ids): from the
 * first GOING message to the next `Started`; a new invocation no GOING message came before counts from the entry
 * before it (a start systemd said nothing about stopping for). One that never started again ends at Infinity.
 */
export function stoppedIntervalsOf(
  entries: ReadonlyArray<{ at: number; message: string; invocation?: string }>,
): StoppedInterval[] {
  const intervals: StoppedInterval[] = [];
  let stopping: number | undefined;
  let invocation: string | undefined;
  let previous: number | undefined;
  for (const entry of entries) {
    if (GOING.some((message) => message.test(entry.message)) && stopping === undefined) stopping = entry.at;
    const started = /^Started /.test(entry.message);
    const another = entry.invocation !== undefined && invocation !== undefined && entry.invocation !== invocation;
    if (another && stopping === undefined && previous !== undefined) stopping = previous;
    if ((started || another) && stopping !== undefined) {
      intervals.push([stopping, entry.at]);
      stopping = undefined;
    }
    if (entry.invocation !== undefined) invocation = entry.invocation;
    previous = entry.at;
  }
  if (stopping !== undefined) intervals.push([stopping, Infinity]);
  return intervals;
}

/** The longest stop, in seconds, and the most nodes stopped at one moment, of every node's stopped intervals. */
export function downTimes(stops: StoppedInterval[][]): { longestSeconds: number; mostAtOnce: number } {
  const all = stops.flat();
  const longestSeconds = Math.max(0, ...all.map(([begin, end]) => (end - begin) / 1000));
  // At each stop's beginning, how many nodes are stopped (an interval includes its ends).
  const mostAtOnce = Math.max(
    0,
    ...all.map(([moment]) => stops.filter((node) => node.some(([b, e]) => b <= moment && moment <= e)).length),
  );
  return { longestSeconds, mostAtOnce };
}

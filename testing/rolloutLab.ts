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
import { NODE_HOME_LAYOUT } from '../core/catalog/remote';
import { deriveIdentity } from '../core/identity/nodeKey';
import { permissioned, registerOnHost } from './permissioning';
import { PORTS } from '../core/catalog/ports';
import { nodeTool, operatorStackFile } from './nodeTool';
import { NODE_TYPE_FACTS } from '../core/catalog/nodeTypes';
import { settle } from '../tools/recording/engine';

/** A node of the lab on a test host of its own: its name and type in the stack, its host's name and index. */
export interface LabNode {
  name: string;
  typenode: 'writer' | 'bootnode' | 'validator';
  host: string;
  index: number;
}

/** The rollout's order, each node on a host of its own (name, host, index). */
export const ROLLOUT_NODES: readonly LabNode[] = [
  { name: 'writer', typenode: 'writer', host: 'roll-w', index: 71 },
  { name: 'bootnode', typenode: 'bootnode', host: 'roll-b', index: 72 },
  { name: 'validator', typenode: 'validator', host: 'roll-v', index: 73 },
];
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

/**
 * What the network's contract holds, as a node's registry is written: each lab node's enode (by default its key at its
 * machine's address), and the node's network peer unless `withoutNetworkPeer` (a plain peer keeps every connection,
 * so a test of why a node has no peers takes it out: only the lab's nodes, which ask their contracts, remain).
 */
export interface LabRegistry {
  enodes?: Record<number, string>;
  withoutNetworkPeer?: boolean;
}

/**
 * Nodes of the lab's stack on other targets than its machines (a pod's, tests/kubelet/mixedStackPeers.test.ts): declared
 * with the lab's nodes, deployed by the test, and known to the lab's nodes as their peers.
 */
export interface OtherNodes {
  /** Their entries of `lacchain:nodes`. */
  entries: Record<string, unknown>[];
  /** The stack's files they need (their values files), by path. */
  files: Record<string, unknown>;
  /** Their keys, as `lacchain:nodeKeys` holds them. */
  keys: Record<string, string>;
  /** Their enodes: each lab node permissions them and has them as peers, at their enode's address. */
  enodes: string[];
}

/** The nodes' lab (the rollout's three by default). */
export class RolloutLab {
  private readonly recorded = recordProgram();
  readonly hosts: TestHost[] = [];
  private readonly servers: FileServer[] = [];
  /** What each command last ran with successfully: the state the next `pulumi up` is compared with. */
  private readonly applied = new Map<string, RemoteStep>();
  /** The last `up`'s declaration: the stack outputs (each node's enode) as the operator reads them. */
  private declared?: Declared;
  /** The last `up`'s releases and settings: what the stack file says now. */
  private last: { versions: Versions; extra: Record<string, unknown> } = { versions: {}, extra: {} };
  /** The address a node's stack gives as its `node_ip` (p2p-host) instead of its machine's, by node index. */
  readonly p2pHosts = new Map<number, string>();

  /** The stack's nodes on other targets (none by default): set before the first `up`. */
  readonly otherNodes: OtherNodes = { entries: [], files: {}, keys: {}, enodes: [] };

  private constructor(
    readonly work: string,
    readonly nodes: readonly LabNode[],
  ) {}

  /** Boots the nodes' hosts (from the packages-installed disk) with a release server each, for `releases`. */
  static async open(releases: string[], nodes: readonly LabNode[] = ROLLOUT_NODES): Promise<RolloutLab> {
    const lab = new RolloutLab(fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-rollout-')), nodes);
    try {
      await packStandinReleases(releases, lab.work);
      const base = await packagesInstalledDisk();
      for (const node of nodes) {
        const host = await startTestHost(node.host, node.index, { base });
        lab.hosts.push(host);
        lab.servers.push(await startReleaseServer(host, lab.work));
      }
      // One login key for the stack (lacchain:sshPrivateKey): the first host's, authorised on the others too.
      const publicKey = (await lab.on(0, 'cat /root/.ssh/authorized_keys')).trim();
      for (const i of [...lab.hosts.keys()].slice(1)) {
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
    return deriveIdentity(KEYS[this.nodes[node].name], this.hosts[node].ip, PORTS.p2p).enode;
  }

  /** Each node's enode as the stack outputs it (`pulumi stack output nodes`: `<node>.enode`), after an `up`. */
  async stackEnodes(): Promise<string[]> {
    if (this.declared === undefined) throw new Error('no pulumi up yet: the stack has no outputs');
    const nodes = this.declared.outputs.nodes;
    return Promise.all(this.nodes.map(async ({ name }) => (await settle(nodes[name].enode)).value as string));
  }

  /** A JSON-RPC call to node `node`'s own RPC, on its machine; the result. */
  async rpc(node: number, method: string): Promise<unknown> {
    const body = JSON.stringify({ jsonrpc: '2.0', method, params: [], id: 1 });
    const answer = JSON.parse(
      await this.on(
        node,
        `curl -s --max-time 10 -H 'Host: localhost' -H 'Content-Type: application/json' --data '${body}' http://127.0.0.1:${PORTS.rpcHttp}/`,
      ),
    ) as { result?: unknown; error?: { message: string } };
    if (answer.error !== undefined) throw new Error(`${this.nodes[node].host}: ${method}: ${answer.error.message}`);
    return answer.result;
  }

  /**
   * The lab's nodes node `node` has as peers now, from its `admin_peers` (the real connections): each as `<enode> from
   * <address>`, the enode as the node lists it (its key, the address the connection came from or went to, the port it
   * announces) and that address; and its peer count (net_peerCount), the network peer counted too.
   */
  async labPeersOf(node: number): Promise<{ count: number; peers: string[] }> {
    const count = Number.parseInt(String(await this.rpc(node, 'net_peerCount')), 16);
    const listed = (await this.rpc(node, 'admin_peers')) as AdminPeer[];
    return {
      count,
      peers: listedPeers(listed, [...this.nodes.map((_, i) => this.enodeOf(i)), ...this.otherNodes.enodes]),
    };
  }

  /**
   * What node `node`'s `admin_peers` should list: each other lab node by its enode, from that node's own address (no
   * NAT between the machines); then the stack's other nodes by their enodes, at their enodes' addresses (the lab's node
   * dialed them there).
   */
  expectedLabPeers(node: number): string[] {
    const others = this.otherNodes.enodes.map((enode) => `${enode} from ${enode.split('@')[1].split(':')[0]}`);
    return [
      ...this.nodes
        .map((_, i) => i)
        .filter((i) => i !== node)
        .map((i) => `${this.enodeOf(i)} from ${this.hosts[i].ip}`),
      ...others,
    ];
  }

  /** Waits until every node lists the other lab nodes as peers (`seconds` at most); what they list then. */
  async labPeered(seconds = 180): Promise<{ count: number; peers: string[] }[]> {
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
      const seen = await Promise.all(this.nodes.map((_, node) => this.labPeersOf(node)));
      const done = seen.every(({ peers }, node) => peers.join() === this.expectedLabPeers(node).join());
      if (done || Date.now() > deadline) return seen;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }

  /** Stops what `open` started, whatever of it did start. */
  async close(): Promise<void> {
    for (const server of this.servers) await server.close();
    for (const host of this.hosts) await host.stop();
    fs.rmSync(this.work, { recursive: true, force: true });
  }

  /** The stack: the three nodes on their hosts at `versions`, with the first host's login key on every host. */
  stack(versions: Versions, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const entries = this.nodes.map((node, i) => {
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
      const entry = (single['lacchain:nodes'] as Record<string, Record<string, unknown>>[])[0];
      const p2pHost = this.p2pHosts.get(i);
      if (p2pHost !== undefined) entry.inventory.node_ip = p2pHost;
      // ADMIN on each node's RPC, for admin_peers (the writer's is reachable from outside: its explicit override, and
      // no consensus API there, as its default has it).
      entry.rpc =
        node.typenode === 'writer'
          ? { apis: ['ETH', 'NET', 'WEB3', 'ADMIN'], allowUnsafeApis: true }
          : { apis: [...NODE_TYPE_FACTS[node.typenode].rpcApis, 'ADMIN'] };
      return entry;
    });
    return {
      'lacchain:network': 'open-protestnet',
      'lacchain:nodes': [...entries, ...this.otherNodes.entries],
      'lacchain:sshPrivateKey': this.hosts[0].privateKey,
      'lacchain:companions': {
        relaySigner: { enabled: false },
        rotationValidator: { enabled: false },
        ethstats: { enabled: false },
      },
      'lacchain:nodeKeys': { ...KEYS, ...this.otherNodes.keys },
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
    const declared = await declareProgram(this.recorded, 'testnet', this.stack(versions, extra), this.otherNodes.files);
    const declaredSteps = remoteCommands(declared);
    const steps = changedCommands([...this.applied.values()], declaredSteps);
    const replay = await runAsEngine(declared, steps, this.hosts, options);
    this.declared = declared;
    this.last = { versions, extra };
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
    for (const i of this.nodes.keys()) await this.permission(i, true);
  }

  /**
   * The network permissions node `node` (with the lab's other nodes and its host's network peer) or no longer does: it
   * drops its peers at its next block and is refused after, as a node the network took out of its contract.
   */
  async permission(node: number, permitted: boolean, registry: LabRegistry = {}): Promise<void> {
    const { typenode } = this.nodes[node];
    const enodes = this.nodes.map((_, i) => registry.enodes?.[i] ?? this.enodeOf(i));
    const enode = enodes[node];
    const others = [...enodes.filter((each) => each !== enode), ...this.otherNodes.enodes];
    const networkPeer = registry.withoutNetworkPeer ? [] : [this.hosts[node].networkPeer];
    const registered = permissioned(enode, 'open-protestnet', typenode, [...others, ...networkPeer]);
    await registerOnHost(
      this.hosts[node],
      `${DEFAULT_NODE_HOME}/data`,
      permitted ? registered : registered.filter((each) => each.enode !== enode),
    );
  }

  /** Runs a root command on a node's host (with `input`); its standard output. */
  async on(node: number, command: string, input?: string): Promise<string> {
    const result = await this.hosts[node].ssh(command, input === undefined ? {} : { input });
    if (result.code !== 0) throw new Error(`${this.nodes[node].host}: ${command}: ${result.stderr}`);
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
    return Promise.all(this.nodes.map((_, i) => this.mainPid(i)));
  }

  /** Every node's stopped intervals since `since`, in the nodes' order. */
  everyStop(since: number): Promise<StoppedInterval[][]> {
    return Promise.all(this.nodes.map((_, i) => this.stoppedIntervals(i, since)));
  }

  /** `pulumi up` again with the last `up`'s releases and settings (after a change of the lab's own: `p2pHosts`). */
  upAgain(): Promise<{ declared: Declared; replay: EngineReplay }> {
    return this.up(this.last.versions, this.last.extra);
  }

  /** Runs one remote step again (its name, e.g. `validator-firewall`), as `pulumi up --replace` of its Command does. */
  rerun(step: string): Promise<{ declared: Declared; replay: EngineReplay }> {
    this.applied.delete(step);
    return this.upAgain();
  }

  /**
   * `npm run node -- check --node <node>` of the stack as the last `up` left it, as the operator runs it (its head
   * watched for 3 s: a block comes every 2 s); its exit code and output.
   */
  async check(node: number): Promise<{ code: number; stdout: string; stderr: string }> {
    const config = this.stack(this.last.versions, this.last.extra);
    delete config['lacchain:nodeKeys'];
    return nodeTool(operatorStackFile(this.work, config), this.hosts[0].privateKeyFile)(
      'check',
      '--node',
      this.nodes[node].name,
      '--window',
      '3',
    );
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
      if (Date.now() > deadline) throw new Error(`${this.nodes[node].host}: the gate record never said ${state}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** A peer as `admin_peers` lists it: its enode, and the address the connection came from or went to. */
export interface AdminPeer {
  enode: string;
  network: { remoteAddress: string };
}

/**
 * The peers of `listed` (an `admin_peers` answer) that are nodes of `enodes` (by key): each as `<enode> from
 * <address>`, in the order of `enodes`.
 */
export function listedPeers(listed: readonly AdminPeer[], enodes: readonly string[]): string[] {
  const ids = enodes.map((each) => each.split('@')[0]);
  return listed
    .filter(({ enode }) => ids.includes(enode.split('@')[0]))
    .map(({ enode, network }) => `${enode} from ${network.remoteAddress.replace(/:\d+$/, '')}`)
    .sort((a, b) => ids.indexOf(a.split('@')[0]) - ids.indexOf(b.split('@')[0]));
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

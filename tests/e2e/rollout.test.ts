/**
 * A rollout on real test hosts (docs/operations.md, "Rolling out a change"): one stack of three SSH nodes, a writer, a
 * bootnode and a validator, each on a Debian 12 host of its own (real systemd, sshd, the Besu stand-in, not Besu), its
 * commands run as the engine runs them (testing/engineReplay.ts: each as soon as what it depends on is done, side by
 * side otherwise). A release bump restarts the nodes strictly one after another, in the rollout's order, each after
 * the one before passed its health gate: their services' stopped intervals, read from each host's journal, never
 * overlap. Then a bump where the bootnode does not come back healthy (no peer): its gate stops the rollout there, the
 * validator untouched on its release and running, the error as docs/operations.md says, and `npm run node -- status
 * --all` saying where the rollout is; the cause fixed, the next `pulumi up` finishes it. Then a `pulumi up` cut while the
 * bootnode waits on its gate: the next one runs that gate again and finishes, never two nodes down at once.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram, Declared } from '../../testing/program';
import { startTestHost, TestHost } from '../../testing/host/testHost';
import type { FileServer } from '../../testing/host/fileServer';
import { packagesInstalledDisk } from '../../testing/host/packagesDisk';
import { hostSuite, progress } from '../../testing/hostSuite';
import { requireTestHosts } from '../../testing/releaseHost';
import { packStandinReleases, startReleaseServer } from '../../testing/standinReleases';
import { sshNodeStack } from '../../testing/sshStacks';
import { changedCommands, remoteCommands, RemoteStep } from '../../testing/replay';
import { EngineReplay, runAsEngine } from '../../testing/engineReplay';
import { shellQuote } from '../../core/remote/shell';
import { DEFAULT_NODE_HOME } from '../../core/catalog/defaults';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { permissioned, registerOnHost } from '../../testing/permissioning';
import { PORTS } from '../../core/catalog/ports';
import { nodeTool, operatorStackFile } from '../../testing/nodeTool';
import { EngineCut } from '../../testing/engineReplay';

const suite = hostSuite('the rollout suite');
jest.setTimeout(20 * 60 * 1000);

/** The releases the nodes go through (one Java, 17, for all: no packages step runs again). */
const FIRST = '23.4.1';
const SECOND = '24.1.0';
/** The rollout's order, each node on a host of its own. */
const NODES = [
  { name: 'writer', typenode: 'writer', host: 'roll-w', index: 71 },
  { name: 'bootnode', typenode: 'bootnode', host: 'roll-b', index: 72 },
  { name: 'validator', typenode: 'validator', host: 'roll-v', index: 73 },
] as const;
const SERVICE = 'besu';
/** The nodes' keys. */
const KEYS: Record<string, string> = {
  writer: `0x${'0'.repeat(62)}71`,
  bootnode: `0x${'0'.repeat(62)}72`,
  validator: `0x${'0'.repeat(62)}73`,
};
/** The shortest gate a stack may set: a node that is not healthy in it stops the rollout. */
const GATE_SECONDS = 60;

suite('a release bump of three SSH nodes rolls out one node at a time', () => {
  const recorded = recordProgram();
  const hosts: TestHost[] = [];
  const servers: FileServer[] = [];
  let work = '';
  /** What each command last ran with successfully: the state the next `pulumi up` is compared with. */
  const applied = new Map<string, RemoteStep>();

  /** The stack: the three nodes on their hosts at `versions`, with the first host's login key on every host. */
  const stack = (versions: Record<string, string>) => {
    const entries = NODES.map((node, i) => {
      const single = sshNodeStack(hosts[i], {
        version: versions[node.name],
        releaseBaseUrl: servers[i].url,
        releaseDir: work,
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
      'lacchain:sshPrivateKey': hosts[0].privateKey,
      'lacchain:companions': {
        relaySigner: { enabled: false },
        rotationValidator: { enabled: false },
        ethstats: { enabled: false },
      },
      'lacchain:nodeKeys': KEYS,
      'lacchain:rollout': { gateTimeoutSeconds: GATE_SECONDS },
    };
  };

  /**
   * `pulumi up` of the stack at `versions` (and `extra` settings), replayed as the engine runs it; what succeeded
   * becomes the state.
   */
  const up = async (
    versions: Record<string, string>,
    extra: Record<string, unknown> = {},
    cut?: EngineCut,
  ): Promise<{ declared: Declared; replay: EngineReplay & { cut: boolean } }> => {
    const declared = await declareProgram(recorded, 'testnet', { ...stack(versions), ...extra }, {});
    const steps = changedCommands([...applied.values()], remoteCommands(declared));
    const replay = await runAsEngine(declared, steps, hosts, cut);
    for (const run of replay.runs) {
      if (run.code === 0)
        applied.set(
          run.name,
          remoteCommands(declared).find((s) => s.name === run.name)!,
        );
    }
    return { declared, replay };
  };

  /** Runs a root command on a node's host. */
  const on = async (node: number, command: string) => {
    const result = await hosts[node].ssh(command);
    if (result.code !== 0) throw new Error(`${NODES[node].host}: ${command}: ${result.stderr}`);
    return result.stdout;
  };
  /** The release a node runs. */
  const releaseOf = async (node: number) =>
    path.basename((await on(node, `readlink ${DEFAULT_NODE_HOME}/releases/current`)).trim());
  /** The stand-in's state on a node (its peers): written as the service user, whole at once. */
  const setPeers = (node: number, peers: number) =>
    on(
      node,
      `runuser -u besu -- sh -c ${shellQuote(`printf '{"peers": ${peers}}' >${DEFAULT_NODE_HOME}/data/standin-state.new && mv ${DEFAULT_NODE_HOME}/data/standin-state.new ${DEFAULT_NODE_HOME}/data/standin-state.json`)}`,
    );
  /** A node's service's stopped intervals since `since` (ms), from its journal: [Stopping, the next Started]. */
  const stoppedIntervals = async (node: number, since: number) => {
    const lines = (await on(node, `journalctl -u ${SERVICE} -o json --since @${Math.floor(since / 1000)} --no-pager`))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { MESSAGE: string; __REALTIME_TIMESTAMP: string });
    const intervals: [number, number][] = [];
    let stopping: number | undefined;
    for (const entry of lines) {
      const at = Number(entry.__REALTIME_TIMESTAMP) / 1000;
      if (/^Stopping /.test(entry.MESSAGE) && stopping === undefined) stopping = at;
      if (/^Started /.test(entry.MESSAGE) && stopping !== undefined) {
        intervals.push([stopping, at]);
        stopping = undefined;
      }
    }
    if (stopping !== undefined) intervals.push([stopping, Infinity]);
    return intervals;
  };

  /** `npm run node -- status --all` of the stack at `versions` (and `extra`), as the operator runs it. */
  const statusAll = async (versions: Record<string, string>, extra: Record<string, unknown> = {}) => {
    // The operator's copy of the stack file: its node keys are pulumi up's only (the operations never read them).
    const config: Record<string, unknown> = { ...stack(versions), ...extra };
    delete config['lacchain:nodeKeys'];
    const result = await nodeTool(operatorStackFile(work, config), hosts[0].privateKeyFile)('status', '--all');
    // 0: every node healthy; 1: one is not (the one the rollout is at). Anything else is the tool's own failure.
    if (result.code !== 0 && result.code !== 1) throw new Error(`status --all exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  };
  /** Waits until the gate record of node `node` says `state` (scripts/remote/gate.sh), for at most `seconds`. */
  const gateSays = async (node: number, state: string, seconds = 120) => {
    const record = `${DEFAULT_NODE_HOME}/rollout-gate`;
    const deadline = Date.now() + seconds * 1000;
    while ((await hosts[node].ssh(`grep -qx state=${state} ${record}`)).code !== 0) {
      if (Date.now() > deadline) throw new Error(`${NODES[node].host}: the gate record never said ${state}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  beforeAll(async () => {
    await requireTestHosts();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-rollout-'));
    await packStandinReleases([FIRST, SECOND], work);
    const base = await packagesInstalledDisk();
    for (const node of NODES) {
      const host = await startTestHost(node.host, node.index, { base });
      hosts.push(host);
      servers.push(await startReleaseServer(host, work));
    }
    // One login key for the stack (lacchain:sshPrivateKey): the first host's, authorised on the others too.
    const publicKey = (await on(0, 'cat /root/.ssh/authorized_keys')).trim();
    for (const i of [1, 2]) {
      await hosts[i].ssh(`tee -a /root/.ssh/authorized_keys >>/home/${hosts[i].sudoUser}/.ssh/authorized_keys`, {
        input: `${publicKey}\n`,
      });
    }
    const first = await up({ writer: FIRST, bootnode: FIRST, validator: FIRST });
    expect(first.replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
    // The network permissions each node (the stand-in's contract): from their next start on, they have peers.
    for (const [i, node] of NODES.entries()) {
      const enode = deriveIdentity(KEYS[node.name], hosts[i].ip, PORTS.p2p).enode;
      await registerOnHost(
        hosts[i],
        `${DEFAULT_NODE_HOME}/data`,
        permissioned(enode, 'open-protestnet', node.typenode),
      );
    }
    // A first install: each gate only says the node is new; nothing waited for a node's health.
    expect(first.replay.runs.filter((r) => r.name.endsWith('-gate')).map((r) => r.stdout.trim())).toEqual([
      'gate: node writer is new to the rollout: no health gate until a change restarts it',
      'gate: node bootnode is new to the rollout: no health gate until a change restarts it',
    ]);
  });

  afterAll(async () => {
    for (const server of servers) await server.close();
    for (const host of hosts) await host.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it("restarts the nodes one after another, writer, bootnode, validator, each after the one before passed its gate: no two nodes' stopped intervals overlap", async () => {
    const since = Date.now();
    const { replay } = await up({ writer: SECOND, bootnode: SECOND, validator: SECOND });
    expect(replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
    for (const i of [0, 1, 2]) expect(await releaseOf(i)).toBe(`besu-${SECOND}`);
    const stopped = await Promise.all([0, 1, 2].map((i) => stoppedIntervals(i, since)));
    for (const intervals of stopped) expect(intervals.length).toBeGreaterThan(0);
    const longest = Math.max(...stopped.flat().map(([begin, end]) => end - begin));
    progress(
      `rollout of 3 nodes: ${((Date.now() - since) / 1000).toFixed(1)} s; longest stop ${(longest / 1000).toFixed(1)} s`,
    );
    // Strictly one after another: every stop of a node ends before the next node's first stop begins.
    for (const i of [0, 1]) {
      const lastEnd = Math.max(...stopped[i].map(([, end]) => end));
      const nextBegin = Math.min(...stopped[i + 1].map(([begin]) => begin));
      expect(lastEnd).toBeLessThan(nextBegin);
      // And after the node's gate said it was healthy.
      const gate = replay.runs.find((r) => r.name === `${NODES[i].name}-gate`)!;
      expect(gate.stdout).toMatch(
        new RegExp(`^gate: ok: node ${NODES[i].name} is healthy: its enode, \\d+ peers, head \\d+ advancing`),
      );
      expect(gate.ended).toBeLessThanOrEqual(nextBegin);
    }
  });

  it('stops at a node that does not come back healthy, the nodes after it untouched and running; the next up finishes it', async () => {
    // A change that restarts every node (their config: the RPC answers one more host name), while the bootnode comes
    // back without a peer, as a node the network no longer permissions would.
    const versions = { writer: SECOND, bootnode: SECOND, validator: SECOND };
    const config = { 'lacchain:rpc': { hostAllowlist: ['rollout.example.org'] } };
    const withConfig = async () => (await up(versions, config)).replay;
    const validatorConfig = () => on(2, `sha256sum ${DEFAULT_NODE_HOME}/config.toml`);
    const validatorBefore = await validatorConfig();
    const validatorPid = (await on(2, `systemctl show -p MainPID --value ${SERVICE}`)).trim();
    await setPeers(1, 0);
    const stopping = withConfig();
    // While the bootnode's gate waits, status --all says the rollout is at it and the validator waits for it.
    await gateSays(1, 'waiting');
    const during = await statusAll(versions, config);
    expect(during).toMatch(
      /^rollout in progress: node bootnode is changing since \d\d:\d\d:\d\d UTC, not healthy yet: it has no peer/m,
    );
    expect(during).toContain('waiting for bootnode: validator (not changed yet)');
    const stopped = await stopping;
    expect(stopped.failed.map((r) => r.name)).toEqual(['bootnode-gate']);
    expect(await statusAll(versions, config)).toMatch(
      /^rollout stopped at node bootnode \(its health gate gave up, or its pulumi up was cut since \d\d:\d\d:\d\d UTC\): it has no peer .*Fix it \(npm run node -- check --stack testnet --node bootnode\), then run pulumi up again to continue$/m,
    );
    expect(stopped.failed[0].stderr.trim()).toBe(
      `gate: node bootnode is not healthy after ${GATE_SECONDS} s (checked: its enode, a peer, at most 2 blocks behind, its head advancing): it has no peer (is it permissioned? npm run node -- check says why). The rollout stops here: validator not changed. Fix it (npm run node -- check --stack testnet --node bootnode), then run pulumi up again to continue from here; or go back (npm run node -- rollback --stack testnet --node bootnode, and set its release back)`,
    );
    // The validator: none of its steps from its files on ran; its config, release and process are as they were.
    expect(stopped.notRun).toEqual(expect.arrayContaining(['validator-node-files', 'validator-start']));
    expect(stopped.runs.map((r) => r.name).filter((name) => name.startsWith('validator-'))).not.toContain(
      'validator-start',
    );
    expect(await validatorConfig()).toBe(validatorBefore);
    expect(await releaseOf(2)).toBe(`besu-${SECOND}`);
    expect((await on(2, `systemctl is-active ${SERVICE}; systemctl show -p MainPID --value ${SERVICE}`)).trim()).toBe(
      `active\n${validatorPid}`,
    );
    // The cause fixed, the same pulumi up again: the bootnode's gate passes, and the validator changes.
    await setPeers(1, 3);
    const finished = await withConfig();
    expect(finished.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
    expect(finished.runs.find((r) => r.name === 'bootnode-gate')!.stdout).toMatch(
      /^gate: ok: node bootnode is healthy/,
    );
    expect(finished.runs.map((r) => r.name)).toEqual(
      expect.arrayContaining(['validator-node-files', 'validator-start']),
    );
    expect(await validatorConfig()).not.toBe(validatorBefore);
    // Every node healthy again: status --all shows no rollout.
    expect(await statusAll(versions, config)).not.toMatch(/rollout|waiting for/);
  });

  it('a cut while a node waits on its gate: the next up runs its gate again and finishes, never two nodes down at once', async () => {
    const since = Date.now();
    const versions = { writer: SECOND, bootnode: SECOND, validator: SECOND };
    // Another change that restarts every node, cut while the bootnode (no peer yet) waits on its gate.
    const config = { 'lacchain:rpc': { hostAllowlist: ['rollout.example.org', 'cut.example.org'] } };
    await setPeers(1, 0);
    const cut = await up(versions, config, {
      step: 'bootnode-gate',
      when: `grep -qx state=waiting ${DEFAULT_NODE_HOME}/rollout-gate`,
    });
    expect(cut.replay.cut).toBe(true);
    expect(cut.replay.failed.map((r) => r.name)).toEqual(['bootnode-gate']);
    expect(cut.replay.notRun).toEqual(expect.arrayContaining(['validator-node-files', 'validator-start']));
    // The gate's session is gone; what it recorded stays until its time is up, then it reads as stopped.
    expect(await statusAll(versions, config)).toContain('waiting for bootnode: validator (not changed yet)');
    await setPeers(1, 3);
    const again = await up(versions, config);
    expect(again.replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
    expect(again.replay.runs.find((r) => r.name === 'bootnode-gate')!.stdout).toMatch(
      /^gate: ok: node bootnode is healthy/,
    );
    expect(again.replay.runs.map((r) => r.name)).toEqual(
      expect.arrayContaining(['validator-node-files', 'validator-start']),
    );
    // Across the cut and the re-run, no two nodes were down at the same moment.
    const stopped = (await Promise.all([0, 1, 2].map((i) => stoppedIntervals(i, since)))).flatMap((intervals, i) =>
      intervals.map(([begin, end]) => ({ node: NODES[i].name, begin, end })),
    );
    for (const a of stopped) {
      for (const b of stopped) {
        if (a.node < b.node)
          expect([a.node, b.node, a.end < b.begin || b.end < a.begin]).toEqual([a.node, b.node, true]);
      }
    }
    expect(stopped.filter((s) => s.node === 'validator').length).toBeGreaterThan(0);
  });
});

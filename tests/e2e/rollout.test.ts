/**
 * A rollout on real test hosts (docs/upgrades.md, "Rolling out a change"): one stack of three SSH nodes, a writer, a
 * bootnode and a validator, each on a Debian 12 host of its own (real systemd, sshd, the Besu stand-in, not Besu), its
 * commands run as the engine runs them (testing/engineReplay.ts: each as soon as what it depends on is done, side by
 * side otherwise). A release bump restarts the nodes strictly one after another, in the rollout's order, each after
 * the one before passed its health gate: their services' stopped intervals, read from each host's journal, never
 * overlap. Then a bump where the bootnode does not come back healthy (no peer): its gate stops the rollout there, the
 * validator untouched on its release and running, the error as docs/operations.md says, and `npm run node -- status
 * --all` saying where the rollout is; the cause fixed, the next `pulumi up` finishes it. Then a `pulumi up` cut while the
 * bootnode waits on its gate: the next one runs that gate again and finishes, never two nodes down at once.
 */
import { hostSuite, progress } from '../../testing/hostSuite';
import { requireTestHosts } from '../../testing/releaseHost';
import { DEFAULT_NODE_HOME } from '../../core/catalog/defaults';
import { downTimes, GATE_SECONDS, gateRecord, ROLLOUT_NODES as NODES, RolloutLab } from '../../testing/rolloutLab';

const suite = hostSuite('the rollout suite');
jest.setTimeout(20 * 60 * 1000);

/** The releases the nodes go through (one Java, 17, for all: no packages step runs again). */
const FIRST = '23.4.1';
const SECOND = '24.1.0';

suite('a release bump of three SSH nodes rolls out one node at a time', () => {
  let lab: RolloutLab;

  beforeAll(async () => {
    await requireTestHosts();
    lab = await RolloutLab.open([FIRST, SECOND]);
    const first = await lab.up({ writer: FIRST, bootnode: FIRST, validator: FIRST });
    expect(first.replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
    await lab.permissionEveryNode();
    // A first install: each gate only says the node is new; nothing waited for a node's health.
    expect(first.replay.runs.filter((r) => r.name.endsWith('-gate')).map((r) => r.stdout.trim())).toEqual([
      'gate: node writer is new to the rollout: no health gate until a change restarts it',
      'gate: node bootnode is new to the rollout: no health gate until a change restarts it',
    ]);
  });

  afterAll(async () => {
    await lab?.close();
  });

  it('the three nodes, each permissioned, have each other as real peers: the writer and the validator find the bootnode (its enode in their bootnodes) and each other', async () => {
    // Registered after their first start, refused before: a node dials a discovered node again after about 35 s
    // (go-ethereum's dial history), so this may take a minute or two.
    const expected = (node: number) =>
      NODES.map((_, i) => i)
        .filter((i) => i !== node)
        .map((i) => lab.enodeOf(i));
    let seen: { count: number; peers: string[] }[] = [];
    for (let attempt = 0; attempt < 90; attempt++) {
      seen = await Promise.all(NODES.map((_, node) => lab.labPeersOf(node)));
      if (seen.every(({ peers }, node) => peers.length === expected(node).length)) break;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    for (const [node, { count, peers }] of seen.entries()) {
      // Each lab node by its enode, connected from (or dialed at) that node's own address: no NAT between them.
      expect(peers.map((peer) => peer.replace(/:\d+$/, ''))).toEqual(
        expected(node).map((enode) => `${enode} from ${enode.split('@')[1].split(':')[0]}`),
      );
      expect(count).toBeGreaterThanOrEqual(2);
    }
  });

  it("restarts the nodes one after another, writer, bootnode, validator, each after the one before passed its gate: no two nodes' stopped intervals overlap", async () => {
    const since = Date.now();
    const before = await lab.everyMainPid();
    const { replay } = await lab.up({ writer: SECOND, bootnode: SECOND, validator: SECOND });
    expect(replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
    for (const i of [0, 1, 2]) expect(await lab.releaseOf(i)).toBe(`besu-${SECOND}`);
    const stopped = await lab.everyStop(since);
    // Every node was restarted (its main process changed), and each restart is a stopped interval counted here.
    const after = await lab.everyMainPid();
    for (const i of [0, 1, 2]) {
      expect([NODES[i].name, after[i] !== before[i], stopped[i].length > 0]).toEqual([NODES[i].name, true, true]);
    }
    const { longestSeconds, mostAtOnce } = downTimes(stopped);
    progress(
      `rollout of 3 nodes: ${((Date.now() - since) / 1000).toFixed(1)} s; longest stop ${longestSeconds.toFixed(1)} s`,
    );
    expect(mostAtOnce).toBe(1);
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
    // A change that restarts every node (their config: the RPC answers one more host name), while the network no
    // longer permissions the bootnode: it drops its real peer and comes back without one.
    const versions = { writer: SECOND, bootnode: SECOND, validator: SECOND };
    const config = { 'lacchain:rpc': { hostAllowlist: ['rollout.example.org'] } };
    const withConfig = async () => (await lab.up(versions, config)).replay;
    const validatorConfig = () => lab.on(2, `sha256sum ${DEFAULT_NODE_HOME}/config.toml`);
    const validatorBefore = await validatorConfig();
    const validatorService = await lab.serviceOf(2);
    await lab.permission(1, false);
    const stopping = withConfig();
    // While the bootnode's gate waits, status --all says the rollout is at it and the validator waits for it.
    await lab.gateSays(1, 'waiting');
    const during = await lab.statusAll(versions, config);
    expect(during).toMatch(
      /^rollout in progress: node bootnode is changing since \d\d:\d\d:\d\d UTC, not healthy yet: it has no peer/m,
    );
    expect(during).toContain('waiting for bootnode: validator (not changed yet)');
    const stopped = await stopping;
    expect(stopped.failed.map((r) => r.name)).toEqual(['bootnode-gate']);
    expect(await lab.statusAll(versions, config)).toMatch(
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
    expect(await lab.releaseOf(2)).toBe(`besu-${SECOND}`);
    expect(await lab.serviceOf(2)).toBe(validatorService);
    expect(validatorService).toMatch(/^active\n[1-9]\d*\n$/);
    // The cause fixed, the same pulumi up again: the bootnode's gate passes, and the validator changes.
    await lab.permission(1, true);
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
    expect(await lab.statusAll(versions, config)).not.toMatch(/rollout|waiting for/);
  });

  it('a cut while a node waits on its gate: the next up runs its gate again and finishes, never two nodes down at once', async () => {
    const since = Date.now();
    const before = await lab.everyMainPid();
    const versions = { writer: SECOND, bootnode: SECOND, validator: SECOND };
    // Another change that restarts every node, cut while the bootnode (not permissioned: no peer) waits on its gate.
    const config = { 'lacchain:rpc': { hostAllowlist: ['rollout.example.org', 'cut.example.org'] } };
    await lab.permission(1, false);
    const cut = await lab.up(versions, config, {
      cut: { step: 'bootnode-gate', when: `grep -qx state=waiting ${gateRecord()}` },
    });
    expect(cut.replay.cut).toBe(true);
    expect(cut.replay.failed.map((r) => r.name)).toEqual(['bootnode-gate']);
    expect(cut.replay.notRun).toEqual(expect.arrayContaining(['validator-node-files', 'validator-start']));
    // The gate's session is gone; what it recorded stays until its time is up, then it reads as stopped.
    expect(await lab.statusAll(versions, config)).toContain('waiting for bootnode: validator (not changed yet)');
    await lab.permission(1, true);
    const again = await lab.up(versions, config);
    expect(again.replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
    expect(again.replay.runs.find((r) => r.name === 'bootnode-gate')!.stdout).toMatch(
      /^gate: ok: node bootnode is healthy/,
    );
    expect(again.replay.runs.map((r) => r.name)).toEqual(
      expect.arrayContaining(['validator-node-files', 'validator-start']),
    );
    // Across the cut and the re-run, no two nodes were down at the same moment.
    const stopped = (await lab.everyStop(since)).flatMap((intervals, i) =>
      intervals.map(([begin, end]) => ({ node: NODES[i].name, begin, end })),
    );
    // Not vacuously: every node was restarted (a new main process) and has its stops here to compare.
    const after = await lab.everyMainPid();
    for (const [i, { name }] of NODES.entries()) {
      expect([name, after[i] !== before[i], stopped.some((s) => s.node === name)]).toEqual([name, true, true]);
    }
    for (const a of stopped) {
      for (const b of stopped) {
        if (a.node < b.node)
          expect([a.node, b.node, a.end < b.begin || b.end < a.begin]).toEqual([a.node, b.node, true]);
      }
    }
  });

  it('a cut while a node changes (its start step, Besu stopped): the next up restarts it, passes its gate and goes on, never two nodes down at once', async () => {
    const since = Date.now();
    const versions = { writer: SECOND, bootnode: SECOND, validator: SECOND };
    const config = { 'lacchain:rpc': { hostAllowlist: ['rollout.example.org', 'changing.example.org'] } };
    const cut = await lab.up(versions, config, {
      cut: { step: 'bootnode-start', when: '! systemctl is-active --quiet besu' },
    });
    expect(cut.replay.cut).toBe(true);
    expect(cut.replay.failed.map((r) => r.name)).toEqual(['bootnode-start']);
    expect(cut.replay.notRun).toEqual(
      expect.arrayContaining(['bootnode-gate', 'validator-node-files', 'validator-start']),
    );
    const again = await lab.up(versions, config);
    expect(again.replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
    expect(again.replay.runs.map((r) => r.name)).toEqual(
      expect.arrayContaining(['bootnode-start', 'bootnode-gate', 'validator-start']),
    );
    expect(again.replay.runs.find((r) => r.name === 'bootnode-gate')!.stdout).toMatch(
      /^gate: ok: node bootnode is healthy/,
    );
    const stops = await lab.everyStop(since);
    expect(stops[2].length).toBeGreaterThan(0);
    expect(downTimes(stops).mostAtOnce).toBe(1);
    expect(await lab.statusAll(versions, config)).not.toMatch(/rollout|waiting for/);
  });
});

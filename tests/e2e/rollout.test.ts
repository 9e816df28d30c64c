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
import { discv4Ping, rlpxPing } from '../../testing/devp2p';
import { PORTS } from '../../core/catalog/ports';
import { NETWORKS } from '../../core/catalog/networks';

const suite = hostSuite('the rollout suite');
jest.setTimeout(20 * 60 * 1000);

/** The address of the network's first bootnode a validator's route is read towards (check's p2p address). */
const BOOTNODE_IP = NETWORKS['open-protestnet'].bootnodes.validator[0].split('@')[1].split(':')[0];

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

  it("the three nodes, each permissioned, have each other as real peers (admin_peers: each by its enode, from its own address); each stack enode answers go-ethereum's devp2p from outside", async () => {
    // Registered after their first start, refused before: a node dials a discovered node again after about 35 s
    // (go-ethereum's dial history), so this may take a minute or two.
    const seen = await lab.labPeered();
    for (const [node, { count, peers }] of seen.entries()) {
      // The writer and the validator find the bootnode (its enode in their bootnodes) and each other, no NAT between.
      expect([NODES[node].name, peers]).toEqual([NODES[node].name, lab.expectedLabPeers(node)]);
      expect(count).toBeGreaterThanOrEqual(2);
    }
    // Every enode the stack outputs, checked by another implementation from this machine (outside the nodes' own):
    // the RLPx handshake encrypted to the enode's key, and the node's Hello.
    const enodes = await lab.stackEnodes();
    expect(enodes).toEqual(NODES.map((_, i) => lab.enodeOf(i)));
    for (const enode of enodes)
      expect([enode, rlpxPing(enode)]).toEqual([enode, { code: 0, said: expect.stringMatching(/besu/) }]);
    // An enode naming another node's key at the validator's address: the validator cannot read its handshake.
    const notItsKey = `${enodes[0].split('@')[0]}@${enodes[2].split('@')[1]}`;
    const refused = rlpxPing(notItsKey);
    expect(refused.said).toMatch(/EOF/);
    expect(refused.code).not.toBe(0);
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

  describe('why a node has no peers: each cause on the validator, broken on purpose, named by check in one line; after the documented fix its peers come', () => {
    const VALIDATOR = 2;
    /** The check's lines that name a cause of no peers and failed (the symptom, `peers FAIL 0 peers`, left out). */
    const failedCauses = (stdout: string) =>
      stdout.split('\n').filter((line) => /^ {2}\S.*? +FAIL {2}/.test(line) && !/^ {2}peers +FAIL/.test(line));
    /** Waits until the validator has no peer (60 s at most); its peer count then. */
    const noPeers = async () => {
      for (let i = 0; i < 60 && (await lab.labPeersOf(VALIDATOR)).count > 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 1000));
      return (await lab.labPeersOf(VALIDATOR)).count;
    };
    /** The validator and the other two peered again, each listing the others by enode from their own address. */
    const peeredAgain = async () => {
      const seen = await lab.labPeered();
      for (const [node, { peers }] of seen.entries()) {
        expect([NODES[node].name, peers]).toEqual([NODES[node].name, lab.expectedLabPeers(node)]);
      }
    };

    beforeAll(async () => {
      // Only the lab's nodes as the validator's possible peers: its network peer (a plain peer keeping any connection,
      // unlike the network's nodes it stands for) out of its contract, so a cause that keeps the others away leaves it
      // none.
      await lab.permission(VALIDATOR, true, { withoutNetworkPeer: true });
      // A route towards the network's first bootnode, whose source address check reads (a machine's default route; the
      // test hosts have none). `ip route get` only reads it: nothing is sent there (NetRestrict keeps every dial here).
      await lab.on(VALIDATOR, `ip route add ${BOOTNODE_IP}/32 via ${lab.hosts[VALIDATOR].gateway}`);
    });

    afterAll(async () => {
      await lab.on(VALIDATOR, `ip route del ${BOOTNODE_IP}/32`);
      await lab.permission(VALIDATOR, true);
    });

    it("(a) 60606/tcp closed by the machine's firewall: check's one failed cause is p2p tcp; opened, the peers come", async () => {
      const ip = lab.hosts[VALIDATOR].ip;
      // A machine's default-deny firewall without 60606/tcp (in or out: a node that can still dial out finds its peers
      // that way); UDP, discovery, open.
      await lab.on(
        VALIDATOR,
        'nft add table inet lab_closed && ' +
          "nft add chain inet lab_closed input '{ type filter hook input priority -10; }' && " +
          "nft add chain inet lab_closed output '{ type filter hook output priority -10; }' && " +
          `nft add rule inet lab_closed input tcp dport ${PORTS.p2p} reject with tcp reset && ` +
          `nft add rule inet lab_closed output tcp dport ${PORTS.p2p} reject with tcp reset`,
      );
      let closed: { code: number; stdout: string };
      try {
        expect(await noPeers()).toBe(0);
        closed = await lab.check(VALIDATOR);
      } finally {
        await lab.on(VALIDATOR, 'nft delete table inet lab_closed');
      }
      expect(closed.code).toBe(1);
      expect(closed.stdout).toMatch(/^ {2}peers +FAIL +0 peers/m);
      expect(failedCauses(closed.stdout)).toEqual([
        `  p2p tcp        FAIL  TCP ${ip}: refused from this machine: nothing listens there, or a firewall rejects it`,
      ]);
      expect(closed.stdout).toContain(
        'fix: open 60606 TCP and UDP to the machine in every firewall before it (the machine',
      );
      await peeredAgain();
    });

    it("(b) p2p-host an address the machine does not have (its router's): check's one failed cause is p2p address; the right one, re-permissioned, and the peers come", async () => {
      const host = lab.hosts[VALIDATOR];
      const wrong = host.gateway;
      const wrongEnode = lab.enodeOf(VALIDATOR).replace(`@${host.ip}:`, `@${wrong}:`);
      // The operator sent the stack's enode for permissioning: the network's contract (every node's) holds it.
      lab.p2pHosts.set(VALIDATOR, wrong);
      for (const node of NODES.keys()) {
        await lab.permission(node, true, {
          enodes: { [VALIDATOR]: wrongEnode },
          withoutNetworkPeer: node === VALIDATOR,
        });
      }
      let moved: { code: number; stdout: string };
      try {
        const up = await lab.upAgain();
        expect(up.replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
        expect((await lab.stackEnodes())[VALIDATOR]).toBe(wrongEnode);
        expect(await lab.rpc(VALIDATOR, 'net_enode')).toBe(wrongEnode);
        expect(await noPeers()).toBe(0);
        moved = await lab.check(VALIDATOR);
      } finally {
        // The documented fix: the machine's own address, pulumi up, and the new enode sent for permissioning (here
        // registered before the up, so the node starts permissioned: no restart due).
        lab.p2pHosts.delete(VALIDATOR);
        for (const node of NODES.keys()) await lab.permission(node, true, { withoutNetworkPeer: node === VALIDATOR });
      }
      expect(moved.code).toBe(1);
      expect(moved.stdout).toMatch(/^ {2}permissioning +ok +permissioned, no peers/m);
      expect(failedCauses(moved.stdout)).toEqual([
        `  p2p address    FAIL  the enode says ${wrong} but the node leaves from ${host.ip} (the source of its route to ${BOOTNODE_IP}): the network allows the enode's address only (60606 not probed at an address the node does not leave from)`,
      ]);
      expect(moved.stdout).toMatch(
        /fix: set inventory.node_ip of node validator in .* to the address the machine leaves from/,
      );
      const fixed = await lab.upAgain();
      expect(fixed.replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
      expect(await lab.rpc(VALIDATOR, 'net_enode')).toBe(lab.enodeOf(VALIDATOR));
      await peeredAgain();
    });

    it("the firewall step, with the machine's own firewall active (ufw, denying what it is not told): the program's firewall step opens 60606 TCP and UDP, so discovery from outside is answered and the peers come", async () => {
      const enode = lab.enodeOf(VALIDATOR);
      // ufw from Debian's archive (through the host's apt proxy, as the packages step fetches), active with ssh open.
      await lab.on(
        VALIDATOR,
        'DEBIAN_FRONTEND=noninteractive apt-get -qq update && ' +
          'DEBIAN_FRONTEND=noninteractive apt-get -qq install -y --no-install-recommends ufw >/dev/null && ' +
          'ufw allow 22/tcp >/dev/null && ufw default deny incoming >/dev/null && ufw --force enable >/dev/null',
      );
      try {
        // Closed from outside until the firewall step runs: no pong to a discovery ping.
        expect(discv4Ping(enode).code).not.toBe(0);
        const rerun = await lab.rerun(`${NODES[VALIDATOR].name}-firewall`);
        expect(rerun.replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
        expect(rerun.replay.runs.map((r) => [r.name, r.stdout.trim()])).toEqual([
          [
            `${NODES[VALIDATOR].name}-firewall`,
            expect.stringMatching(/^firewall: ufw allows tcp 60606\b.* and udp 60606$/),
          ],
        ]);
        // Another implementation, from this machine: discovery v4 over UDP (ping, pong) and RLPx over TCP.
        const discovery = discv4Ping(enode);
        expect([discovery.code, discovery.said]).toEqual([0, expect.anything()]);
        expect(rlpxPing(enode).code).toBe(0);
        await peeredAgain();
      } finally {
        await lab.on(VALIDATOR, 'ufw --force reset >/dev/null');
      }
    });
  });
});

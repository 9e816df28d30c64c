/**
 * Day-2 operations with `npm run node` against a writer provisioned on a real Debian host (testing/sshNodeHost.ts: the
 * same provisioning as tests/e2e/sshNode.test.ts, on a host of this suite's own, so the two run side by side): status,
 * logs, check and its causes and fixes, start and restart, a stack of nodes on two paths. Besu and the companions are
 * stand-ins (test fixtures); systemd, sshd, nginx and nftables are real.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { NETWORKS } from '../../core/catalog/networks';
import { hostSuite, progress } from '../../testing/hostSuite';
import { outcome, runNpmAsync } from '../../testing/run';
import { HOME, provisionedWriter } from '../../testing/sshNodeHost';
import { nodeTool, nodeToolArgs, operatorStackFile } from '../../testing/nodeTool';
import type { TestHost } from '../../testing/host/testHost';
import { PORTS } from '../../core/catalog/ports';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { rlpxPing } from '../../testing/devp2p';
import { RunningStandin, startBesuStandin } from '../../testing/besuStandin';
import { applyServerSide, kubernetesManifests } from '../../testing/cluster/manifests';
import { permissioned } from '../../testing/permissioning';
import { fieldWhen } from '../../testing/cluster/objects';
import { clusterForSuite } from '../../testing/cluster/suite';
import { declareProgram } from '../../testing/program';
import { remoteCommands as commands } from '../../testing/replay';
import { valuesFor } from '../../testing/values';
import { UPGRADE_PATH } from '../../testing/standinReleases';
import { ETHSTATS, RELAY_SIGNER } from '../../core/catalog/companions';

const suite = hostSuite('SSH day-2 end-to-end tests');
jest.setTimeout(15 * 60 * 1000);

/** The release the node runs (the one sshNode.test.ts updates to). */
const NEXT = UPGRADE_PATH[1];
/** How long the tests' checks watch the head (`--window`). */
const WINDOW_SECONDS = 3;
/** The network's bootnodes a writer asks the node-permissioning contract for a connection to. */
const BOOTNODES = NETWORKS['open-protestnet'].bootnodes.writer;

suite('an SSH node on a real host: day-2 operations', () => {
  const writer = provisionedWriter({
    hostName: 'sshday2',
    hostIndex: 54,
    release: NEXT,
    releases: [NEXT],
    packagesInstalled: true,
  });
  const { stack, runAll, sh, rpc, register, permission, hasPeer, answersWithEnode, unitState, recorded } = writer;
  let host: TestHost;
  let work: string;
  let enode: string;
  /** The declaration of the node as it runs. */
  const current = () => writer.declare(NEXT);

  beforeAll(() => {
    ({ host, work, enode } = writer.state());
  });

  describe('day-2 operations with npm run node', () => {
    let operation: ReturnType<typeof nodeTool>;
    // The check watches the head for 3 s instead of 10 (--window is the check's only): the stand-in makes a block
    // every 2 s, as the networks do, so at least one comes in any 3 s.
    const node = (...args: string[]) =>
      operation(...args, ...(args[0] === 'check' ? ['--window', String(WINDOW_SECONDS)] : []));
    const setState = (state: object) => sh(`echo '${JSON.stringify(state)}' > ${HOME}/data/standin-state.json`);
    /** The stand-in's state as a test finds it: blocks advancing (what a test that failed half-way may leave). */
    const HEALTHY_STATE = { blockAdvancing: true };
    /** The check's lines that name a cause of no peers and failed (the symptom, `peers FAIL 0 peers`, left out). */
    const failedCauses = (stdout: string) =>
      stdout.split('\n').filter((line) => /^ {2}\S.*? +FAIL {2}/.test(line) && !/^ {2}peers +FAIL/.test(line));
    /** The node's real peer count. */
    const peerCount = async () => Number.parseInt((await rpc('net_peerCount')).result, 16);
    /**
     * No peers: the host's network peer taken out of the contract (the node, permissioned, stays in), so the node drops
     * it at its next block and refuses it after; waits until it has none (30 s at most).
     */
    const withoutPeers = async () => {
      await register(permissioned(enode, 'open-protestnet', 'writer'));
      for (let i = 0; i < 120 && (await peerCount()) > 0; i++) await new Promise((r) => setTimeout(r, 250));
      expect(await peerCount()).toBe(0);
    };
    /**
     * Its peer back, as the next test needs it: the network peer registered again; waits until the node has it. A node
     * that was refused that peer dials it again only after about 35 s (go-ethereum's dial history: sshNode shows it), so
     * when it has none within 3 s it is restarted, and dials it at its start.
     */
    const withPeers = async () => {
      await permission();
      for (let i = 0; i < 12 && (await peerCount().catch(() => 0)) < 1; i++)
        await new Promise((r) => setTimeout(r, 250));
      if ((await peerCount().catch(() => 0)) < 1) await sh('systemctl restart besu');
      expect(await hasPeer()).toBe(1);
    };
    /** The node's head. */
    const head = async () => Number.parseInt((await rpc('eth_blockNumber')).result, 16);
    /** Waits until the node's head is past `block` (a block every 2 s; 30 s at most) and returns the head. */
    const headPast = async (block: number) => {
      let now = await head();
      for (let i = 0; i < 120 && !(now > block); i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        now = await head();
      }
      return now;
    };
    /** Whether the node's service is active with a main process other than `pid` (a restart, not a stop). */
    const restartedFrom = async (pid: string) =>
      `${await sh('systemctl is-active besu || true')} ${(await sh('systemctl show -p MainPID --value besu')) !== pid}`;

    beforeAll(async () => {
      operation = nodeTool(operatorStackFile(work, stack(NEXT)), host.privateKeyFile);
      // The state the tests start from: the node deployed and its companions settled (the monitoring client's start,
      // its image's container, may still be under way when the deployment ends).
      for (const companion of [RELAY_SIGNER, ETHSTATS]) await unitState(`besu-${companion.name}`);
    });

    it("the enode the stack outputs answers go-ethereum's devp2p from outside; an enode naming another key does not", () => {
      // The node is provisioned as sshNode.test.ts's (testing/sshNodeHost.ts), its enode from the stack outputs.
      // devp2p rlpx ping (another implementation of RLPx) from this machine: the handshake encrypted to the enode's key,
      // then the node's Hello.
      expect(rlpxPing(enode)).toEqual({ code: 0, said: expect.stringMatching(/besu/) });
      // Another key's public key at the node's address: the node cannot read a handshake encrypted to it.
      const notItsKey = rlpxPing(deriveIdentity(`0x${'42'.padStart(64, '0')}`, host.ip, PORTS.p2p).enode);
      expect(notItsKey.code).not.toBe(0);
      expect(notItsKey.said).toMatch(/EOF/);
    });

    it('status: the service, peers, block, version and enode', async () => {
      const result = await node('status');
      expect(result.stderr).toBe('');
      expect(outcome(result)).toBe('exit 0');
      expect(result.stdout).toMatch(/service {2}started/);
      expect(result.stdout).toMatch(/peers {4}1$/m); // the host's network peer, a real connection
      expect(result.stdout).toMatch(/block {4}\d+/);
      expect(result.stdout).toContain(`version  besu/v${NEXT}/`);
      expect(result.stdout).toContain(`enode    ${enode}`);
    });

    it('status --all: the node as a row of the stack', async () => {
      const result = await node('status', '--all');
      expect(outcome(result)).toBe('exit 0');
      expect(result.stdout).toMatch(
        new RegExp(`^writer +writer +ssh +${NEXT.replace(/\./g, '\\.')} +started +1 +\\d+ +0 +yes +2/2 up$`, 'm'),
      );
    });

    it('logs: the last 100 lines of the info log', async () => {
      // Fill the log past 100 lines so the limit shows (the stand-in logs one line per block).
      const log = `${HOME}/logs/besu_info.log`;
      await sh(`for i in $(seq 1 120); do echo "earlier line $i"; done >> ${log}`);
      // The next block's import line after them (a block every 2 s; 30 s at most).
      await sh(`for i in $(seq 300); do tail -n 1 ${log} | grep -q 'Imported #' && break; sleep 0.1; done`);
      const result = await node('logs');
      expect(outcome(result)).toBe('exit 0');
      const lines = result.stdout.trimEnd().split('\n');
      expect(lines.length).toBe(100);
      expect(lines[lines.length - 1]).toMatch(/Imported #/);
    });

    it('check: healthy with peers, advancing blocks, recent imports and the stack enode', async () => {
      const result = await node('check');
      expect(result.stdout).toMatch(/peers +ok +1 peers/);
      expect(result.stdout).toMatch(
        new RegExp(`block sync +ok +block \\d+ -> \\d+ in ${WINDOW_SECONDS} s, not syncing`),
      );
      expect(result.stdout).toMatch(/block imports +ok/);
      expect(result.stdout).toContain(`enode          ok    ${enode}`);
      expect(result.stdout).toMatch(/verdict: healthy/);
      expect(outcome(result)).toBe('exit 0');
    });

    it('check: unhealthy with zero peers, with the recovery rule; --fix restarts and checks again', async () => {
      await withoutPeers();
      try {
        const result = await node('check');
        expect(result.code).toBe(1);
        expect(result.stdout).toMatch(/peers +FAIL +0 peers/);
        expect(result.stdout).toMatch(
          /recovery: restart the node \(npm run node -- restart --stack testnet --node writer/,
        );
        expect(result.stdout).toMatch(/open a support request with the network operator/);
        const pid = await sh('systemctl show -p MainPID --value besu');
        const fixed = await node('check', '--fix');
        expect(fixed.stderr).toBe(''); // a failed restart or question says why there
        expect(fixed.stdout).toMatch(/fix: restarting node writer/);
        expect(await restartedFrom(pid)).toBe('active true');
        // A restart does not bring peers back here (its only peer is not in the contract): still unhealthy, and the
        // rule says to open a support request.
        expect(fixed.code).toBe(1);
        expect(fixed.stdout.match(/verdict: unhealthy/g)).toHaveLength(2);
      } finally {
        await withPeers();
      }
    });

    it('check: unhealthy when blocks stall', async () => {
      await setState({ ...HEALTHY_STATE, blockAdvancing: false });
      try {
        const result = await node('check');
        expect(result.code).toBe(1);
        expect(result.stdout).toMatch(
          new RegExp(`block sync +FAIL +block \\d+ did not advance in ${WINDOW_SECONDS} s`),
        );
      } finally {
        await setState(HEALTHY_STATE);
      }
    });

    it("check: not yet permissioned, then permissioned after the node's start: a restart is due, --fix restarts", async () => {
      await register([...BOOTNODES, host.networkPeer].map((each) => ({ enode: each })));
      // Its peer dropped at its next block (the contract no longer allows it): no peers since
      for (let i = 0; i < 120 && (await peerCount()) > 0; i++) await new Promise((r) => setTimeout(r, 250));
      const refused = await node('check');
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(
        /permissioning +FAIL +not yet permissioned \(at block \d+, allowed to connect to 0 of the network's 2 bootnodes\)/,
      );
      expect(refused.stdout).toContain(
        "fix: send the node's permissioning request (pulumi stack output nodes --stack testnet --json: writer.permissioningRequest)",
      );
      expect(refused.stdout).toMatch(/peers +FAIL +0 peers/);
      // One cause, in one line: the address, the ports and the clock are fine.
      expect(failedCauses(refused.stdout)).toEqual([
        expect.stringMatching(/^ {2}permissioning +FAIL +not yet permissioned /),
      ]);
      const at = await head();
      await register([
        { enode, fromBlock: at + 1 },
        ...[...BOOTNODES, host.networkPeer].map((each) => ({ enode: each })),
      ]);
      expect(await headPast(at)).toBeGreaterThan(at); // the block that registers the node comes
      const fixed = await node('check', '--fix');
      expect(fixed.stderr).toBe('');
      expect(fixed.stdout).toMatch(
        /permissioning +ok +permissioned, no peers \(at block \d+, allowed to connect to 2 of/,
      );
      expect(fixed.stdout).toMatch(
        /restart +FAIL +due: the node was permissioned after its last start \(not yet at block \d+\) and has no peers/,
      );
      // One cause, in one line, before the fix (the check's first part, up to its verdict).
      expect(failedCauses(fixed.stdout.split('fix: restarting node writer')[0])).toEqual([
        expect.stringMatching(/^ {2}restart +FAIL +due: /),
      ]);
      expect(fixed.stdout).toMatch(/fix: restarting node writer/);
      expect(fixed.stdout).toMatch(/permissioning +ok +in sync \(at block/);
      expect(fixed.stdout).toMatch(/verdict: healthy$/m);
      expect(fixed.code).toBe(0);
      await withPeers();
    });

    it('check: no peers, 60606 closed, then another source address: each cause found with its fix', async () => {
      await withoutPeers();
      // Towards the network's first bootnode the machine leaves from another address of its own (a moved IP, a NAT).
      const bootnodeIp = BOOTNODES[0].split('@')[1].split(':')[0];
      const other = host.ip.replace(/\.\d+$/, '.77');
      await sh(
        'nft add table inet e2e_closed && ' +
          "nft add chain inet e2e_closed input '{ type filter hook input priority -10; }' && " +
          `nft add rule inet e2e_closed input tcp dport ${PORTS.p2p} reject with tcp reset && ` +
          `nft add rule inet e2e_closed input udp dport ${PORTS.p2p} reject`,
      );
      const closed = await node('check');
      await sh(
        `nft delete table inet e2e_closed && ip addr add ${other}/32 dev eth0 && ` +
          `ip route add ${bootnodeIp}/32 via ${host.gateway} src ${other}`,
      );
      const moved = await node('check');
      await sh(`ip route replace ${bootnodeIp}/32 via ${host.gateway}`);
      const open = await node('check');
      await sh(`ip route del ${bootnodeIp}/32 && ip addr del ${other}/32 dev eth0`);
      await withPeers();
      expect(closed.code).toBe(1);
      expect(closed.stdout).toMatch(/permissioning +ok +permissioned, no peers/);
      expect(closed.stdout).toContain(`p2p tcp        FAIL  TCP ${host.ip}: refused from this machine`);
      expect(closed.stdout).toContain(`p2p udp        FAIL  UDP ${host.ip}: refused from this machine`);
      expect(closed.stdout).toMatch(/fix: open 60606 TCP and UDP to the machine in every firewall before it/);
      expect(closed.stdout).toMatch(/clock +ok +(?:[+-](?!0\.0 )\d+\.\d|0\.0) s from this machine's/);
      expect(moved.code).toBe(1);
      expect(moved.stdout).toContain(
        `p2p address    FAIL  the enode says ${host.ip} but the node leaves from ${other} (the source of its route to ${bootnodeIp}): the network allows the enode's address only (60606 not probed at an address the node does not leave from)`,
      );
      expect(moved.stdout).toMatch(
        /fix: set inventory.node_ip of node writer in .* to the address the machine leaves from/,
      );
      expect(moved.stdout).not.toMatch(/p2p (tcp|udp)/);
      expect(open.stdout).toContain(`p2p address    ok    the node leaves from ${host.ip}, the enode's`);
      expect(open.stdout).toContain(`p2p tcp        ok    TCP ${host.ip}: open from this machine`);
      expect(open.stdout).toMatch(/p2p udp +ok +UDP [\d.]+: no refusal from this machine/);
    });

    it('check --fix brings a stopped node back', async () => {
      await sh('systemctl stop besu');
      const down = await node('status');
      expect(down.code).toBe(1);
      expect(down.stdout).toMatch(/service {2}inactive/);
      const fixed = await node('check', '--fix');
      expect(fixed.stderr).toBe('');
      expect(fixed.stdout).toMatch(/service +FAIL +inactive/);
      expect(fixed.stdout).toMatch(/verdict: healthy/);
      expect(fixed.code).toBe(0);
    });

    it('start and restart the service', async () => {
      await sh('systemctl stop besu');
      const started = await node('start');
      expect([started.code, started.stdout]).toEqual([0, expect.stringMatching(/node writer: started/)]);
      expect(await sh('systemctl is-active besu')).toBe('active');
      const pid = await sh('systemctl show -p MainPID --value besu');
      const restarted = await node('restart');
      expect(restarted.code).toBe(0);
      expect(await restartedFrom(pid)).toBe('active true');
    });

    it("check: a node started with another key fails, naming the fix, which puts the stack's key back", async () => {
      const other = `0x${'2'.padStart(64, '0')}`;
      const keyFile = `${HOME}/data/key`;
      await sh(
        `systemctl stop besu && cp -p ${keyFile} /root/key.saved && ` +
          `printf '%s' ${other} > ${keyFile} && systemctl start besu`,
      );
      for (let i = 0; i < 30 && (await rpc('net_enode').catch(() => ({}))).result === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const wrong = await node('check');
      expect(wrong.code).toBe(1);
      expect(wrong.stdout).toMatch(
        /enode +FAIL +the node answers enode:\/\/[0-9a-f]{128}@.* but the stack's enode is /,
      );
      expect(wrong.stdout).toContain(`fix: put the stack's key back: on the machine move ${keyFile} away (keep it)`);
      // The fix, as it says: the key moved away, the node-key step run again, a restart.
      await sh(`mv ${keyFile} /root/key.wrong`);
      await runAll(commands(await current()).filter((step) => step.name.endsWith('-node-key')));
      expect((await node('restart')).code).toBe(0);
      expect(await answersWithEnode()).toBe(enode);
      expect(await sh(`cmp /root/key.saved ${keyFile} && echo same`)).toBe('same');
    });

    it('check: a node whose recorded enode (data/enode) is not the one it answers fails, showing both values', async () => {
      const other = enode.replace(/^enode:\/\/./, 'enode://f');
      await sh(`cp ${HOME}/data/enode /root/enode.saved && echo '${other}' > ${HOME}/data/enode`);
      const result = await node('check');
      await sh(`cp /root/enode.saved ${HOME}/data/enode`);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`the node answers ${enode} but the stack's enode is ${other}`);
    });

    it("status shows the data's size and its filesystem's free space; check fails on a nearly full one", async () => {
      const status = await node('status');
      // (The test machine's own disk may be low on space itself: then status says so after the figures.)
      expect(status.stdout).toMatch(
        /^ {2}disk {5}data [\d.]+ (B|KiB|MiB); [\d.]+ (MiB|GiB|TiB) free of [\d.]+ (GiB|TiB) \(\d+ %\)(: below \d+ %, low)?$/m,
      );
      // The data moved onto a 4 MiB filesystem that a filler leaves about 2 % free: below the critical 5 %.
      const data = `${HOME}/data`;
      await sh(
        `systemctl stop besu && mv ${data} ${data}.real && mkdir -m 0750 ${data} && ` +
          `mount -t tmpfs -o size=4m,mode=0750,uid=$(id -u besu),gid=$(id -g besu) tmpfs ${data} && ` +
          `cp -a ${data}.real/. ${data}/ && runuser -u besu -- sh -c 'head -c 3900k /dev/zero > ${data}/filler' && ` +
          'systemctl start besu',
      );
      await answersWithEnode();
      const full = await node('check');
      await sh(
        `systemctl stop besu && umount ${data} && rmdir ${data} && mv ${data}.real ${data} && systemctl start besu`,
      );
      expect(full.code).toBe(1);
      expect(full.stdout).toMatch(
        /^ {2}disk +FAIL {2}data [\d.]+ MiB; [\d.]+ KiB free of 4\.0 MiB \([0-4] %\): below the critical 5 %, a full disk can corrupt Besu's database$/m,
      );
      expect(await answersWithEnode()).toBe(enode);
    });

    describe('status --all: a stack of three nodes on two paths (this writer, a validator and a bootnode on a cluster)', () => {
      const { cluster, itWithCluster } = clusterForSuite();
      const namespace = 'fleet';
      const kubernetesNodes = (['validator', 'bootnode'] as const).map((type, index) => ({
        type,
        key: `0x${String(index + 2).padStart(64, '0')}`,
        values: valuesFor('testnet', type, { namespace }),
      }));
      const standinsOf: RunningStandin[] = [];
      let fleetConfig: string;

      beforeAll(async () => {
        const config: Record<string, unknown> = {
          ...stack(NEXT),
          'lacchain:kubeContext': cluster().context,
          'lacchain:nodes': [
            ...(stack(NEXT)['lacchain:nodes'] as object[]),
            ...kubernetesNodes.map(({ type }) => ({ name: type, typenode: type, target: 'kubernetes' })),
          ],
        };
        const files = Object.fromEntries(kubernetesNodes.map(({ type, values }) => [`values/${type}.yml`, values]));
        const declared = await declareProgram(
          recorded,
          'testnet',
          { ...config, 'lacchain:nodeKeys': Object.fromEntries(kubernetesNodes.map(({ type, key }) => [type, key])) },
          files,
        );
        await applyServerSide(cluster(), kubernetesManifests(declared));
        fs.mkdirSync(path.join(work, 'values'), { recursive: true });
        for (const [file, values] of Object.entries(files)) fs.writeFileSync(path.join(work, file), yaml.dump(values));
        fleetConfig = path.join(work, 'Pulumi.fleet.yaml');
        config['lacchain:sshPrivateKey'] = { secure: 'v1:encrypted' };
        config['lacchain:metricsToken'] = { secure: 'v1:encrypted' };
        fs.writeFileSync(fleetConfig, yaml.dump({ config }));
        // The writer's companions settled after the restarts of the tests before (each starts once Besu answers).
        for (const companion of [RELAY_SIGNER, ETHSTATS]) await unitState(`besu-${companion.name}`);
        // Each cluster node's RPC: the Besu stand-in with its key, registered in the contract with its bootnodes.
        for (const { type, key, values } of kubernetesNodes) {
          const bootnodes = NETWORKS['open-protestnet'].bootnodes[type];
          const own = deriveIdentity(key, values.deploy.p2p.host, values.deploy.p2p.port).enode;
          const standin = await startBesuStandin(key, values.deploy.p2p.host, values.deploy.p2p.port, {
            contract: NETWORKS['open-protestnet'].nodesPermissioningContract,
            bootnodes,
          });
          // Its three plain peers registered too: they dial it, and it keeps them (real connections).
          standin.register([own, ...bootnodes, ...standin.peerEnodes].map((each) => ({ enode: each })));
          standinsOf.push(standin);
          await standin.setPeers(3);
          await fieldWhen(
            cluster(),
            { kind: 'pod', name: `besu-node-${type}-0`, namespace },
            '{.status.phase}',
            (phase) => phase === 'Running',
          );
        }
      });

      afterAll(() => Promise.all(standinsOf.map((standin) => standin.stop())));

      itWithCluster(
        'one row per node, asked in parallel, each through its own client; --json for scripts',
        async () => {
          const args = [
            'status',
            '--all',
            ...nodeToolArgs(fleetConfig, host.privateKeyFile),
            ...kubernetesNodes.flatMap(({ type }, i) => ['--rpc-url', `${type}=${standinsOf[i].rpcUrl}`]),
          ];
          const env = { KUBECONFIG: cluster().kubeconfig, PATH: `${cluster().binDir}:${process.env.PATH}` };
          const table = await runNpmAsync('node', args, { env });
          progress(`npm run node -- status --all (exit ${table.code}):\n${table.stdout}${table.stderr}`);
          expect(table.stderr).toBe('');
          const release = NEXT.replace(/\./g, '\\.');
          expect(table.stdout.trimEnd().split('\n')).toEqual([
            expect.stringMatching(
              /^NODE +TYPE +PATH +RELEASE +SERVICE +PEERS +HEAD +BEHIND +PERMISSIONED +COMPANIONS$/,
            ),
            expect.stringMatching(new RegExp(`^writer +writer +ssh +${release} +started +1 +\\d+ +0 +yes +2/2 up$`)),
            expect.stringMatching(/^validator +validator +kubernetes +\S+ +Running +3 +\d+ +0 +yes +\d\/\d up$/),
            expect.stringMatching(/^bootnode +bootnode +kubernetes +\S+ +Running +3 +\d+ +0 +yes +(-|\d\/\d up)$/),
          ]);
          expect(table.code).toBe(0);
          const json = await runNpmAsync('node', [...args, '--json'], { env });
          expect(
            JSON.parse(json.stdout).map((row: { node: string; path: string; permissioned: boolean }) => [
              row.node,
              row.path,
              row.permissioned,
            ]),
          ).toEqual([
            ['writer', 'ssh', true],
            ['validator', 'kubernetes', true],
            ['bootnode', 'kubernetes', true],
          ]);
        },
      );
    });

    it('an unreachable node is a clear error, not a stack trace', async () => {
      const result = await operation('status', '--ssh-option', 'ProxyCommand=false');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`cannot reach operator@${host.ip}:22 over SSH`);
      expect(result.stderr).not.toMatch(/\.ts:\d+/);
    });
  });
});

/**
 * A move cut at each of its steps (testing/cuts/moveCuts.ts: every step of the move's own list), SSH to SSH, on two
 * real test hosts: a writer (key custody machine: its key carried root to root) moves from one to the other and back,
 * each move cut once at its moment, then run again. At every cut: the move's last line says where it stopped and how
 * to go on, the old node does not run and does not start even when asked, and the new machine runs the node only when
 * the cut came after its start; run again, the move finishes: the data (a marker, the height) and the key (the
 * enode's node id) are there, the old service is removed. Cuts inside the old node's stop (the move's script on the
 * old machine held right after one of its commands by a failpoint, then its session killed or the network dropped):
 * the last line says what the stop reached as the old machine shows it (still running, stopped and kept from starting,
 * stopped and not kept: a start runs it) or that the tool could not tell, and the move run again finishes. Over every
 * move, the two hosts' journals show the node never running on both at once. Last, a move with a new key
 * (`--new-key`): a new enode and its re-permissioning request, the old key never carried, the old node kept from
 * starting. The operator's network is cut through a relay of this process (testing/cuts/connectionCut.ts); `pulumi up`
 * is replayed on the new host as the engine runs it, reading the machine's key back (testing/replay.ts). Light: one
 * release, no companions (Besu stand-in, a test fixture).
 */
import { joinMoveHosts, movedTo, MOVED_WRITER, moveWriterStack } from '../../testing/moveStack';
import { asRoot, hostRpc, unitTimes as unitsOf } from '../../testing/hostNode';
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { MACHINE_MOVE_FILES, MOVE_STEPS, MoveStep } from '../../core/catalog/move';
import { parseEnode } from '../../core/identity/nodeKey';
import { moveCutLine, moveNode } from '../../cli/operations/move';
import type { MoveResult } from '../../cli/operations/moveShared';
import { ToolFailure } from '../../cli/cli';
import { CuttableNetwork } from '../../testing/cuts/connectionCut';
import { CutBounds, withinCutBounds } from '../../testing/cuts/boundedCut';
import { armFailpoint, cutStep, FAILPOINT, killSessionsOf, removeFailpoint, untilHolds } from '../../testing/cuts/cut';
import { MoveCut, moveCuts } from '../../testing/cuts/moveCuts';
import { packagesInstalledDisk } from '../../testing/host/packagesDisk';
import { startTestHost, TestHost } from '../../testing/host/testHost';
import { hostSuite, progress } from '../../testing/hostSuite';
import { operatorStackFile } from '../../testing/nodeTool';
import { declareProgram, recordRun } from '../../testing/program';
import { startReleaseHost, stopReleaseHost, ReleaseHost } from '../../testing/releaseHost';
import { remoteCommands, runRemoteStep, runRemoteSteps, upReadingBack, upToNodeKey } from '../../testing/replay';

const suite = hostSuite('a move cut at each of its steps');
jest.setTimeout(10 * 60 * 1000);

const RELEASE = '24.1.0';
const { stack: STACK, node: NODE, service: SERVICE, data: DATA } = MOVED_WRITER;
const KEY = `${DATA}/key`;
const MARKER = 'written-before-the-moves';
/** Random bytes in the node's data, so that the backup's copy and the repository's carry last long enough to be cut. */
const FILLER_MIB = 24;
const CUTS = moveCuts(SERVICE);
/**
 * How long a cut move may go on once cut (a dropped connection ends at once, a dead one by ssh's keepalive in about a
 * minute; a cut in pulumi up's start step comes after its first steps), and in all: past either it fails at once,
 * saying what still ran, instead of taking jest's 600 s and leaving the node stopped for every case after it.
 */
const CUT_BOUNDS: CutBounds = { afterCut: 180, total: 420 };
const CASES = (Object.keys(MOVE_STEPS) as MoveStep[]).flatMap((step) => CUTS[step].map((cut) => ({ step, cut })));

suite('npm run node -- move, cut at each step, then run again (SSH to SSH)', () => {
  let first: ReleaseHost;
  let second: TestHost;
  let network: CuttableNetwork;
  let dir: string;
  let configFile: string;
  /** Where the node runs now, and the other host. */
  let here: TestHost;
  let there: TestHost;
  let nodeId: string;
  const startedAt = Date.now() / 1000;
  const seconds: string[] = [];

  /** The stack of one writer on `host` (key custody machine, a backup password of its own). */
  const stackOn = (host: TestHost): Record<string, unknown> => {
    const config = moveWriterStack(host, first, RELEASE, { nodeName: 'e2e-move-cuts', dnsName: 'move-cuts.e2e.test' });
    const [node] = config['lacchain:nodes'] as Record<string, unknown>[];
    node.keyCustody = 'machine';
    config['lacchain:backupPassword'] = 'e2e-move-cuts-backup-password';
    return config;
  };
  const root = asRoot;
  const rpc = hostRpc;
  const active = async (host: TestHost) =>
    (await host.ssh(`systemctl is-active ${SERVICE}`)).stdout.trim() === 'active';
  /** Each Started and Stopped line of the node's unit in a host's journal since the suite began (epoch seconds). */
  const unitTimes = (host: TestHost) => unitsOf(host, SERVICE, startedAt);
  /** The moments, from both journals, when the node ran on both hosts at once (none expected). */
  const bothRunning = async () => {
    const events = [...(await unitTimes(here)), ...(await unitTimes(there))].sort(
      (a, b) => a.at - b.at || Number(a.started) - Number(b.started),
    );
    const running = new Set<string>();
    const overlaps: number[] = [];
    for (const event of events) {
      if (event.started) running.add(event.host);
      else running.delete(event.host);
      if (running.size > 1) overlaps.push(event.at);
    }
    return overlaps;
  };
  /** `pulumi up` reaches a machine over the operator's network first: the engine's connection, through the relay. */
  const engineReaches = (host: TestHost) =>
    new Promise<void>((resolve, reject) =>
      execFile(
        'ssh',
        [...host.sshOptions, '-o', network.sshOptions[0], `root@${host.ip}`, 'true'],
        { timeout: 60_000 },
        (error, _stdout, stderr) =>
          error
            ? reject(new ToolFailure(`pulumi up --stack ${STACK} failed (exit 255): ${stderr.trim() || error.message}`))
            : resolve(),
      ),
    );
  /**
   * `pulumi up` of the stack file the move wrote, as the engine runs it on `host`: the machine's key read back after
   * its node-key step; `cutStart`: its start step's sessions killed as that condition holds on the machine.
   */
  const bringUpOn = (host: TestHost, cutStart?: string) => async () => {
    await engineReaches(host);
    if (!cutStart) {
      await upReadingBack(host, STACK, stackOn(host));
      return;
    }
    const config = stackOn(host);
    const before = await declareProgram(recordRun({ stack: STACK, preview: true }), STACK, config, {});
    const runs = await runRemoteSteps(host, remoteCommands(before).filter(upToNodeKey));
    const nodeKeyStdout = Object.fromEntries(
      runs.filter((run) => run.name.endsWith('-node-key')).map((run) => [run.name, run.stdout]),
    );
    const declared = await declareProgram(
      recordRun({ stack: STACK, preview: false, nodeKeyStdout }),
      STACK,
      config,
      {},
    );
    for (const step of remoteCommands(declared).filter((s) => !upToNodeKey(s))) {
      if (step.name.endsWith('-start')) {
        const outcome = await cutStep(host, step, { when: cutStart, what: 'the start step restores' }, 'ssh');
        if (outcome.cut) throw new ToolFailure(`pulumi up --stack ${STACK} failed (exit 255): ${step.name} was cut`);
        throw new Error(`${step.name} ended (exit ${outcome.code}) before its cut`);
      }
      const result = await runRemoteStep(host, step);
      if (result.code !== 0) throw new Error(`step ${step.name} failed (${result.code}):\n${result.stderr}`);
    }
  };
  /** The move of the node from `here` to `there`, as `npm run node -- move` asks it, through the cuttable network. */
  const request = (newKey = false) => {
    const { movedText, from, to } = movedTo(STACK, configFile, NODE, there, path.join(dir, 'moved.yaml'));
    const ssh = { keyFile: first.host.privateKeyFile, options: network.sshOptions };
    return { stack: STACK, from, to, configFile, movedText, ssh, newKey };
  };
  /** Checks a move that finished: the node on `there` with its data, the old service gone; then the two swap. */
  const finished = async (result: MoveResult, headBefore: number, what: string) => {
    seconds.push(`${what}: ${result.seconds.toFixed(1)} s`);
    progress(`${what} took ${result.seconds.toFixed(1)} s (Besu stand-in)`);
    expect(await root(there, `cat ${DATA}/move-marker`)).toBe(MARKER);
    expect(Number.parseInt(await rpc(there, 'eth_blockNumber'), 16)).toBeGreaterThanOrEqual(headBefore);
    expect((await here.ssh(`systemctl cat ${SERVICE}`)).code).not.toBe(0);
    // No copy of the key is left behind on the new machine, root's or not (the node-key step took it in).
    expect(await root(there, `test -e ${MACHINE_MOVE_FILES.incomingKey(SERVICE)} && echo left || echo none`)).toBe(
      'none',
    );
    expect(await bothRunning()).toEqual([]);
    [here, there] = [there, here];
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-move-cuts-'));
    network = await CuttableNetwork.open();
    first = await startReleaseHost('cutmvold', 58, [RELEASE], { packagesInstalled: true });
    second = await startTestHost('cutmvnew', 59, { base: await packagesInstalledDisk() });
    await joinMoveHosts(second, first);
    [here, there] = [first.host, second];
    await upReadingBack(here, STACK, stackOn(here));
    nodeId = parseEnode(await rpc(here, 'net_enode'))!.nodeId;
    for (let i = 0; i < 40 && Number.parseInt(await rpc(here, 'eth_blockNumber'), 16) < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await root(
      here,
      `runuser -u besu -- sh -c 'echo ${MARKER} > ${DATA}/move-marker && head -c ${FILLER_MIB}M /dev/urandom > ${DATA}/filler'`,
    );
    configFile = operatorStackFile(dir, stackOn(here));
  });

  afterAll(async () => {
    if (seconds.length > 0) console.log(`moves (Besu stand-in):\n${seconds.join('\n')}`);
    await network?.close();
    await second?.stop();
    if (first) await stopReleaseHost(first);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every step of the move has its cuts', () => {
    for (const step of Object.keys(MOVE_STEPS) as MoveStep[])
      expect([step, CUTS[step].length > 0]).toEqual([step, true]);
  });

  for (const { step, cut } of CASES) {
    it(`${MOVE_STEPS[step]}: cut ${cut.what}`, async () => {
      const asked = request();
      const headBefore = Number.parseInt(await rpc(here, 'eth_blockNumber'), 16);
      if (cut.stoppedBefore) expect((await here.ssh(`systemctl stop ${SERVICE}`)).code).toBe(0);
      const error = await cutMove(cut, asked).finally(() => network.restore());
      // The move's last line: where it stopped, how to go on (inside the stop: what the stop reached).
      expect(error).toBeInstanceOf(ToolFailure);
      expect(error.message.split('\n').pop()).toBe(moveCutLine(STACK, NODE, cut.stoppedAt, cut.stopReached));
      // One place runnable, never two: the old node runs only when the cut came before its stop, and once stopped
      // does not start when asked unless the line said it was not yet kept from starting; the new one runs only once
      // the move's bring-up started it.
      expect(await active(here)).toBe(cut.oldRuns === true);
      if (!cut.oldRuns) {
        await here.ssh(`systemctl start ${SERVICE}`);
        expect(await active(here)).toBe(cut.stopReached === 'stopped');
      }
      expect(await active(there)).toBe(step === 'health' || step === 'removeOld');
      expect(await bothRunning()).toEqual([]);

      // Run again: the move goes on and finishes.
      const result = await moveNode(asked, { bringUp: bringUpOn(there) });
      expect(parseEnode(await rpc(there, 'net_enode'))).toMatchObject({ nodeId, host: there.ip });
      await finished(result, headBefore, `run again after a cut ${cut.what}`);
    });
  }

  it('--new-key: a new key at the new place, the old one never carried, the request names both enodes', async () => {
    const asked = request(true);
    const headBefore = Number.parseInt(await rpc(here, 'eth_blockNumber'), 16);
    const oldEnode = await rpc(here, 'net_enode');
    const oldKey = await root(here, `sha256sum < ${KEY}`);
    const result = await moveNode(asked, { bringUp: bringUpOn(there) });
    const newEnode = await rpc(there, 'net_enode');
    expect(parseEnode(newEnode)?.nodeId).not.toBe(nodeId);
    expect(result.newEnode).toBe(newEnode);
    expect(result.repermissioning).toMatchObject({ removeEnode: oldEnode, enode: newEnode, nodeName: 'e2e-move-cuts' });
    // The old key: never carried (no incoming key was written), not the new machine's; kept on the old one.
    expect(await root(there, `sha256sum < ${KEY}`)).not.toBe(oldKey);
    expect(await root(here, `sha256sum < ${KEY}`)).toBe(oldKey);
    expect(await root(there, `test -e ${MACHINE_MOVE_FILES.incomingKey(SERVICE)} && echo there || echo none`)).toBe(
      'none',
    );
    // The old node stays kept from starting: its moved-out record is there.
    expect(await root(here, `test -f ${MACHINE_MOVE_FILES.movedOut(SERVICE)} && echo fenced`)).toBe('fenced');
    await finished(result, headBefore, 'move with --new-key');
  });

  /** Runs the move asked, cut at `cut`'s moment: the error it ends with. */
  async function cutMove(cut: MoveCut, asked: ReturnType<typeof request>): Promise<Error> {
    const moment = cut.moment;
    let ended = false;
    let seen = false;
    let cutAt: number | undefined;
    let killing: Promise<unknown> | undefined;
    /** The network goes down at once; then, the harshest end of a dropped connection: its sessions' work stops. */
    const down = () => {
      seen = true;
      cutAt = Date.now();
      network.drop();
      killing = Promise.all([here, there].map((host) => killSessionsOf(host, asked.from.user)));
    };
    const write = process.stdout.write.bind(process.stdout) as (chunk: string | Uint8Array) => boolean;
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      // A printed moment: the network goes down inside the move's print, before its next command.
      if (
        !seen &&
        'printed' in moment &&
        String(chunk)
          .split('\n')
          .some((line) => moment.printed.test(line))
      )
        down();
      return write(chunk);
    });
    /** Only the leave step's own session on the old machine ends: the network stays up for the move's look. */
    const leaveKilled = () => {
      seen = true;
      cutAt = Date.now();
      killing = killSessionsOf(here, asked.from.user);
    };
    const failpoint = 'after' in moment ? moment : undefined;
    if (failpoint) await armFailpoint(here, failpoint.after, failpoint.args);
    const when = failpoint ? `[ -f ${FAILPOINT.hit} ]` : 'when' in moment ? moment.when : undefined;
    const watched =
      'on' in moment && when !== undefined && cut.how !== 'pulumiUpStartStep'
        ? untilHolds(moment.on === 'old' ? here : there, when, () => ended).then((held) => {
            if (held) (cut.how === 'leaveSession' ? leaveKilled : down)();
          })
        : undefined;
    const bringUp =
      cut.how === 'pulumiUpStartStep' && when !== undefined
        ? async () => {
            seen = true;
            cutAt = Date.now();
            await bringUpOn(there, when)();
          }
        : bringUpOn(there);
    try {
      const moved = moveNode(asked, { bringUp }).then(
        () => new Error('the move went through'),
        (e: unknown) => e as Error,
      );
      const error = await withinCutBounds(moved, () => cutAt, CUT_BOUNDS, network.clientMarker, [here, there]).finally(
        () => (ended = true),
      );
      await watched;
      await killing;
      expect(seen).toBe(true);
      progress(`cut ${cut.what}:\n${error.message}`);
      return error;
    } finally {
      spy.mockRestore();
      if (failpoint) await removeFailpoint(here, failpoint.after);
    }
  }
});

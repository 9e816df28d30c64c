/**
 * Cut anywhere, the fixed sample (the whole matrix: `npm run bench -- --only cuts`): on a real Debian host, a change is
 * cut part-way, recovered as docs/operations.md says (`pulumi up` again: the cut command and the ones after it run
 * again), and every invariant is checked at the cut and after the recovery (testing/cuts/invariants.ts). Besu and its
 * companions are stand-ins (test fixtures); systemd, sshd, apt, dpkg, nginx and nftables are real.
 */
import { hostSuite } from '../../testing/hostSuite';
import { startTestHost, TestHost } from '../../testing/host/testHost';
import { processesRunning } from '../../testing/host/localProcesses';
import { changeName, CutLab, momentName, Reference } from '../../testing/cuts/lab';
import { CHANGES, RELEASES, SAMPLE } from '../../testing/cuts/cases';
import { requireTestHosts } from '../../testing/releaseHost';

// Each case boots its host from the disk saved before its change (CutLab.prepare), so a case that failed may run again
// at once, on the state it needs: a step's SSH session was once ended by a signal from nothing the case did (issue 54,
// not yet explained); a second try is counted and named in the summary line.
const suite = hostSuite('cut anywhere (the fixed sample)', { independentTests: true });
jest.setTimeout(10 * 60 * 1000);

suite('a change cut part-way keeps every invariant and converges when run again', () => {
  let lab: CutLab;
  const references = new Map<string, Reference>();
  const referenceOf = async (change: (typeof CHANGES)[number]) => {
    const name = changeName(change);
    // A first install's uncut run starts from the packages-installed disk when no sampled cut of it is placed by a
    // share of the reference's step times (the dpkg cut waits for a moment of its own).
    const timed = SAMPLE.some((sample) => changeName(sample.change) === name && !sample.at);
    if (!references.has(name)) references.set(name, await lab.reference(change, { packagesInstalled: !timed }));
    return references.get(name)!;
  };

  beforeAll(async () => {
    await requireTestHosts();
    lab = await CutLab.open('cutsample', 48, RELEASES);
  });

  afterAll(async () => {
    await lab?.close();
  });

  for (const sample of SAMPLE) {
    const how =
      sample.kind === 'disk'
        ? 'the disk full'
        : sample.change.operation
          ? 'the command cut'
          : sample.kind === 'ssh'
            ? 'the connection dropped'
            : 'the machine stopped hard';
    it(`${changeName(sample.change)}: ${how} in ${sample.step} ${sample.at ? momentName(sample.at) : 'half-way'}`, async () => {
      const reference = await referenceOf(sample.change);
      const at = sample.at ?? { seconds: reference.stepSeconds[sample.step] / 2 };
      const result = await lab.cut(reference, { ...sample, at });
      expect([momentName(at), result.cutInside, result.brokenAtCut, result.brokenAfterRecovery]).toEqual([
        momentName(at),
        true,
        [],
        [],
      ]);
    });
  }
});

suite('the machine stopped hard (testing/host/crash-host.sh), as every machine cut stops it', () => {
  let host: TestHost;
  // A process only this test starts: `sleep` for a number of seconds no one else asks for.
  const witness = `sleep 99999.${process.pid}`;
  const running = () => processesRunning(witness);

  beforeAll(async () => {
    host = await startTestHost('crashwit', 50);
  });

  afterAll(async () => {
    await host?.stop();
  });

  it('leaves no process of the machine running, those of sandboxed services included, and boots it again', async () => {
    // A service with a mount namespace of its own (PrivateTmp), as the node's and the companions' services have: the
    // container's processes cannot be told by their root directory alone (a regression: such a machine outlived its
    // stop, its node still holding its ports when the machine came back).
    const started = await host.ssh(`systemd-run --unit=crash-witness -p PrivateTmp=yes ${witness}`);
    expect(started.code).toBe(0);
    // systemd-run returns once the unit's process is forked: its exec of the witness may come a moment later (seen
    // on a busy machine), so wait for it, up to 10 s.
    for (let i = 0; i < 100 && running().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(running()).toHaveLength(1);
    await host.crash();
    expect(running()).toEqual([]);
    expect((await host.ssh('systemctl is-active crash-witness || true')).stdout.trim()).toBe('inactive');
  });
});

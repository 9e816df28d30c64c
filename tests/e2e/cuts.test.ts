/**
 * Cut anywhere, the fixed sample (the whole matrix: `npm run bench -- --only cuts`): on a real Debian host, a change is
 * cut part-way, recovered as docs/operations.md says (`pulumi up` again: the cut command and the ones after it run
 * again), and every invariant is checked at the cut and after the recovery (testing/cuts/invariants.ts). Besu and its
 * companions are stand-ins (test fixtures); systemd, sshd, apt, dpkg, nginx and nftables are real.
 */
import { hostSuite } from '../../testing/hostSuite';
import { canBuildHosts } from '../../testing/host/testHost';
import { changeName, CutLab, momentName, Reference } from '../../testing/cuts/lab';
import { CHANGES, RELEASES, SAMPLE } from '../../testing/cuts/cases';

const suite = hostSuite('cut anywhere (the fixed sample)');
jest.setTimeout(10 * 60 * 1000);

suite('a change cut part-way keeps every invariant and converges when run again', () => {
  let lab: CutLab;
  const references = new Map<string, Reference>();
  const referenceOf = async (change: (typeof CHANGES)[number]) => {
    const name = changeName(change);
    if (!references.has(name)) references.set(name, await lab.reference(change));
    return references.get(name)!;
  };

  beforeAll(async () => {
    const check = await canBuildHosts();
    if (!check.ok) throw new Error(`cannot build a test host: ${check.reason}`);
    lab = await CutLab.open('cutsample', 48, RELEASES);
  });

  afterAll(async () => {
    await lab?.close();
  });

  for (const sample of SAMPLE) {
    const how = sample.change.operation
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

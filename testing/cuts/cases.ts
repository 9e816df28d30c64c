/**
 * The cut matrix: which changes are cut, at which steps, how and when. The whole matrix is
 * `npm run bench -- --only cuts`; the test tier runs a fixed sample of it (tests/e2e/cuts.test.ts).
 */
import type { Change, CutCase, Reference } from './lab';
import { cutMoments, CutKind, CutMoment } from './cut';

/** The changes cut: a first install of the oldest release, then the upgrades 23.4.1 -> 24.1.0 -> 25.5.0. */
export const CHANGES: Change[] = [
  { before: [], release: '23.4.1' },
  { before: ['23.4.1'], release: '24.1.0' },
  { before: ['23.4.1', '24.1.0'], release: '25.5.0' },
];

/** The releases the changes install. */
export const RELEASES = [...new Set(CHANGES.flatMap((change) => [...change.before, change.release]))];

/** Cut moments per step (the issue asks for at least 5, evenly spread). */
export const MOMENTS_PER_STEP = 5;

/** The steps where the machine itself is stopped hard during an upgrade: the release switch and the start. */
export const MACHINE_CUT_STEPS = ['release', 'start'];

/**
 * Every cut of a change, from its uncut run: each step it runs, its SSH connection dropped at MOMENTS_PER_STEP moments
 * evenly spread over the step's uncut time; and for an upgrade, the machine stopped hard at as many moments of its
 * release switch and its start.
 */
export function casesOf(reference: Reference): CutCase[] {
  const cases: CutCase[] = [];
  const add = (step: string, kind: CutKind) => {
    for (const atSeconds of cutMoments(reference.stepSeconds[step], MOMENTS_PER_STEP)) {
      cases.push({ change: reference.change, step, kind, at: { seconds: atSeconds } });
    }
  };
  for (const step of Object.keys(reference.stepSeconds)) add(step, 'ssh');
  if (reference.change.before.length > 0) {
    for (const step of MACHINE_CUT_STEPS.filter((name) => name in reference.stepSeconds)) add(step, 'machine');
  }
  return cases;
}

/** apt's dpkg at work with packages unpacked but not yet configured (`dpkg --audit` lists them): a cut here leaves them so. */
export const DPKG_AT_WORK: CutMoment = {
  when: "pgrep -f 'dpkg --status-fd' >/dev/null && [ -n \"$(dpkg --audit 2>/dev/null)\" ]",
  what: "apt's dpkg has packages half installed",
};

/**
 * The test tier's fixed sample, one per kind of trouble a cut can leave: dpkg cut part-way in a first install's
 * packages (the regression case of the packages step's fix), the release link switched under a running node, and the
 * machine stopped hard while the upgraded node starts. Without a moment: the middle of the step's uncut time.
 */
export const SAMPLE: Array<{ change: Change; step: string; kind: CutKind; at?: CutMoment }> = [
  { change: CHANGES[0], step: 'packages', kind: 'ssh', at: DPKG_AT_WORK },
  { change: CHANGES[1], step: 'release', kind: 'ssh' },
  { change: CHANGES[1], step: 'start', kind: 'machine' },
];

/**
 * The cut matrix: which changes are cut, at which steps, how and when. The whole matrix is
 * `npm run bench -- --only cuts`; the test tier runs a fixed sample of it (tests/e2e/cuts.test.ts).
 */
import { BACKUP_FILLER_MIB, type Change, type CutCase, type Reference } from './lab';
import { afterRename, cutMoments, CutKind, CutMoment } from './cut';
import { DEFAULT_NODE_HOME } from '../../core/catalog/defaults';
import { NODE_HOME_LAYOUT } from '../../core/catalog/remote';
import { BEFORE_RESTORE_SUFFIX, defaultMachineRepository } from '../../core/catalog/backups';
import { DEFAULT_NODE_SERVICE } from '../../core/catalog/defaults';

/** The changes cut: a first install of the oldest release, then the upgrades 23.4.1 -> 24.1.0 -> 25.5.0. */
export const CHANGES: Change[] = [
  { before: [], release: '23.4.1' },
  { before: ['23.4.1'], release: '24.1.0' },
  { before: ['23.4.1', '24.1.0'], release: '25.5.0' },
];

/** The operator's commands cut, on a node upgraded 23.4.1 -> 24.1.0 (so it has the backup a rollback needs). */
const UPGRADED = ['23.4.1', '24.1.0'];
export const OPERATIONS: Change[] = [
  { before: UPGRADED, release: '24.1.0', operation: 'backup' },
  { before: UPGRADED, release: '24.1.0', operation: 'restore' },
  { before: UPGRADED, release: '23.4.1', operation: 'rollback' },
];

/** The releases the changes install. */
export const RELEASES = [
  ...new Set([...CHANGES, ...OPERATIONS].flatMap((change) => [...change.before, change.release])),
];

const dataDir = `${DEFAULT_NODE_HOME}/${NODE_HOME_LAYOUT.dataDir}`;
const releasesDir = `${DEFAULT_NODE_HOME}/${NODE_HOME_LAYOUT.releasesDir}`;
const defaultRepository = defaultMachineRepository(DEFAULT_NODE_SERVICE);

/**
 * The moment each operator's command is cut at on purpose, besides the evenly spread ones: a backup while restic
 * copies (the node stopped for it), a restore between moving the old data aside and moving the restored data in, a
 * rollback between its two release links.
 */
export const OPERATION_MOMENTS: Record<string, CutMoment> = {
  backup: {
    when: `pgrep -f 'restic backup' >/dev/null && [ -n "$(ls -A ${defaultRepository}/locks 2>/dev/null)" ]`,
    what: 'restic copies the data (the node stopped, the repository locked)',
  },
  restore: afterRename(
    `-T ${dataDir} ${dataDir}${BEFORE_RESTORE_SUFFIX}`,
    'the old data moved aside, the restored data not yet in place',
  ),
  rollback: afterRename(`-Tf ${releasesDir}/previous.new ${releasesDir}/previous`, 'the release links half switched'),
};

/** Cut moments per step, evenly spread over it. */
export const MOMENTS_PER_STEP = 5;
/** Moments of a machine stopped hard per step (each boots the machine again: dearer). */
export const MACHINE_MOMENTS_PER_STEP = 3;
/** The steps not cut: the preflight only reads the machine (it changes nothing a cut could leave half done). */
export const STEPS_NOT_CUT = ['preflight'];

/** The steps where the machine itself is stopped hard during an upgrade: the release switch and the start. */
export const MACHINE_CUT_STEPS = ['release', 'start'];

/**
 * Every cut of a change, from its uncut run: each step it runs (but the preflight), its SSH connection dropped at
 * MOMENTS_PER_STEP moments evenly spread over the step's uncut time; for an upgrade, the machine stopped hard at
 * MACHINE_MOMENTS_PER_STEP moments of its release switch and its start; for an operator's command, its own moment.
 */
export function casesOf(reference: Reference): CutCase[] {
  const cases: CutCase[] = [];
  const add = (step: string, kind: CutKind, count: number) => {
    for (const atSeconds of cutMoments(reference.stepSeconds[step], count)) {
      cases.push({ change: reference.change, step, kind, at: { seconds: atSeconds } });
    }
  };
  const operation = reference.change.operation;
  if (operation) return [{ change: reference.change, step: operation, kind: 'ssh', at: OPERATION_MOMENTS[operation] }];
  for (const step of Object.keys(reference.stepSeconds).filter((name) => !STEPS_NOT_CUT.includes(name))) {
    add(step, 'ssh', MOMENTS_PER_STEP);
  }
  if (reference.change.before.length > 0) {
    for (const step of MACHINE_CUT_STEPS.filter((name) => name in reference.stepSeconds)) {
      add(step, 'machine', MACHINE_MOMENTS_PER_STEP);
    }
  }
  return cases;
}

/** apt's dpkg at work with packages unpacked but not yet configured (`dpkg --audit` lists them): a cut here leaves them so. */
export const DPKG_AT_WORK: CutMoment = {
  when: 'pgrep -f \'dpkg --status-fd\' >/dev/null && [ -n "$(dpkg --audit 2>/dev/null)" ]',
  what: "apt's dpkg has packages half installed",
};

/** A stand-in release takes about 100 KiB once unpacked: the releases folder is left less than that. */
const RELEASE_ROOM_KIB = 32;

/**
 * The disks that fill up: the releases folder while an upgrade unpacks the new release, and the backup repository while
 * a backup copies the data (BACKUP_FILLER_MIB of random bytes, a quarter of it left free).
 */
export const DISK_FULL: CutCase[] = [
  {
    change: CHANGES[2],
    step: 'release',
    kind: 'disk',
    at: { folder: releasesDir, freeKib: RELEASE_ROOM_KIB, what: 'the releases folder fills up while unpacking' },
  },
  {
    change: OPERATIONS[0],
    step: 'backup',
    kind: 'disk',
    at: {
      folder: defaultRepository,
      freeKib: (BACKUP_FILLER_MIB * 1024) / 4,
      what: 'the repository fills up while restic copies',
    },
  },
];

/**
 * The test tier's fixed sample: the regression case of each fix the matrix led to (dpkg cut with packages half installed;
 * a backup cut with the node stopped and the repository locked; a restore cut between its two renames), a rollback cut
 * between its two links, the machine stopped hard while the upgraded node starts, and both full disks. Without a moment: the middle of the step's uncut time.
 */
export const SAMPLE: Array<{ change: Change; step: string; kind: CutKind; at?: CutMoment }> = [
  { change: CHANGES[0], step: 'packages', kind: 'ssh', at: DPKG_AT_WORK },
  { change: CHANGES[1], step: 'start', kind: 'machine' },
  ...OPERATIONS.map((change) => ({
    change,
    step: change.operation!,
    kind: 'ssh' as const,
    at: OPERATION_MOMENTS[change.operation!],
  })),
  ...DISK_FULL,
];

/**
 * The cut matrix of `npm run node -- move` (docs/moving.md), SSH to SSH: for every step of the move's own list
 * (MOVE_STEPS, core/catalog/move.ts), the moments it is cut at. The table is typed by that list, so a step added to
 * the move has no cut until one is written here, and the code does not compile until then (tests/e2e/moveCuts.test.ts
 * runs every case).
 */
import { MACHINE_MOVE_FILES, MoveStep } from '../../core/catalog/move';

/**
 * When a move is cut: as it prints a line (seen while it prints it, before its next command), or as soon as a shell
 * condition holds on one of its two machines (polled there as root, testing/cuts/cut.ts untilHolds; a `pgrep -f`
 * pattern is written `[r]estic …` so that it never matches the polling shell's own command line).
 */
export type MoveMoment = { printed: RegExp } | { on: 'old' | 'new'; when: string };

/** One cut of a move. */
export interface MoveCut {
  /** The moment, in words. */
  what: string;
  moment: MoveMoment;
  /**
   * How: the operator's network goes down (every ssh connection of the move ends, new ones refused, and the login
   * user's sessions on both machines killed), or the `pulumi up` the move runs has its start step's sessions on the new
   * machine killed (as the cut matrix cuts a step, testing/cuts/cut.ts cutStep).
   */
  how: 'network' | 'pulumiUpStartStep';
  /** The step the cut move says it stopped at (its last line, cli/operations/move.ts moveCutLine). */
  stoppedAt: MoveStep;
}

/** The cuts of each step of a move of the node whose service is `service`, its backups in `repository`. */
export function moveCuts(service: string): Record<MoveStep, MoveCut[]> {
  return {
    stopOld: [
      {
        what: 'right after the old node stopped and was kept from starting',
        moment: { printed: new RegExp(`^ {2}${service} stopped on `) },
        how: 'network',
        stoppedAt: 'lastBackup',
      },
    ],
    lastBackup: [
      {
        what: 'while restic copies the old node’s data',
        moment: { on: 'old', when: "pgrep -f '[r]estic backup' >/dev/null" },
        how: 'network',
        stoppedAt: 'lastBackup',
      },
      {
        what: 'right after the last backup, before the carry',
        moment: { printed: /^ {2}backup [0-9a-f]+ \(Besu / },
        how: 'network',
        stoppedAt: 'carry',
      },
    ],
    carry: [
      {
        what: 'while the repository is unpacked on the new machine',
        moment: { on: 'new', when: 'pgrep -x tar >/dev/null' },
        how: 'network',
        stoppedAt: 'carry',
      },
      {
        what: 'right after the key was carried, before the move record',
        moment: { on: 'new', when: `[ -f ${MACHINE_MOVE_FILES.incomingKey(service)} ]` },
        how: 'network',
        stoppedAt: 'carry',
      },
    ],
    bringUp: [
      {
        what: 'right after the stack file names the new machine, before pulumi up',
        moment: { printed: / names the new machine \(the file before: / },
        how: 'network',
        stoppedAt: 'bringUp',
      },
      {
        what: "in pulumi up's start step, while it restores the data before the node's first start",
        moment: { on: 'new', when: "pgrep -f '[r]estic restore' >/dev/null" },
        how: 'pulumiUpStartStep',
        stoppedAt: 'bringUp',
      },
    ],
    health: [
      {
        what: "as the move starts waiting for the new node's health",
        moment: { printed: /^5\/6 / },
        how: 'network',
        stoppedAt: 'health',
      },
    ],
    removeOld: [
      {
        what: "before the old machine's service is removed",
        moment: { printed: /^6\/6 / },
        how: 'network',
        stoppedAt: 'removeOld',
      },
    ],
  };
}

/**
 * The cut matrix of `npm run node -- move` (docs/moving.md), SSH to SSH: for every step of the move's own list
 * (MOVE_STEPS, core/catalog/move.ts), the moments it is cut at. The table is typed by that list, so a step added to
 * the move has no cut until one is written here, and the code does not compile until then (tests/e2e/moveCuts.test.ts
 * runs every case).
 */
import { MACHINE_MOVE_FILES, MoveStep } from '../../core/catalog/move';
import type { StopReached } from '../../cli/operations/moveStopReached';
import { FailpointCommand } from './cut';
import { SIBLING_TEMP_SUFFIX } from './machineState';

/**
 * When a move is cut: as it prints a line (seen while it prints it, before its next command), as soon as a shell
 * condition holds on one of its two machines (polled there as root, testing/cuts/cut.ts untilHolds; a `pgrep -f`
 * pattern is written `[r]estic …` so that it never matches the polling shell's own command line), or inside the
 * move's script on the old machine, right after one of its commands (a failpoint: testing/cuts/failpoint.sh, which
 * waits there until the cut).
 */
export type MoveMoment =
  { printed: RegExp } | { on: 'old' | 'new'; when: string } | { on: 'old'; after: FailpointCommand; args: string };

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
  how: 'network' | 'pulumiUpStartStep' | 'leaveSession';
  /** The step the cut move says it stopped at (its last line, cli/operations/move.ts moveCutLine). */
  stoppedAt: MoveStep;
  /**
   * A cut inside the stop (`leaveSession`: the leave step's own session on the old machine killed, the operator's
   * network up): how far the stop got, as the move's last line says it after its look at the old machine (`unknown`
   * when the network is down).
   */
  stopReached?: StopReached;
  /** Whether the old node still runs after the cut (the stop cut before its `systemctl stop`). */
  oldRuns?: boolean;
  /** Whether the operator stopped the old node before the move (a node already down when it is moved). */
  stoppedBefore?: boolean;
}

/** The cuts of each step of a move of the node whose service is `service`, its backups in `repository`. */
export function moveCuts(service: string): Record<MoveStep, MoveCut[]> {
  const movedOut = MACHINE_MOVE_FILES.movedOut(service);
  /** Right after the leave step's `systemctl daemon-reload`: the drop-ins loaded, the node not yet stopped. */
  const fenceLoaded = { on: 'old', after: 'systemctl', args: 'daemon-reload' } as const;
  return {
    stopOld: [
      {
        what: 'right after the old node stopped and was kept from starting',
        moment: { printed: new RegExp(`^ {2}${service} stopped on `) },
        how: 'network',
        stoppedAt: 'lastBackup',
      },
      {
        what: "inside the stop, its drop-ins loaded, before systemctl stop (the leave step's session killed)",
        moment: fenceLoaded,
        how: 'leaveSession',
        stoppedAt: 'stopOld',
        stopReached: 'running',
        oldRuns: true,
      },
      {
        what: 'inside the stop, its drop-ins loaded, before systemctl stop (the network down)',
        moment: fenceLoaded,
        how: 'network',
        stoppedAt: 'stopOld',
        stopReached: 'unknown',
        oldRuns: true,
      },
      {
        what: "inside the stop, right after systemctl stop, before it says when (the leave step's session killed)",
        moment: { on: 'old', after: 'systemctl', args: `stop ${service}` },
        how: 'leaveSession',
        stoppedAt: 'stopOld',
        stopReached: 'kept',
      },
      {
        what: "inside the stop of a node already stopped, its moved-out record written, before its drop-ins (the leave step's session killed)",
        moment: { on: 'old', after: 'mv', args: `-f ${movedOut}${SIBLING_TEMP_SUFFIX} ${movedOut}` },
        how: 'leaveSession',
        stoppedAt: 'stopOld',
        stopReached: 'stopped',
        stoppedBefore: true,
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
        // The carry's own tar (`tar -C <parent> --no-same-owner -xf - …`, cli/operations/move.ts), not any tar.
        moment: { on: 'new', when: "pgrep -f '^tar -C [^ ]+ --no-same-owner -xf -' >/dev/null" },
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

/**
 * The cut matrix of the moves between a machine and a cluster (`npm run node -- move --to-kubernetes` and
 * `--from-kubernetes`, docs/moving.md): for every step of each move's own list (CLUSTER_MOVE_STEPS and
 * MACHINE_FROM_CLUSTER_STEPS, core/catalog/move.ts), the moment it is cut at. The tables are typed by those lists, so
 * a step added to a move has no cut until one is written here, and the code does not compile until then
 * (tests/kubelet/clusterMoveCuts.test.ts runs them, one after another: each cut move is run again and cut at the next).
 */
import { CLUSTER_MOVE_STEPS, ClusterMoveStep, MACHINE_FROM_CLUSTER_STEPS } from '../../core/catalog/move';
import type { MachineFromClusterStep } from '../../core/catalog/move';
import type { StopReached } from '../../cli/operations/moveStopReached';

/**
 * When a cluster move is cut, the operator's network going down (ssh to the machine and kubectl to the cluster): as
 * it prints a line (seen while it prints it, before its next command), or inside the move's own `pulumi up` once that
 * run has made its changes, before it ends (the engine's connection lost as it was about to report).
 */
export type ClusterMoveMoment = { printed: RegExp } | { inPulumiUp: 'afterItsChanges' };

/** One cut of a cluster move, at a step of `Step`. */
export interface ClusterMoveCut<Step extends string> {
  /** The moment, in words. */
  what: string;
  moment: ClusterMoveMoment;
  /** The step the cut move says it stopped at (its last line: clusterMoveCutLine, machineMoveCutLine). */
  stoppedAt: Step;
  /** Whether the node runs at its new place after the cut (its start came before it). */
  newRuns: boolean;
  /** A cut inside the old place's stop: what the move's last line says the stop reached (unknown: no answer). */
  stopReached?: StopReached;
}

/** A cut as step `step` of `steps` begins (the line `sayStep` prints, `n/total `): the move stops there. */
function asItBegins<Step extends string>(
  steps: Readonly<Record<Step, string>>,
  step: Step,
  what: string,
  newRuns: boolean,
): ClusterMoveCut<Step> {
  const names = Object.keys(steps);
  return {
    what,
    moment: { printed: new RegExp(`^${names.indexOf(step) + 1}/${names.length} `) },
    stoppedAt: step,
    newRuns,
  };
}

const BACKUP_TAKEN = /^ {2}backup [0-9a-f]+ \(Besu /;

/** The cuts of a move of the SSH node whose service is `service` into the cluster, one per step. */
export function toClusterCuts(service: string): Record<ClusterMoveStep, ClusterMoveCut<ClusterMoveStep>> {
  return {
    stopOld: {
      what: 'right after the old node stopped and was kept from starting',
      moment: { printed: new RegExp(`^ {2}${service} stopped on `) },
      stoppedAt: 'lastBackup',
      newRuns: false,
    },
    lastBackup: {
      what: "right after the last backup, before the node's objects are made in the cluster",
      moment: { printed: BACKUP_TAKEN },
      stoppedAt: 'prepare',
      newRuns: false,
    },
    prepare: {
      what: 'in the first pulumi up, once it made the StatefulSet with no pod',
      moment: { inPulumiUp: 'afterItsChanges' },
      stoppedAt: 'prepare',
      newRuns: false,
    },
    carry: {
      what: "right after the data volume was filled, before the pod's start",
      moment: { printed: /^ {2}filled \S+ from backup / },
      stoppedAt: 'bringUp',
      newRuns: false,
    },
    bringUp: {
      what: 'in the second pulumi up, once the pod started on the filled volume',
      moment: { inPulumiUp: 'afterItsChanges' },
      stoppedAt: 'bringUp',
      newRuns: true,
    },
    health: asItBegins(CLUSTER_MOVE_STEPS, 'health', "as the move starts waiting for the pod's health", true),
    removeOld: asItBegins(CLUSTER_MOVE_STEPS, 'removeOld', "before the old machine's service is removed", true),
  };
}

/**
 * The cuts of a move of the cluster node whose pod is `pod` onto a machine: one per step, and first one inside the
 * pod's stop (its StatefulSet at no pod, the pod not yet gone: the network down, the tool cannot look).
 */
export function fromClusterCuts(pod: string): Record<MachineFromClusterStep, ClusterMoveCut<MachineFromClusterStep>[]> {
  const cuts = {
    stopOld: {
      what: 'right after the pod was gone, its StatefulSet kept at no pod',
      moment: { printed: new RegExp(`^ {2}the pod ${pod} is gone at `) },
      stoppedAt: 'lastBackup',
      newRuns: false,
    },
    lastBackup: {
      what: 'right after the last backup, before the carry',
      moment: { printed: BACKUP_TAKEN },
      stoppedAt: 'carry',
      newRuns: false,
    },
    carry: {
      what: 'right after the repository reached the machine, before the backup to restore is recorded there',
      moment: { printed: /^ {2}carried the repository to / },
      stoppedAt: 'carry',
      newRuns: false,
    },
    bringUp: {
      what: "in pulumi up, once the node started on the machine, before the cluster's objects are deleted",
      moment: { inPulumiUp: 'afterItsChanges' },
      stoppedAt: 'bringUp',
      newRuns: true,
    },
    health: asItBegins(MACHINE_FROM_CLUSTER_STEPS, 'health', "as the move starts waiting for the machine's node", true),
    removeOld: asItBegins(MACHINE_FROM_CLUSTER_STEPS, 'removeOld', "before the cluster's StatefulSet is removed", true),
  } satisfies Record<MachineFromClusterStep, ClusterMoveCut<MachineFromClusterStep>>;
  const insideStop: ClusterMoveCut<MachineFromClusterStep> = {
    what: 'inside the stop, its StatefulSet at no pod, before the pod is gone (the network down)',
    moment: { printed: new RegExp(`^ {2}the StatefulSet \\S+ is at no pod: waiting for the pod ${pod} to stop`) },
    stoppedAt: 'stopOld',
    newRuns: false,
    stopReached: 'unknown',
  };
  const each = Object.fromEntries(Object.entries(cuts).map(([step, cut]) => [step, [cut]]));
  return { ...each, stopOld: [insideStop, cuts.stopOld] } as Record<
    MachineFromClusterStep,
    ClusterMoveCut<MachineFromClusterStep>[]
  >;
}

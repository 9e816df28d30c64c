/**
 * How far the old place's stop got when a move ended in its stop step (cut, or failed), as one short look there saw
 * it: the move's last line says that, not what the stop would have reached had it ended (docs/moving.md).
 */
import { MOVED_TO_ANNOTATION } from '../../core/catalog/move';

/**
 * What the stop of the old place reached: the node still `running` there; stopped and `kept` from starting (the move's
 * fence in place); `stopped` but not kept from starting (a start would run it); or `unknown` (the place did not
 * answer).
 */
export type StopReached = 'running' | 'kept' | 'stopped' | 'unknown';

/** How long the look at the old place after a move ended in its stop may take: one short probe, best effort. */
export const STOP_LOOK_TIMEOUT_MS = 20_000;

/** The line move.sh's `look` action prints on the old machine (scripts/remote/move.sh). */
const LOOK_LINE = /^MOVE_OLD_NODE=(running|kept|stopped)$/m;

/** What the old machine's `look` said (its output), `unknown` when it said nothing of it. */
export function stopReachedOnMachine(output: string): StopReached {
  return (LOOK_LINE.exec(output)?.[1] as StopReached | undefined) ?? 'unknown';
}

/** One object of `kubectl get … -o json`'s list, as far as the look at a leaving pod reads it. */
interface ListedObject {
  kind?: string;
  metadata?: { annotations?: Record<string, string> };
  spec?: { replicas?: number; suspend?: boolean };
  status?: { phase?: string };
}

/**
 * What the cluster said of a leaving node (`kubectl get` of its StatefulSet, backup schedule and pod, as a JSON list):
 * `running` while its pod is there (terminating or not); `kept` once it is gone with its StatefulSet at no pod,
 * annotated moved, and its schedule (which scales the StatefulSet back up after a backup) suspended or absent;
 * `stopped` when the pod is gone but not all of that holds (none of them there, kubectl printing nothing, included);
 * `unknown` when the answer is no such list.
 */
export function stopReachedInCluster(listJson: string): StopReached {
  let items: ListedObject[];
  try {
    // kubectl get --ignore-not-found prints nothing when none of them is there.
    const list = (listJson.trim() === '' ? { items: [] } : JSON.parse(listJson)) as { items?: ListedObject[] };
    if (!Array.isArray(list.items)) return 'unknown';
    items = list.items;
  } catch {
    return 'unknown';
  }
  const pod = items.find((item) => item.kind === 'Pod');
  if (pod && !['Succeeded', 'Failed'].includes(pod.status?.phase ?? '')) return 'running';
  const statefulSet = items.find((item) => item.kind === 'StatefulSet');
  const schedule = items.find((item) => item.kind === 'CronJob');
  const held = statefulSet?.spec?.replicas === 0 && Boolean(statefulSet.metadata?.annotations?.[MOVED_TO_ANNOTATION]);
  return held && (schedule === undefined || schedule.spec?.suspend === true) ? 'kept' : 'stopped';
}

/** The words of a move's stop for one kind of old place: each thing it may have reached, in the operator's words. */
export interface StopWords {
  /** Stopped and kept from starting (what the stop reaches when it ends). */
  kept: string;
  /** Stopped, not kept from starting. */
  stopped: string;
  /** Still running. */
  running: string;
  /** Perhaps still running (the place did not answer). */
  mayRun: string;
  /** The old place, as the line says it did not answer. */
  oldPlace: string;
  /** What the new place runs meanwhile: nothing. */
  newPlace: string;
}

/** The words of a machine's stop (the move off a machine, to another one or into a cluster). */
export function machineStopWords(newPlace: string): StopWords {
  return {
    kept: 'the old node is stopped and kept from starting',
    stopped: 'the old node is stopped but not yet kept from starting (do not start it)',
    running: 'the old node still runs',
    mayRun: 'the old node may still run',
    oldPlace: 'the old machine',
    newPlace,
  };
}

/** The words of a pod's stop (the move out of a cluster). */
export const POD_STOP_WORDS: StopWords = {
  kept: 'the pod is stopped and its StatefulSet kept at no pod',
  stopped: 'the pod is stopped but its StatefulSet not yet kept at no pod (it may start the pod again)',
  running: 'the pod still runs',
  mayRun: 'the pod may still run',
  oldPlace: 'the cluster',
  newPlace: 'the new machine runs nothing',
};

/**
 * The last line of a move that ended in its stop step (`where`: "the move stopped at …"), or later with the old place
 * stopped and kept (`reached` kept): what the old place is, that the new one runs nothing, and how to go on (`rerun`:
 * "run … again", the same command). Running the move again is safe from each: it stops the old place and keeps it
 * from starting before anything else.
 */
export function stopReachedLine(where: string, reached: StopReached, words: StopWords, rerun: string): string {
  switch (reached) {
    case 'kept':
      return `${where}: ${words.kept}, ${words.newPlace}; ${rerun} to go on`;
    case 'stopped':
      return `${where}: ${words.stopped}, ${words.newPlace}; ${rerun}: it keeps it from starting, then goes on`;
    case 'running':
      return `${where}: ${words.running} (its stop did not get that far), ${words.newPlace}; ${rerun}: it stops it and keeps it from starting, then goes on`;
    case 'unknown':
      return `${where}: the tool could not tell how far the stop got (${words.oldPlace} did not answer): ${words.mayRun}, ${words.newPlace}; ${rerun}: it first stops it and keeps it from starting, which is safe however far this stop got`;
  }
}

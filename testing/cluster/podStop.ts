/**
 * Watching a node's pod stop while an operation runs, to check what a backup claims ("the node stopped, then
 * copied"): the pod of uid `uid` is read every 200 ms until `stop()`, which says when it was last seen (the moment
 * the read that found it began, so it existed then or later) and the finish times of its containers as last read.
 */
import { fieldOf, ObjectRef } from './objects';
import type { TestCluster } from './cluster';

/** What the watch saw of the pod: when last (ms since the epoch; 0: never), and its containers' `finishedAt`. */
export interface PodSightings {
  lastSeen: number;
  finished: string[];
}

/** Starts watching the pod `uid` at `pod`; `stop()` ends the watch and says what it saw. */
export function watchPodStop(cluster: TestCluster, pod: ObjectRef, uid: string): { stop(): Promise<PodSightings> } {
  const seen: PodSightings = { lastSeen: 0, finished: [] };
  let watching = true;
  const loop = (async () => {
    while (watching) {
      const asked = Date.now();
      const value = await fieldOf(
        cluster,
        pod,
        '{.metadata.uid}|{range .status.containerStatuses[*]}{.state.terminated.finishedAt},{end}',
      );
      if (value.startsWith(`${uid}|`)) {
        seen.lastSeen = asked;
        seen.finished = value.split('|')[1].split(',').filter(Boolean);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    async stop() {
      watching = false;
      await loop;
      return seen;
    },
  };
}

/**
 * Whether the pod watched had stopped before a container that started at `startedAt` (the kubelet's whole seconds):
 * each of its containers finished no later than that second, and the pod was not seen from the next second on.
 * Empty when so; else what contradicts it.
 */
export function stoppedBefore(seen: PodSightings, startedAt: string): string[] {
  const start = Date.parse(startedAt);
  if (Number.isNaN(start)) return [`no start time (${JSON.stringify(startedAt)})`];
  if (seen.lastSeen === 0) return ['the pod was never seen: the watch began too late to tell'];
  const problems = seen.finished
    .filter((finished) => Date.parse(finished) > start)
    .map((finished) => `a container of the pod finished at ${finished}, after the start at ${startedAt}`);
  if (seen.lastSeen >= start + 1000) {
    problems.push(
      `the pod was still there at ${new Date(seen.lastSeen).toISOString()}, after the start at ${startedAt}`,
    );
  }
  return problems;
}

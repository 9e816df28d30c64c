/**
 * A rollout seen from `npm run node -- status --all` (docs/upgrades.md, "Rolling out a change"): how far each node's
 * part is, as its client reads it (an SSH node's health gate record, scripts/remote/gate.sh; a cluster node's
 * StatefulSet roll), and which node the stack's rollout is at. Pure: what the clients read in, rows and lines out.
 */

/** How far a node's part of the last rollout is. */
export interface NodeRolloutState {
  /**
   * `changing`: restarted and not healthy again yet (its gate waits, its pod rolls); `stopped`: its gate gave up, or
   * its time ran out with no gate running (the `pulumi up` was cut); `done`: healthy again.
   */
  state: 'changing' | 'stopped' | 'done';
  /** When its change began, in seconds since the epoch, when known. */
  since?: number;
  /** What was seen last, one line. */
  seen?: string;
}

/** The fields a gate record may have (`change`: written by gates before 2026-12, ignored). */
const RECORD_FIELDS = new Set(['state', 'since', 'until', 'change', 'seen']);

/**
 * The fields of a gate record: `name=value` lines, each a known field once, of printable characters only; undefined
 * for anything else (a record whose lines were forged is none: it is not shown).
 */
function recordFields(text: string): Map<string, string> | undefined {
  const fields = new Map<string, string>();
  for (const line of text.replace(/\n$/, '').split('\n')) {
    const match = /^([a-z]+)=([\x20-\x7e]*)$/.exec(line);
    if (!match || !RECORD_FIELDS.has(match[1]) || fields.has(match[1])) return undefined;
    fields.set(match[1], match[2]);
  }
  return fields;
}

/**
 * An SSH node's state from its gate's record at `now` (seconds), or undefined when there is no record or it is not
 * one: a gate still `waiting` past its `until` is stopped (no gate waits that long: its session was cut).
 */
export function gateRecordState(text: string, now: number): NodeRolloutState | undefined {
  const fields = recordFields(text);
  if (!fields) return undefined;
  const since = Number(fields.get('since'));
  const until = Number(fields.get('until'));
  const seen = fields.get('seen');
  if (!Number.isFinite(since)) return undefined;
  const base = { since, ...(seen ? { seen } : {}) };
  switch (fields.get('state')) {
    case 'passed':
      return { state: 'done', ...base };
    case 'failed':
      return { state: 'stopped', ...base };
    case 'waiting':
      return Number.isFinite(until) && now > until ? { state: 'stopped', ...base } : { state: 'changing', ...base };
    default:
      return undefined;
  }
}

/** What a row says of the rollout: its node's own state, or which node it waits for. */
export type RolloutWord = 'changing' | 'stopped' | `waits for ${string}`;

/** A node as the rollout lines need it: its name and what its client read. */
export interface RolloutRow {
  node: string;
  rollout?: NodeRolloutState;
}

/** The time of day (UTC) of `seconds` since the epoch. */
function timeOfDay(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(11, 19)} UTC`;
}

/**
 * The rollout in progress, given the nodes in the order the rollout changes them: the first node `changing` or
 * `stopped`, and the nodes after it, which wait for it. Undefined when no node is changing or stopped.
 */
export function rolloutInProgress(
  ordered: readonly RolloutRow[],
): { at: RolloutRow; state: NodeRolloutState; waiting: string[] } | undefined {
  const index = ordered.findIndex((row) => row.rollout !== undefined && row.rollout.state !== 'done');
  if (index < 0) return undefined;
  const at = ordered[index];
  return { at, state: at.rollout!, waiting: ordered.slice(index + 1).map((row) => row.node) };
}

/** Each node's word in a rollout in progress (by node name); none when no rollout is in progress. */
export function rolloutWords(ordered: readonly RolloutRow[]): Map<string, RolloutWord> {
  const progress = rolloutInProgress(ordered);
  const words = new Map<string, RolloutWord>();
  if (progress === undefined) return words;
  words.set(progress.at.node, progress.state.state === 'stopped' ? 'stopped' : 'changing');
  for (const node of progress.waiting) words.set(node, `waits for ${progress.at.node}`);
  return words;
}

/** The lines below the status table saying which node the rollout is at and which wait; none when it is at none. */
export function rolloutLines(ordered: readonly RolloutRow[], stack: string): string[] {
  const progress = rolloutInProgress(ordered);
  if (progress === undefined) return [];
  const { at, state, waiting } = progress;
  const since = state.since !== undefined ? ` since ${timeOfDay(state.since)}` : '';
  const seen = state.seen !== undefined ? `: ${state.seen}` : '';
  const head =
    state.state === 'stopped'
      ? `rollout stopped at node ${at.node} (its health gate gave up, or its pulumi up was cut${since})${seen}. ` +
        `Fix it (npm run node -- check --stack ${stack} --node ${at.node}), then run pulumi up again to continue`
      : `rollout in progress: node ${at.node} is changing${since}, not healthy yet${seen}`;
  return [head, ...(waiting.length > 0 ? [`waiting for ${at.node}: ${waiting.join(', ')} (not changed yet)`] : [])];
}

/** The fields of a StatefulSet a roll shows in. */
interface StatefulSetRoll {
  metadata?: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    currentRevision?: string;
    updateRevision?: string;
    readyReplicas?: number;
    updatedReplicas?: number;
  };
}

/**
 * A cluster node's state from its StatefulSet (the API's JSON): `changing` while the controller has not seen its last
 * change, its pod is of an older revision than the StatefulSet's, or its pod is not Ready (as `kubectl rollout
 * status` judges a roll); `done` otherwise. A StatefulSet scaled to none (a stopped node) is in no rollout.
 */
export function statefulSetRolloutState(json: string): NodeRolloutState | undefined {
  let set: StatefulSetRoll;
  try {
    set = JSON.parse(json) as StatefulSetRoll;
  } catch {
    return undefined;
  }
  const replicas = set.spec?.replicas ?? 1;
  const status = set.status ?? {};
  if (replicas === 0) return undefined;
  if ((status.observedGeneration ?? 0) < (set.metadata?.generation ?? 0)) {
    return { state: 'changing', seen: 'the StatefulSet controller has not taken its change yet' };
  }
  if (status.updateRevision !== undefined && status.currentRevision !== status.updateRevision) {
    const updated = status.updatedReplicas ?? 0;
    return {
      state: 'changing',
      seen: `${updated} of ${replicas} pod(s) of revision ${status.updateRevision}, ${status.readyReplicas ?? 0} Ready`,
    };
  }
  if ((status.readyReplicas ?? 0) < replicas) {
    return { state: 'changing', seen: `its pod is not Ready (${status.readyReplicas ?? 0} of ${replicas})` };
  }
  return { state: 'done' };
}

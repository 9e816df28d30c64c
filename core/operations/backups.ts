/**
 * Backups as the day-2 operations see them: a node's backups read from restic's JSON (or a cluster's VolumeSnapshots,
 * mapped to the same shape), the backup a rollback restores, the image a cluster restore switches to, and a transfer's
 * progress in the operator's words.
 * Pure: text in, values out.
 */
import { BACKUP_MARK, BACKUP_REASONS, BACKUP_TAGS } from '../catalog/backups';
import { besuImage } from '../catalog/besu';
import { kubernetesNames } from '../catalog/kubernetes';
import type { KubernetesNodeSettings } from '../settings/model';
import { bytesText, durationText } from './units';

/** How a restic copy is made consistent, in the operations' messages. */
export const STOPPED_WHILE_COPIED = 'the node is stopped while its data is copied';

/** One backup of a node. */
export interface Backup {
  /** restic's short id, or the VolumeSnapshot's name. */
  id: string;
  /** When it was taken (ISO 8601). */
  time: string;
  node: string;
  /** The release that ran the data. */
  release: string;
  /** The chain head when it was taken, when the node answered then. */
  head?: number;
  /** manual, scheduled or before-release-change. */
  reason: string;
}

/** The value of tag `name` among `name=value` tags. */
function tag(tags: readonly string[], name: string): string | undefined {
  const found = tags.find((t) => t.startsWith(`${name}=`));
  return found?.slice(name.length + 1);
}

/** A backup from its tags, or undefined when they are not the program's (no release recorded). */
export function backupFromTags(id: string, time: string, tags: readonly string[]): Backup | undefined {
  const release = tag(tags, BACKUP_TAGS.release);
  const node = tag(tags, BACKUP_TAGS.node);
  if (!tags.includes(BACKUP_MARK) || !release || !node) return undefined;
  const head = tag(tags, BACKUP_TAGS.head);
  return {
    id,
    time,
    node,
    release,
    ...(head !== undefined && /^\d+$/.test(head) ? { head: Number(head) } : {}),
    reason: tag(tags, BACKUP_TAGS.reason) ?? BACKUP_REASONS.manual,
  };
}

/** The backups in `restic snapshots --json`'s answer, oldest first. */
export function parseResticSnapshots(json: string): Backup[] {
  let snapshots: unknown;
  try {
    snapshots = JSON.parse(json);
  } catch {
    throw new Error(`restic's list of backups is not JSON: ${json.slice(0, 120)}`);
  }
  if (!Array.isArray(snapshots)) throw new Error("restic's list of backups is not a list");
  return snapshots
    .map((s: { short_id?: string; id?: string; time?: string; tags?: string[] }) =>
      backupFromTags(s.short_id ?? String(s.id).slice(0, 8), String(s.time), s.tags ?? []),
    )
    .filter((b): b is Backup => b !== undefined)
    .sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
}

/** A time as `YYYY-MM-DD hh:mm:ss` UTC (restic writes the machine's zone, with nanoseconds). */
function utcTime(time: string): string {
  const parsed = new Date(time);
  return Number.isNaN(parsed.getTime()) ? time : parsed.toISOString().slice(0, 19).replace('T', ' ');
}

/** True when release `a` is older than release `b` (numeric, part by part). */
export function olderRelease(a: string, b: string): boolean {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0;
    const y = pb[i] ?? 0;
    if (x !== y) return x < y;
  }
  return false;
}

/**
 * The backup a rollback restores: the newest one taken before a release change on a release older than the one in
 * use (the data as it was before the node last moved forward). Undefined when there is none.
 */
export function rollbackBackup(backups: readonly Backup[], releaseInUse: string): Backup | undefined {
  return [...backups]
    .reverse()
    .find((b) => b.reason === BACKUP_REASONS.beforeReleaseChange && olderRelease(b.release, releaseInUse));
}

/** What a cluster restore does to Besu's image for a backup's release: a refusal, or the kubectl command. */
export type ReleaseImageChange =
  { refused: string } | { kubectl: string[]; image: string; pinned: boolean; line: string };

/**
 * How a cluster restore or rollback switches the node's StatefulSet to a backup's release: Besu's container, which
 * receives the node key, set to the image pinned by the registry digest the stack gives for that release (the values
 * file's `deploy.imageDigest`, which is the digest of `deploy.releaseVersion`'s image). Without a digest for it, a
 * network that pins every image receiving the key (production) refuses, saying which settings to add; a test network
 * sets the tag, with a warning. `kubectl` is the command's arguments (the context and namespace are added by the
 * caller).
 */
export function releaseImageChange(node: KubernetesNodeSettings, release: string): ReleaseImageChange {
  const names = kubernetesNames(node.name);
  const digest = node.releaseVersion === release ? node.imageDigest : undefined;
  const settings = `in ${node.valuesFile}, under deploy: releaseVersion: ${release} and imageDigest: sha256:<the registry digest of ${besuImage(release)}> (docs/kubernetes.md, "Pinning images")`;
  const why =
    node.releaseVersion === release
      ? `${node.valuesFile} names Besu ${release} but no deploy.imageDigest`
      : `${node.valuesFile} pins ${node.imageDigest ? 'the digest of' : 'no digest, and names'} Besu ${node.releaseVersion}, not ${release}`;
  if (!digest && !node.network.allowsUnpinnedKeyImages) {
    return {
      refused: `node ${node.name}: no digest of Besu ${release}'s image is known (${why}), and on ${node.network.name} Besu, which receives the node key, runs only from an image pinned by its digest: set ${settings}, then run this again; nothing was changed`,
    };
  }
  const image = besuImage(release, digest);
  return {
    kubectl: ['set', 'image', `statefulset/${names.statefulSet}`, `${names.besuContainer}=${image}`],
    image,
    pinned: digest !== undefined,
    line: digest
      ? `the node's StatefulSet now runs Besu ${release} from ${image}, the digest pinned in ${node.valuesFile}`
      : `warning: the node's StatefulSet now runs Besu ${release} from ${image}, a tag that can be moved (${why}): before the next pulumi up set ${settings}`,
  };
}

/** The table `npm run node -- backups` prints, one line per backup, newest first. */
export function backupsTable(backups: readonly Backup[]): string[] {
  const rows = [...backups]
    .reverse()
    .map((b) => [b.id, utcTime(b.time), b.node, b.release, String(b.head ?? '?'), b.reason]);
  const header = ['ID', 'TAKEN (UTC)', 'NODE', 'RELEASE', 'HEAD', 'REASON'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows].map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

/** A progress report of a transfer: restic's JSON status line (backup), or the same shape for a restore. */
export interface TransferStatus {
  total_bytes?: number;
  bytes_done?: number;
  bytes_restored?: number;
  seconds_elapsed?: number;
  seconds_remaining?: number;
}

/** A JSON status line of a transfer, or undefined when the line is not one. */
export function transferStatus(line: string): TransferStatus | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(line) as TransferStatus & { message_type?: string };
    return parsed.message_type === 'status' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * restic's summary line of a backup as a last status (every byte done, in its total time), or undefined when the line
 * is not one.
 */
export function transferSummary(line: string): TransferStatus | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(line) as {
      message_type?: string;
      total_bytes_processed?: number;
      total_duration?: number;
    };
    if (parsed.message_type !== 'summary' || parsed.total_bytes_processed === undefined) return undefined;
    return {
      total_bytes: parsed.total_bytes_processed,
      bytes_done: parsed.total_bytes_processed,
      seconds_elapsed: parsed.total_duration,
      seconds_remaining: 0,
    };
  } catch {
    return undefined;
  }
}

/**
 * One progress line: bytes done of the total, the rate, and the time left (restic's estimate, else from the rate).
 * `elapsed` is the operator's clock, used when the status has none.
 */
export function progressText(what: string, status: TransferStatus, elapsed: number): string {
  const done = status.bytes_done ?? status.bytes_restored ?? 0;
  const total = status.total_bytes ?? 0;
  const seconds = status.seconds_elapsed ?? elapsed;
  const rate = seconds > 0 ? done / seconds : 0;
  const left = status.seconds_remaining ?? (rate > 0 && total > done ? (total - done) / rate : undefined);
  const percent = total > 0 ? ` (${Math.min(100, Math.floor((done / total) * 100))} %)` : '';
  const remaining = left === undefined ? '' : left > 0 ? `, about ${durationText(left)} left` : ', done';
  return `${what}: ${bytesText(done)} of ${bytesText(total)}${percent}, ${bytesText(Math.round(rate))}/s${remaining}`;
}

/**
 * Backups of a node's chain data, on both paths: the tool (restic), where a machine keeps its repository by default,
 * the schedules an operator may choose, the retention default and the tags every backup carries, so that `npm run
 * node -- backups` can say what each one holds and `restore` which release to start on it.
 */
import { SYSTEM_TOP_FOLDERS } from './systemFolders';

/** The backup tool: Debian's, Ubuntu's and EPEL's package of that name; the image the cluster's Job runs. */
export const BACKUP_TOOL = { package: 'restic', image: 'restic/restic:0.18.1' } as const;

/** The Kubernetes client image a cluster's schedule stops and starts the node with (distroless: kubectl only). */
export const KUBECTL_IMAGE = 'registry.k8s.io/kubectl:v1.36.3';

/** The label of a cluster node's backup objects (its Jobs, the schedule's pods, its VolumeSnapshots): whose they are. */
export const BACKUP_LABEL = 'lacchain.net/backup-of';

/** A machine's default repository: a folder of its own, outside the node home (which a restore replaces parts of). */
export function defaultMachineRepository(serviceName: string): string {
  return `/var/backups/lacchain/${serviceName}`;
}

/**
 * The folders a machine's repository may not be: the backups step makes the repository root's only (mode 0700), so
 * a system folder there would lock out everyone else (and `/tmp` and the like are anyone's to write in, or emptied).
 */
export const REPOSITORY_REFUSED_FOLDERS = {
  /** Neither these nor any folder inside them: the system's own, the kernel's, and the volatile or world-writable. */
  withInside: [...SYSTEM_TOP_FOLDERS, '/var/cache', '/var/lock', '/var/run', '/var/tmp'],
  /** These themselves, which hold others' folders (a folder inside them, such as a disk mounted under /mnt, is fine). */
  itself: [
    '/',
    '/data',
    '/home',
    '/media',
    '/mnt',
    '/opt',
    '/root',
    '/srv',
    '/var',
    '/var/backups',
    '/var/lib',
    '/var/local',
    '/var/log',
    '/var/mail',
    '/var/opt',
    '/var/spool',
  ],
} as const;

/** Where a cluster node's default repository lives: a volume of its own beside the data volume, mounted here. */
export const CLUSTER_REPOSITORY_MOUNT = '/backups';

/** When scheduled backups run: a systemd timer's OnCalendar on a machine, a CronJob's schedule on a cluster. */
export const BACKUP_SCHEDULES = {
  off: undefined,
  hourly: { onCalendar: 'hourly', cron: '17 * * * *' },
  daily: { onCalendar: '*-*-* 03:17:00', cron: '17 3 * * *' },
  weekly: { onCalendar: 'Sun *-*-* 03:17:00', cron: '17 3 * * 0' },
} as const;
export type BackupSchedule = keyof typeof BACKUP_SCHEDULES;
export const BACKUP_SCHEDULE_NAMES = Object.keys(BACKUP_SCHEDULES) as BackupSchedule[];

/** Retention: how many of a node's backups are kept (those taken before a release change are always kept). */
export const DEFAULT_BACKUPS_KEPT = 7;
export const MAX_BACKUPS_KEPT = 1000;

/** Why a backup was taken: the `reason=` tag. */
export const BACKUP_REASONS = {
  manual: 'manual',
  scheduled: 'scheduled',
  /** Taken by the start step just before it switches the node to another release: what `rollback` restores. */
  beforeReleaseChange: 'before-release-change',
  /** The last backup of a node moving to another machine (`npm run node -- move`): what the new one starts from. */
  move: 'move',
} as const;

/**
 * The tags of a backup (restic `--tag`), `name=value` each: the node, the release that ran the data, the chain head at
 * the time (the restored node must reach at least that) and the reason.
 */
export const BACKUP_TAGS = { node: 'node', release: 'release', head: 'head', reason: 'reason' } as const;
/** The tag every backup of this program carries, beside the named ones. */
export const BACKUP_MARK = 'lacchain';

/**
 * A machine's backup files: the repository's environment (root only: its password), and the command that backs up,
 * lists and restores, installed in the node home's bin folder.
 */
export const MACHINE_BACKUP_FILES = {
  /** `RESTIC_REPOSITORY` and `RESTIC_PASSWORD` (and an S3 repository's keys), mode 0600, root's. */
  environment: (serviceName: string) => `/etc/lacchain/${serviceName}-backup.env`,
  /** The node's backup command (scripts/remote/node-backup.sh). */
  command: 'bin/node-backup',
  /** The scheduled backup's systemd units. */
  unit: (serviceName: string) => `${serviceName}-backup`,
} as const;

/**
 * On a cluster node's data volume while a restore Job replaces its contents (the old ones removed, the restored ones
 * moved in): a Job cut then leaves it, and the pod's first init container does not let Besu open what the cut left
 * until a restore runs again to its end.
 */
export const RESTORE_UNFINISHED_MARKER = '.lacchain-restore-unfinished';

/** The restored data folder's previous contents are kept here, beside it, until the next restore. */
export const BEFORE_RESTORE_SUFFIX = '.before-restore';

/** The file Besu (24.3.0 on) records its version in, in the data folder, and refuses an older Besu on. */
export const BESU_VERSION_METADATA = 'VERSION_METADATA.json';

/**
 * A node's backup settings, from the stack's `lacchain:backups`, defaults filled in for the node's path: a machine's
 * own folder, or on a cluster the backup volume (a repository elsewhere is a machine's setting only).
 */
import { CLUSTER_REPOSITORY_MOUNT, defaultMachineRepository } from '../catalog/backups';
import { configKey } from '../catalog/defaults';
import { NODE_HOME_LAYOUT } from '../catalog/remote';
import type { BackupSettings } from './model';
import { describeGiven, Problem } from './problems';
import { BackupsInput, backupsSchema } from './schema';

/** The schema's defaults, for a stack without `lacchain:backups`. */
const DEFAULTS = backupsSchema.parse({});

/** True when folder `inner` is `outer` or inside it (both absolute). */
function within(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer === '/' ? '/' : `${outer}/`);
}

/** An absolute path without empty and `.` parts (`..` is refused by the field's rule). */
function normalised(folder: string): string {
  return `/${folder
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/')}`;
}

/**
 * An SSH node's backups: the repository given, or a folder of its own on the machine. A repository on the machine
 * may not be the node home, a folder inside it (its data among them) or one that holds it: the backups step makes the
 * repository root's only (mode 0700), so Besu, which runs as the service user, could not start again; a backup inside
 * the data would copy itself, and a restore replaces the data folder with the backups in it.
 */
export function machineBackups(
  input: BackupsInput | undefined,
  node: { name: string; serviceName: string; nodeHome: string },
  file: string,
  problems: Problem[],
): BackupSettings {
  const repository = input?.repository ?? defaultMachineRepository(node.serviceName);
  if (repository.startsWith('/')) {
    const folder = normalised(repository);
    const home = normalised(node.nodeHome);
    const data = `${home === '/' ? '' : home}/${NODE_HOME_LAYOUT.dataDir}`;
    const is = (place: string) => (folder === place ? 'is' : 'is inside');
    const relation = within(folder, data)
      ? `${is(data)} node ${node.name}'s data folder ${data}`
      : within(folder, home)
        ? `${is(home)} node ${node.name}'s home ${home}`
        : within(home, folder)
          ? `holds node ${node.name}'s home ${home}`
          : undefined;
    if (relation) {
      problems.push({
        file,
        key: `${configKey('backups')}.repository`,
        given: `${describeGiven(repository)}, which ${relation}`,
        allowed: `a folder outside node ${node.name}'s home ${home} (its data ${data} among it) that does not hold it either, such as the default ${defaultMachineRepository(node.serviceName)}: the backups step makes the repository root's only (mode 0700), so Besu could not start, and a restore replaces the data folder; or another machine (sftp:user@host:/folder, s3:https://host/bucket/folder)`,
      });
    }
  }
  return { ...DEFAULTS, ...input, repository };
}

/** A Kubernetes node's backups: to the backup volume (or snapshots); another repository is refused. */
export function clusterBackups(input: BackupsInput | undefined, file: string, problems: Problem[]): BackupSettings {
  if (input?.repository !== undefined) {
    problems.push({
      file,
      key: `${configKey('backups')}.repository`,
      given: describeGiven(input.repository),
      allowed:
        "no repository while the stack has Kubernetes nodes: a cluster node's backups go to a volume of its own (or, with deploy.volumeSnapshotClass, are snapshots)",
    });
  }
  return { ...DEFAULTS, ...input, repository: CLUSTER_REPOSITORY_MOUNT };
}

/**
 * A node's backup settings, from the stack's `lacchain:backups`, defaults filled in for the node's path: a machine's
 * own folder, or on a cluster the backup volume (a repository elsewhere is a machine's setting only).
 */
import { CLUSTER_REPOSITORY_MOUNT, defaultMachineRepository } from '../catalog/backups';
import { configKey } from '../catalog/defaults';
import type { BackupSettings } from './model';
import { describeGiven, Problem } from './problems';
import { BackupsInput, backupsSchema } from './schema';

/** The schema's defaults, for a stack without `lacchain:backups`. */
const DEFAULTS = backupsSchema.parse({});

/** An SSH node's backups: the repository given, or a folder of its own on the machine. */
export function machineBackups(input: BackupsInput | undefined, serviceName: string): BackupSettings {
  return { ...DEFAULTS, ...input, repository: input?.repository ?? defaultMachineRepository(serviceName) };
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

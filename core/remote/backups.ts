/**
 * A machine's backup command (NODE_HOME/bin/node-backup): its settings, then the steps' shared library and
 * scripts/remote/node-backup.sh, byte for byte. The backups step installs it; the start step, the backup timer and
 * `npm run node -- backup|backups|restore|rollback` run it.
 */
import {
  BACKUP_MARK,
  BACKUP_REASONS,
  BACKUP_SCHEDULES,
  BACKUP_TAGS,
  BESU_VERSION_METADATA,
  BEFORE_RESTORE_SUFFIX,
  MACHINE_BACKUP_FILES,
} from '../catalog/backups';
import { DEFAULT_SERVICE_USER } from '../catalog/defaults';
import { MACHINE_RUN_DIR } from '../catalog/remote';
import { PORTS } from '../catalog/ports';
import { readScript, REMOTE_LIBRARY_SCRIPT } from '../scripts';
import type { SshNodeSettings } from '../settings/model';
import { nodePaths } from './paths';
import { exportLines } from './shell';

/** The script of the node's backup command, under scripts/. */
const NODE_BACKUP_SCRIPT = 'remote/node-backup.sh';

/** Where a machine's backup files are. */
export function backupPaths(node: SshNodeSettings) {
  return {
    environment: MACHINE_BACKUP_FILES.environment(node.serviceName),
    command: `${node.nodeHome}/${MACHINE_BACKUP_FILES.command}`,
    unit: MACHINE_BACKUP_FILES.unit(node.serviceName),
  };
}

/** The text of the node's backup command, as installed on the machine. */
export function nodeBackupCommand(node: SshNodeSettings): string {
  return backupCommandText(node.name, nodeBackupSettings(node));
}

/** The settings the node's backup command is written with (its environment, before its scripts). */
export function nodeBackupSettings(node: SshNodeSettings): Record<string, string> {
  const paths = nodePaths(node);
  return {
    STEP_NAME: 'node-backup',
    NODE_NAME: node.name,
    SERVICE_NAME: node.serviceName,
    SERVICE_USER: DEFAULT_SERVICE_USER,
    DATA_DIR: paths.dataDir,
    KEY_FILE: paths.key,
    KEY_CUSTODY: node.keyCustody,
    ENODE_FILE: paths.enode,
    NODE_ADDRESS_FILE: paths.nodeAddress,
    CONFIG_FILE: paths.config,
    RELEASES_DIR: paths.releasesDir,
    RPC_PORT: String(PORTS.rpcHttp),
    START_TIMEOUT: String(node.startTimeoutSeconds),
    KEEP: String(node.backups.keep),
    ENV_FILE: backupPaths(node).environment,
    RUN_DIR: MACHINE_RUN_DIR,
    LOCK_FILE: `${MACHINE_RUN_DIR}/${node.serviceName}-backup.lock`,
    // Says the node was stopped by a backup that has not started it again yet (gone at a reboot, which starts it).
    STOPPED_FILE: `${MACHINE_RUN_DIR}/${node.serviceName}-backup.node-stopped`,
    BEFORE_RESTORE_SUFFIX,
    VERSION_METADATA: BESU_VERSION_METADATA,
    TAG_NODE: BACKUP_TAGS.node,
    TAG_RELEASE: BACKUP_TAGS.release,
    TAG_HEAD: BACKUP_TAGS.head,
    TAG_REASON: BACKUP_TAGS.reason,
    MARK: BACKUP_MARK,
    REASON_BEFORE_CHANGE: BACKUP_REASONS.beforeReleaseChange,
  };
}

/** The backup command of node `name` with `settings`: the settings, the steps' library, then its script. */
export function backupCommandText(name: string, settings: Record<string, string>): string {
  return (
    `#!/usr/bin/env bash\n# The backup command of node ${name} (lacchain-besu-node). Usage: see below.\nset -euo pipefail\n` +
    `${exportLines(settings)}${readScript(REMOTE_LIBRARY_SCRIPT)}${readScript(NODE_BACKUP_SCRIPT)}`
  );
}

/** The parameters of the backups step. */
export function backupsStepParameters(node: SshNodeSettings): Record<string, string> {
  const paths = backupPaths(node);
  return {
    BACKUP_COMMAND_FILE: paths.command,
    BACKUP_COMMAND: nodeBackupCommand(node),
    BACKUP_UNIT: paths.unit,
    SCHEDULE_ON_CALENDAR: BACKUP_SCHEDULES[node.backups.schedule]?.onCalendar ?? '',
    SERVICE_NAME: node.serviceName,
  };
}

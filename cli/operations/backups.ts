/**
 * `npm run node -- backup | backups | restore | rollback`: the node's backups, taken, listed and put back, on either
 * path, through the node's BackupClient. Long transfers show their progress (bytes, rate, time left).
 */
import { BACKUP_REASONS } from '../../core/catalog/backups';
import { parseEnode, publicKeyHex } from '../../core/identity/nodeKey';
import {
  Backup,
  backupsTable,
  progressText,
  rollbackBackup,
  transferStatus,
  transferSummary,
} from '../../core/operations/backups';
import { durationText } from '../../core/operations/units';
import { deployedRelease } from '../../core/operations/fleet';
import { withoutControlSequences } from '../../core/operations/terminalText';
import type { NodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import type { NodeClient } from './nodeClientTypes';

/** How often a progress line is printed when the output is not a terminal (a terminal's line is redrawn in place). */
const PROGRESS_LINE_SECONDS = 5;

/** Prints a line; what came from the node cannot drive the operator's terminal. */
function say(line: string): void {
  process.stdout.write(`${withoutControlSequences(line)}\n`);
}

/**
 * A handler of a transfer's output lines: status lines become one progress line (redrawn on a terminal, every few
 * seconds otherwise), restic's summary is kept quiet, any other line is shown.
 */
function progressPrinter(what: string): { onLine: (line: string) => void; end: () => void } {
  const started = Date.now();
  const terminal = process.stdout.isTTY === true;
  let lastPrinted = 0;
  let pending: string | undefined;
  let drawn = false;
  const print = (text: string) => {
    if (terminal) {
      process.stdout.write(`\r\x1b[K${withoutControlSequences(text)}`);
      drawn = true;
    } else say(text);
    lastPrinted = Date.now();
    pending = undefined;
  };
  return {
    onLine(line) {
      const summary = transferSummary(line);
      if (summary) {
        print(progressText(what, summary, (Date.now() - started) / 1000));
        return;
      }
      const status = transferStatus(line);
      if (status) {
        const text = progressText(what, status, (Date.now() - started) / 1000);
        const gap = terminal ? 250 : PROGRESS_LINE_SECONDS * 1000;
        if (Date.now() - lastPrinted >= gap) print(text);
        else pending = text;
        return;
      }
      if (line.startsWith('{') || line.trim() === '') return;
      if (drawn) process.stdout.write('\n');
      drawn = false;
      say(line);
    },
    end() {
      if (pending) print(pending);
      if (drawn) process.stdout.write('\n');
      drawn = false;
    },
  };
}

/** Takes a backup of a node and says how long it took. */
export async function takeBackup(node: NodeSettings, client: NodeClient): Promise<Backup> {
  say(`node ${node.name}: backing up to ${client.backups.where} (${client.backups.consistency})`);
  const started = Date.now();
  const progress = progressPrinter('backup');
  try {
    await client.backups.take(BACKUP_REASONS.manual, progress.onLine);
  } finally {
    progress.end();
  }
  const newest = (await client.backups.list()).pop();
  if (!newest) throw new ToolFailure(`node ${node.name}: the backup ran but is not in the repository's list`);
  say(
    `node ${node.name}: backup ${newest.id} taken in ${durationText((Date.now() - started) / 1000)}: ` +
      `Besu ${newest.release}, head ${newest.head ?? 'unknown'}`,
  );
  return newest;
}

/** Prints a node's backups, newest first. */
export async function listBackups(node: NodeSettings, client: NodeClient): Promise<void> {
  const backups = await client.backups.list();
  say(`node ${node.name}: ${backups.length} backup(s) in ${client.backups.where}`);
  if (backups.length > 0) backupsTable(backups).forEach((line) => say(`  ${line}`));
}

/** The backup `--backup ID` names, or the newest. */
export async function chooseBackup(node: NodeSettings, client: NodeClient, id: string | undefined): Promise<Backup> {
  const backups = await client.backups.list();
  if (backups.length === 0) throw new ToolFailure(`node ${node.name}: no backups in ${client.backups.where}`);
  if (id === undefined) return backups[backups.length - 1];
  const found = backups.find((b) => b.id === id || b.id.startsWith(id));
  if (!found) {
    throw new ToolFailure(`node ${node.name}: no backup ${id}; its backups: ${backups.map((b) => b.id).join(', ')}`);
  }
  return found;
}

/**
 * The backup a rollback restores: the one taken before the node last moved to a newer release, on the release it ran
 * before. Refused when the node runs no newer release than every such backup.
 */
export async function chooseRollback(node: NodeSettings, client: NodeClient): Promise<Backup> {
  const inUse = await client.releaseInUse();
  const release = inUse !== undefined ? deployedRelease(inUse) : undefined;
  if (!release)
    throw new ToolFailure(`node ${node.name}: the release in use cannot be read, so there is nothing to go back from`);
  const backup = rollbackBackup(await client.backups.list(), release);
  if (!backup) {
    throw new ToolFailure(
      `node ${node.name}: no backup taken before a change to Besu ${release} from an older release: nothing to roll back to (npm run node -- backups lists what there is)`,
    );
  }
  say(
    `node ${node.name}: rolling back from Besu ${release} to ${backup.release}, with backup ${backup.id} taken before the change`,
  );
  return backup;
}

/**
 * Restores a backup on a node: its release made ready, the node key checked against the backup's enode when the
 * operator gives it, then the restore and the node's checks (on the node's side).
 */
export async function restoreBackup(
  node: NodeSettings,
  client: NodeClient,
  backup: Backup,
  nodeKey: string | undefined,
): Promise<void> {
  if (nodeKey !== undefined) {
    const recorded = await client.backups.recordedEnode(backup);
    const id = recorded && parseEnode(recorded)?.nodeId;
    if (!id) throw new ToolFailure(`backup ${backup.id} holds no recorded enode to check the key against`);
    if (publicKeyHex(nodeKey).replace(/^0x/, '') !== id) {
      throw new ToolFailure(
        `the key file is not node ${node.name}'s: its public key is not the one of the enode recorded in backup ${backup.id} (${recorded})`,
      );
    }
  }
  await client.backups.prepareRelease(backup.release);
  say(`node ${node.name}: restoring backup ${backup.id} (Besu ${backup.release}, head ${backup.head ?? 'unknown'})`);
  const started = Date.now();
  const progress = progressPrinter('restore');
  try {
    await client.backups.restore(backup, nodeKey, progress.onLine);
  } finally {
    progress.end();
  }
  say(`node ${node.name}: restored in ${durationText((Date.now() - started) / 1000)}`);
  if (backup.release !== node.releaseVersion) {
    say(
      `node ${node.name}: it runs Besu ${backup.release}, but the stack names ${node.releaseVersion}: set the node's release to ${backup.release} in ${node.settingsFile} before the next pulumi up, or that run upgrades it again (after a new backup)`,
    );
  }
}

/**
 * What a node's backups offer the operations, whatever its target: below the clients that make them (nodeClient.ts
 * for a machine, clusterBackups.ts for a cluster node), which import it and never each other for it.
 */
import type { Backup } from '../../core/operations/backups';

/** Backups of a node's chain data, whatever its target. */
export interface BackupClient {
  /** Where the backups go, for messages. */
  where: string;
  /** How a backup is made consistent, for messages. */
  consistency: string;
  /** Takes a backup (the node stopped while its data is copied); progress lines go to `onLine`. */
  take(reason: string, onLine: (line: string) => void): Promise<void>;
  /** The node's backups, oldest first. */
  list(): Promise<Backup[]>;
  /** The enode recorded in a backup, when it holds one. */
  recordedEnode(backup: Backup): Promise<string | undefined>;
  /** Makes sure the backup's release can run on the node (unpacks it on a machine). */
  prepareRelease(version: string): Promise<void>;
  /**
   * Puts a backup back and starts the node on its release, checking it answers with its recorded enode at a head of
   * at least the backup's; the node key, when given, is written only where the node lost its own.
   */
  restore(backup: Backup, nodeKey: string | undefined, onLine: (line: string) => void): Promise<void>;
}

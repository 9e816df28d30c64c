/**
 * The paths of a machine that the node's service user can write (its data and logs folders and what is in them), and,
 * for each remote script that names one, how root treats it there (the rule of scripts/remote/lib.sh and
 * docs/security.md). tests/e2e/hostileUser.test.ts plants links, FIFOs and chosen names at these paths before each
 * operation; tests/tools/hostilePaths.test.ts fails when a script names such a path that this list lacks, so a new
 * one is never left out of the hostile suite.
 */
import * as fs from 'fs';
import * as path from 'path';
import { SCRIPTS_DIR } from '../core/scripts';

/** The parameters of the remote scripts that name a path the service user can write. */
export const SERVICE_USER_PATH_PARAMETERS = [
  'KEY_FILE',
  'ENODE_FILE',
  'NODE_ADDRESS_FILE',
  'GENESIS_FILE',
  'DATA_DIR',
  'LOGS_DIR',
  'INFO_LOG',
  'IDENTITY_FILES',
] as const;

/** `<script> <parameter>`: how root treats that path in that script (each checked by the hostile suite). */
export const ROOT_TOUCHES: Record<string, string> = {
  'node-backup.sh KEY_FILE':
    'read once as the service user (no link, no FIFO wait, bounded) into a file root made in its work folder, renamed into the restored data; never in a backup, nor any key* name',
  'node-backup.sh ENODE_FILE':
    "read from the restored copy before anyone else can reach it, as a regular file only; take-in reads the live one as the service user, into root's own file",
  'node-backup.sh NODE_ADDRESS_FILE': "take-in only: read as the service user, into root's own file renamed into place",
  'node-backup.sh DATA_DIR':
    "copied by restic (links stored as links); what a backup brings back is read only as regular files and written only by renames of root's own files",
  'node-files.sh ENODE_FILE': 'named only (the node-key step writes it)',
  'node-files.sh NODE_ADDRESS_FILE': 'named only (the node-key step writes it)',
  'node-files.sh GENESIS_FILE': 'written by the service user (user_write)',
  'node-files.sh DATA_DIR': "made the service user's after a planted symlink is removed (the node home is root's)",
  'node-files.sh LOGS_DIR': "made the service user's after a planted symlink is removed (the node home is root's)",
  'node-files.sh INFO_LOG': 'made a plain file by the service user (plain_file)',
  'node-key.sh KEY_FILE':
    "written by the service user (stack custody); made and read by Besu as the service user, its public key checked against root's record (machine custody); read for the backup password as the service user",
  'node-key.sh ENODE_FILE': 'read as the service user, only its public key kept; written by the service user',
  'node-key.sh NODE_ADDRESS_FILE': 'written by the service user',
  'node-key.sh DATA_DIR': "Besu's data path for the service user's public-key export",
  'start.sh DATA_DIR': 'listed and searched by find, which follows no link',
  'move.sh IDENTITY_FILES':
    'arriving where the node lived before: each seen, read (no link, no FIFO wait, bounded) and removed as the service user; its content written by root into a file of its own in the root-only keys-aside folder',
};

/** The `<script> <parameter>` pairs the remote scripts name today. */
export function scriptTouches(): string[] {
  const dir = path.join(SCRIPTS_DIR, 'remote');
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.sh'))
    .sort()
    .flatMap((file) => {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      return SERVICE_USER_PATH_PARAMETERS.filter((name) => new RegExp(`\\$\\{?${name}\\b`).test(text)).map(
        (name) => `${file} ${name}`,
      );
    });
}

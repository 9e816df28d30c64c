/**
 * A kubelet-tier node's backups volume (testing/cluster/kubeletNode.ts) read with restic on this machine (Debian's,
 * installed by tests/setup.sh): the volume's folder as the repository, the node's backup password from its Secret.
 */
import { execFileSync } from 'child_process';
import { BACKUP_MARK, BACKUP_REASONS, BACKUP_TAGS } from '../../core/catalog/backups';
import { backupNames } from '../../core/kubernetes/backups';
import type { KubeletNode } from './kubeletNode';

/** restic on `node`'s backups volume: runs `restic <args>` (never locking the repository); returns its output. */
export function resticOnBackups(node: KubeletNode): (...args: string[]) => Promise<string> {
  return async (...args) => {
    const names = backupNames(node.node);
    const password = await node
      .cluster()
      .kubectlOk(['get', 'secret', '-n', node.namespace, names.secret, '-o', 'jsonpath={.data.RESTIC_PASSWORD}']);
    return execFileSync('restic', ['--no-lock', '-r', node.volumes()[names.volume], ...args], {
      env: { ...process.env, RESTIC_PASSWORD: Buffer.from(password, 'base64').toString() },
      encoding: 'utf8',
    });
  };
}

/**
 * The one snapshot in `node`'s backups volume (read with `restic`): of the node, tagged as the project tags a backup,
 * with `release` and `reason`, and a copy of the data volume (the Besu stand-in's chain file in it).
 */
export async function expectOneSnapshot(
  restic: (...args: string[]) => Promise<string>,
  node: string,
  release: string,
  reason: (typeof BACKUP_REASONS)[keyof typeof BACKUP_REASONS],
): Promise<void> {
  const snapshots = JSON.parse(await restic('snapshots', '--json'));
  expect(snapshots).toHaveLength(1);
  expect(snapshots[0].hostname).toBe(node);
  expect([...snapshots[0].tags].sort()).toEqual(
    [
      BACKUP_MARK,
      `${BACKUP_TAGS.node}=${node}`,
      `${BACKUP_TAGS.release}=${release}`,
      `${BACKUP_TAGS.reason}=${reason}`,
    ].sort(),
  );
  expect(await restic('ls', snapshots[0].short_id)).toMatch(/\/standin-chain\.json$/m);
}

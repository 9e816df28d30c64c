/**
 * A kubelet-tier node's backups volume (testing/cluster/kubeletNode.ts) read with restic on this machine (Debian's,
 * installed by tests/setup.sh): the volume's folder as the repository, the node's backup password from its Secret.
 */
import { execFileSync } from 'child_process';
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

/**
 * The machine's SSH host key read by init itself (`ssh-keyscan` to that host only, at the operator's request), and its
 * SHA-256 fingerprint as `ssh-keygen -l` prints it, for the operator to compare with what a trusted channel shows.
 */
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import { DEFAULT_SSH_PORT } from '../../core/catalog/defaults';

/** The key type read and pinned (the one the inventory's examples and the still-to-do list use). */
const KEY_TYPE = 'ed25519';
/** How long ssh-keyscan waits for the machine, in seconds. */
const SCAN_TIMEOUT_SECONDS = 10;
/** A SHA-256 fingerprint as `ssh-keygen -l` prints it: `SHA256:` and 43 base64 characters. */
export const FINGERPRINT_PATTERN = /^SHA256:[A-Za-z0-9+/]{43}$/;
/** What a fingerprint may be, said when one is refused. */
export const FINGERPRINT_ALLOWED = `SHA256: and 43 base64 characters, as ssh-keygen -lf /etc/ssh/ssh_host_${KEY_TYPE}_key.pub prints it on the machine`;

/** The command that reads the key, as shown to the operator. */
export function keyscanCommand(host: string, port: number = DEFAULT_SSH_PORT): string {
  return `ssh-keyscan${port === DEFAULT_SSH_PORT ? '' : ` -p ${port}`} -t ${KEY_TYPE} ${host}`;
}

/** The host key `host` answers with (`ssh-ed25519 AAAA…`, as the inventory takes it), or undefined when none. */
export function scanHostKey(host: string, port: number = DEFAULT_SSH_PORT): string | undefined {
  const result = spawnSync(
    'ssh-keyscan',
    ['-T', String(SCAN_TIMEOUT_SECONDS), '-p', String(port), '-t', KEY_TYPE, host],
    { encoding: 'utf8', timeout: (SCAN_TIMEOUT_SECONDS + 5) * 1000 },
  );
  for (const line of (result.stdout ?? '').split('\n')) {
    const [, type, key] = line.trim().split(/\s+/);
    if (type === `ssh-${KEY_TYPE}` && key) return `${type} ${key}`;
  }
  return undefined;
}

/** The SHA-256 fingerprint of a host key line (`<type> <base64>`), as `ssh-keygen -l` prints it. */
export function hostKeyFingerprint(key: string): string {
  const blob = Buffer.from(key.trim().split(/\s+/)[1] ?? '', 'base64');
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

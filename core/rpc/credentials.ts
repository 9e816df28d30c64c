/**
 * Besu's RPC credentials file (password authentication): TOML, one `[Users.<name>]` table each with a bcrypt hash of
 * the password and the user's permissions.
 *
 * Each user's bcrypt salt is 16 random bytes, made once per node and user by the program (components/rpcCredentials.ts:
 * a `RandomBytes`, secret in the stack's state) and handed in here. It is never derived from the user or the
 * password: without the salt, nobody can recompute a hash (or anything made from one) from a guessed password. The
 * same salt and password always give the same file, so an unchanged setting changes nothing on `pulumi up`.
 */
import * as bcrypt from 'bcryptjs';
import { stringify } from 'smol-toml';
import type { RpcUser } from '../settings/model';

/** bcrypt cost (2^10 rounds), Besu's documented example cost. */
export const BCRYPT_COST = 10;

/** The random bytes of a bcrypt salt (22 characters of bcrypt's base64 alphabet). */
export const BCRYPT_SALT_BYTES = 16;

/**
 * bcrypt's salt string, `$2b$10$` + 22 characters of bcrypt's own base64 alphabet (`./A-Za-z0-9`, as bcryptjs'
 * `genSalt` writes it), from 16 random bytes given as 32 hex digits. The error never shows the value (a secret).
 */
export function bcryptSalt(saltHex: string): string {
  if (!/^[0-9a-fA-F]+$/.test(saltHex) || saltHex.length !== BCRYPT_SALT_BYTES * 2) {
    throw new Error(`a bcrypt salt is ${BCRYPT_SALT_BYTES} bytes, given as ${BCRYPT_SALT_BYTES * 2} hex digits`);
  }
  const bytes = Buffer.from(saltHex, 'hex');
  return `$2b$${String(BCRYPT_COST).padStart(2, '0')}$${bcrypt.encodeBase64(bytes, BCRYPT_SALT_BYTES)}`;
}

/** The bcrypt hash (`$2b$10$…`) of a password with the given salt (16 random bytes as hex). */
export function bcryptHash(password: string, saltHex: string): string {
  return bcrypt.hashSync(password, bcryptSalt(saltHex));
}

/**
 * The credentials file's text, from each user's password and salt (16 random bytes as hex). Throws when a user has
 * no password (the loader refuses that before) or no salt (the component makes one per user).
 */
export function renderCredentialsToml(
  users: readonly RpcUser[],
  passwords: Record<string, string>,
  salts: Record<string, string>,
): string {
  const table: Record<string, { password: string; permissions: string[] }> = {};
  for (const user of users) {
    const password = passwords[user.name];
    if (password === undefined) throw new Error(`no password for RPC user ${user.name}`);
    const salt = salts[user.name];
    if (salt === undefined) throw new Error(`no bcrypt salt for RPC user ${user.name}`);
    table[user.name] = { password: bcryptHash(password, salt), permissions: [...user.permissions] };
  }
  return `# Besu RPC users. Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.\n${stringify({ Users: table })}\n`;
}

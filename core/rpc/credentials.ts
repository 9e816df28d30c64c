/**
 * Besu's RPC credentials file (password authentication): TOML, one `[Users.<name>]` table each with a bcrypt hash of
 * the password and the user's permissions. The salt is derived from the user name and password, so the same
 * setting always renders the same file: an unchanged setting changes nothing on `pulumi up`.
 */
import { createHash } from 'crypto';
import * as bcrypt from 'bcryptjs';
import { stringify } from 'smol-toml';
import type { RpcUser } from '../settings/model';

/** bcrypt cost (2^10 rounds), Besu's documented example cost. */
export const BCRYPT_COST = 10;

/** A bcrypt hash (`$2a$10$…`) of a password, with a salt derived from the user name and the password. */
export function deterministicBcrypt(user: string, password: string): string {
  const seed = createHash('sha256').update(`lacchain-rpc-user\0${user}\0${password}`).digest().subarray(0, 16);
  const salt = `$2a$${String(BCRYPT_COST).padStart(2, '0')}$${bcrypt.encodeBase64(seed, 16)}`;
  return bcrypt.hashSync(password, salt);
}

/** The credentials file's text. Throws when a user has no password (the loader refuses that before). */
export function renderCredentialsToml(users: readonly RpcUser[], passwords: Record<string, string>): string {
  const table: Record<string, { password: string; permissions: string[] }> = {};
  for (const user of users) {
    const password = passwords[user.name];
    if (password === undefined) throw new Error(`no password for RPC user ${user.name}`);
    table[user.name] = { password: deterministicBcrypt(user.name, password), permissions: [...user.permissions] };
  }
  return `# Besu RPC users. Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.\n${stringify({ Users: table })}\n`;
}

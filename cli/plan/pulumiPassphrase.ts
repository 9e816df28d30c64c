/**
 * Pulumi's passphrase secrets manager, read-only: the stack file's `encryptionsalt` is `v1:<salt, base64>:<check>`,
 * where the check is the word `pulumi` encrypted with the stack's key; the key is PBKDF2-SHA256 of the passphrase and
 * that salt (1,000,000 rounds, 32 bytes); every `secure:` value is `v1:<nonce, base64>:<ciphertext and tag, base64>`,
 * AES-256-GCM (read from pulumi/pulumi, pkg/secrets/passphrase/manager.go and
 * sdk/go/common/resource/config/crypt.go). A passphrase is taken only when it decrypts the check value, as Pulumi does.
 */
import { createDecipheriv, pbkdf2Sync } from 'crypto';
import * as fs from 'fs';

/** The one version of the salt and of the values Pulumi writes. */
const VERSION = 'v1';
/** The key's derivation: PBKDF2 with SHA-256, this many rounds, this many bytes (AES-256). */
const PBKDF2_ROUNDS = 1_000_000;
const KEY_BYTES = 32;
/** AES-GCM's nonce and tag, as Go's crypto/cipher makes them. */
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** What the salt's check value decrypts to with the right passphrase. */
const CHECK_WORD = 'pulumi';

/** The environment variables Pulumi reads the passphrase from: the passphrase, or a file holding it. */
export const PASSPHRASE_VARIABLE = 'PULUMI_CONFIG_PASSPHRASE';
const PASSPHRASE_FILE_VARIABLE = 'PULUMI_CONFIG_PASSPHRASE_FILE';

/** Decrypts one `secure:` value of the stack. */
export type Decrypt = (value: string) => string;

/** The passphrase as Pulumi reads it from the environment (the variable, else the file, trimmed), or undefined. */
export function passphraseFromEnvironment(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const phrase = env[PASSPHRASE_VARIABLE];
  if (phrase !== undefined) return phrase;
  const file = env[PASSPHRASE_FILE_VARIABLE];
  return file ? fs.readFileSync(file, 'utf8').trim() : undefined;
}

/** AES-256-GCM's opening of one `v1:<nonce>:<ciphertext+tag>` value with `key`; throws when it is not one. */
function open(key: Buffer, value: string): string {
  const parts = value.split(':');
  if (parts.length !== 3 || parts[0] !== VERSION) throw new Error(`not a ${VERSION} encrypted value`);
  const nonce = Buffer.from(parts[1], 'base64');
  const sealed = Buffer.from(parts[2], 'base64');
  if (nonce.length !== NONCE_BYTES || sealed.length < TAG_BYTES) throw new Error('not an AES-256-GCM value');
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString(
    'utf8',
  );
}

/**
 * The stack's decrypter for `passphrase`, or why there is none: the salt is not Pulumi's v1 one, or the passphrase
 * does not decrypt the salt's check value (not the stack's passphrase).
 */
export function unlockStack(encryptionSalt: string, passphrase: string): Decrypt | { problem: string } {
  const first = encryptionSalt.indexOf(':');
  const second = encryptionSalt.indexOf(':', first + 1);
  if (first < 0 || second < 0 || encryptionSalt.slice(0, first) !== VERSION) {
    return { problem: `its encryptionsalt is not a ${VERSION} passphrase salt` };
  }
  const salt = Buffer.from(encryptionSalt.slice(first + 1, second), 'base64');
  const key = pbkdf2Sync(passphrase, salt, PBKDF2_ROUNDS, KEY_BYTES, 'sha256');
  let check: string | undefined;
  try {
    check = open(key, encryptionSalt.slice(second + 1));
  } catch {
    check = undefined;
  }
  if (check !== CHECK_WORD)
    return { problem: `${PASSPHRASE_VARIABLE} is not its passphrase: the salt's check value does not decrypt` };
  return (value) => open(key, value);
}

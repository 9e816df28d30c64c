/**
 * Pulumi's passphrase secrets, as the offline plan reads them (cli/plan/pulumiPassphrase.ts), against values made
 * here by an implementation of the format of the test's own (pulumi/pulumi, sdk/go/common/resource/config/crypt.go:
 * PBKDF2-SHA256, 1,000,000 rounds, 32 bytes; AES-256-GCM, `v1:<nonce>:<ciphertext and tag>`). The real CLI's own
 * values: tests/cli/planPassphrase.test.ts.
 */
import { createCipheriv, pbkdf2Sync, randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { passphraseFromEnvironment, unlockStack } from '../../cli/plan/pulumiPassphrase';

const PASSPHRASE = 'correct horse battery staple';

/** A stack's salt and a sealer of values with its key, as Pulumi makes them. */
function passphraseStack(passphrase: string) {
  const salt = randomBytes(8);
  const key = pbkdf2Sync(passphrase, salt, 1_000_000, 32, 'sha256');
  const seal = (text: string) => {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `v1:${nonce.toString('base64')}:${sealed.toString('base64')}`;
  };
  return { encryptionSalt: `v1:${salt.toString('base64')}:${seal('pulumi')}`, seal };
}

const stack = passphraseStack(PASSPHRASE);
const NODE_KEY = `0x${'4c'.repeat(32)}`;

describe("Pulumi's passphrase secrets", () => {
  it('decrypts a value with the passphrase whose key decrypts the salt check', () => {
    const decrypt = unlockStack(stack.encryptionSalt, PASSPHRASE);
    expect(typeof decrypt).toBe('function');
    expect((decrypt as (v: string) => string)(stack.seal(NODE_KEY))).toBe(NODE_KEY);
  });

  it('refuses another passphrase by the salt check, before any value', () => {
    expect(unlockStack(stack.encryptionSalt, 'another passphrase')).toEqual({
      problem: "PULUMI_CONFIG_PASSPHRASE is not its passphrase: the salt's check value does not decrypt",
    });
  });

  it('refuses a salt of another shape, and a value changed after it was sealed', () => {
    expect(unlockStack('v2:abc:def', PASSPHRASE)).toEqual({
      problem: 'its encryptionsalt is not a v1 passphrase salt',
    });
    const decrypt = unlockStack(stack.encryptionSalt, PASSPHRASE) as (v: string) => string;
    const [version, nonce, sealed] = stack.seal(NODE_KEY).split(':');
    const bytes = Buffer.from(sealed, 'base64');
    bytes[0] ^= 1;
    expect(() => decrypt(`${version}:${nonce}:${bytes.toString('base64')}`)).toThrow();
  });

  it('reads the passphrase as Pulumi does: the variable, else the file it names, trimmed', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-passphrase-')), 'phrase');
    fs.writeFileSync(file, `${PASSPHRASE}\n`);
    expect(passphraseFromEnvironment({ PULUMI_CONFIG_PASSPHRASE: 'x', PULUMI_CONFIG_PASSPHRASE_FILE: file })).toBe('x');
    expect(passphraseFromEnvironment({ PULUMI_CONFIG_PASSPHRASE_FILE: file })).toBe(PASSPHRASE);
    expect(passphraseFromEnvironment({})).toBeUndefined();
    fs.rmSync(path.dirname(file), { recursive: true });
  });
});

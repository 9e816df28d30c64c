/**
 * The backup password a machine derives from the key it holds (key custody machine: `hmac_sha256_of_key` in
 * scripts/remote/lib.sh, run by the node-key step) is the one the program derives from a key the stack holds
 * (components/backupPassword.ts): a node switched from one custody to the other keeps opening its backups. Run here
 * with bash on key files as Besu and the node-key step write them (with or without 0x, with a trailing newline), and
 * keys whose pads hold the bytes a shell's printf could take for something else (%, \, NUL).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { derivedBackupPassword } from '../../components/backupPassword';
import { BACKUP_PASSWORD_DERIVATION_LABEL } from '../../core/catalog/keyCustody';
import { KEY_ONE } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

const work = workFolder('lacchain-hmac-');

/** Runs lib.sh's hmac_sha256_of_key on a key file holding `text`, with the node-key step's label. */
function machineDerived(text: string): { code: number | null; stdout: string } {
  const file = path.join(work, 'key');
  fs.writeFileSync(file, text, { mode: 0o600 });
  const script = `STEP_NAME=test; . "$1"; hmac_sha256_of_key "$3" <"$2"`;
  const result = spawnSync(
    'bash',
    ['-c', script, 'bash', path.join(PROJECT_DIR, 'scripts/remote/lib.sh'), file, BACKUP_PASSWORD_DERIVATION_LABEL],
    { encoding: 'utf8', timeout: 30_000 },
  );
  return { code: result.status, stdout: result.stdout.trim() };
}

/** Keys (0x + 64 hex), the second and third with bytes that the HMAC's pads turn into %, \ and NUL. */
const KEYS = [
  KEY_ONE,
  `0x1379365c00ff250a${'d5'.repeat(24)}`,
  `0x6a00${'ff'.repeat(30)}`,
  '0x4f2c1d0e9b8a7f6e5d4c3b2a19080706f5e4d3c2b1a09182736455463728190a',
];

describe('the backup password a machine derives from its key', () => {
  it.each(KEYS)('is the one the program derives, for key %s with and without 0x', (key) => {
    const expected = derivedBackupPassword(key);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
    expect(machineDerived(key)).toEqual({ code: 0, stdout: expected });
    expect(machineDerived(key.slice(2))).toEqual({ code: 0, stdout: expected });
    expect(derivedBackupPassword(key.slice(2))).toBe(expected);
  });

  it.each(KEYS)('reads key %s the same with a trailing newline, and in upper case', (key) => {
    const expected = derivedBackupPassword(key);
    expect(machineDerived(`${key}\n`)).toEqual({ code: 0, stdout: expected });
    expect(machineDerived(`${key.slice(2)}\n`)).toEqual({ code: 0, stdout: expected });
    expect(machineDerived(`0x${key.slice(2).toUpperCase()}`)).toEqual({ code: 0, stdout: expected });
  });

  it('differs from key to key', () => {
    expect(new Set(KEYS.map((key) => machineDerived(key).stdout)).size).toBe(KEYS.length);
  });

  it.each([
    ['63 hex digits', `0x${'1'.repeat(63)}`],
    ['65 hex digits', `0x${'1'.repeat(65)}`],
    ['a non-hex digit', `0x${'1'.repeat(63)}g`],
    ['two lines', `${KEY_ONE}\n${KEY_ONE}`],
    ['nothing', ''],
  ])('fails on a file that is not a key (%s), printing nothing', (_what, text) => {
    const result = machineDerived(text);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
  });
});

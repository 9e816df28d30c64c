/**
 * The key check of a cluster node whose key is the operator's Secret (scripts/kubernetes/check-node-key.sh, the pod's
 * `<node>-key-check` init container), run for real with the Besu stand-in's `public-key export` (tests/fixtures/
 * besu-standin, not Besu): the pod starts only on the key whose public key is the node's `publicKey`; another key, an
 * empty entry or a file that is no key stops it, with one line saying why (also the container's termination message).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { publicKeyHex } from '../../core/identity/nodeKey';
import { SCRIPTS_DIR } from '../../core/scripts';
import { KEY_ONE } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

const script = path.join(SCRIPTS_DIR, 'kubernetes/check-node-key.sh');
const besu = path.join(PROJECT_DIR, 'tests/fixtures/besu-standin/bin/besu');
const dir = workFolder('lacchain-key-check-');

const PUBLIC_KEY = `0x${publicKeyHex(KEY_ONE).replace(/^0x/, '')}`;
const OTHER_KEY = `0x${'0'.repeat(63)}2`;

/** Runs the check on a key file holding `text`, expecting the public key of KEY_ONE. */
function check(text: string) {
  const keyFile = path.join(dir, 'key');
  fs.writeFileSync(keyFile, text, { mode: 0o400 });
  const result = spawnSync('/bin/sh', [script, besu, keyFile, PUBLIC_KEY, 'vault-writer-key', 'nodekey'], {
    encoding: 'utf8',
    env: { ...process.env, TMPDIR: dir },
    timeout: 60_000,
  });
  fs.rmSync(keyFile, { force: true });
  return { code: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

describe('check-node-key.sh (the key check of keyCustody secret)', () => {
  it('lets the pod start on the key of publicKey, and leaves no file behind', () => {
    const result = check(`${KEY_ONE}\n`);
    expect(result).toEqual({
      code: 0,
      stdout: `lacchain: the key in entry nodekey of Secret vault-writer-key is the node's (public key ${PUBLIC_KEY})`,
      stderr: '',
    });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('refuses another key, naming both public keys, the Secret and its entry, in one line', () => {
    const result = check(OTHER_KEY);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toEqual([
      `lacchain: the key in entry nodekey of Secret vault-writer-key has public key 0x${publicKeyHex(OTHER_KEY).replace(/^0x/, '')}, not the node's publicKey ${PUBLIC_KEY}: the node does not start (key custody secret, docs/security.md#key-custody)`,
    ]);
  });

  it.each([
    ['an empty entry', '', 'entry nodekey of Secret vault-writer-key is empty or missing'],
    [
      'a file that is no key',
      'not a key\n',
      'entry nodekey of Secret vault-writer-key is not a node key Besu can read',
    ],
  ])('refuses %s', (_what, text, reason) => {
    const result = check(text);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`lacchain: ${reason}`);
    expect(result.stderr.split('\n')).toHaveLength(1);
  });
});

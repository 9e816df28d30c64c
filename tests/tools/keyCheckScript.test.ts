/**
 * The key check of a cluster node whose key is the operator's Secret (scripts/kubernetes/check-node-key.sh, the pod's
 * `<node>-key-check` init container), run for real with the Besu stand-in's `public-key export` (tests/fixtures/
 * besu-standin, not Besu): the pod starts only on the key whose public key is the node's `publicKey`; another key, an
 * empty entry, a file that is no key, or a config.toml that would have Besu read another key file than the checked
 * copy stops it, with one line saying why (also the container's termination message).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { publicKeyHex } from '../../core/identity/nodeKey';
import { MISSING_KEY_EXIT_CODE, MISSING_KEY_EXIT_VARIABLE } from '../../core/catalog/remote';
import { SCRIPTS_DIR, START_COMPANION_SCRIPT } from '../../core/scripts';
import { KEY_ONE } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

const script = path.join(SCRIPTS_DIR, 'kubernetes/check-node-key.sh');
const besu = path.join(PROJECT_DIR, 'tests/fixtures/besu-standin/bin/besu');
const dir = workFolder('lacchain-key-check-');

const PUBLIC_KEY = `0x${publicKeyHex(KEY_ONE).replace(/^0x/, '')}`;
const OTHER_KEY = `0x${'0'.repeat(63)}2`;

/** Where the check copies a key that passed (the pod's memory volume), and the node's config.toml (outside `dir`). */
const checkedKey = path.join(dir, 'checked-key');
const configDir = workFolder('lacchain-key-check-config-');
const configFile = path.join(configDir, 'config.toml');
/** config.toml as the program writes it for the pod: Besu reads the checked copy. */
const CONFIG = `data-path = "/data"\nnode-private-key-file = "${checkedKey}"\np2p-port = 30303\n`;

/** Runs the check on a key file holding `text`, expecting the public key of KEY_ONE, with `config` as config.toml. */
function check(text: string, config = CONFIG) {
  const keyFile = path.join(dir, 'key');
  fs.writeFileSync(keyFile, text, { mode: 0o400 });
  fs.writeFileSync(configFile, config);
  const result = spawnSync(
    '/bin/sh',
    [script, besu, keyFile, PUBLIC_KEY, 'vault-writer-key', 'nodekey', checkedKey, configFile],
    { encoding: 'utf8', env: { ...process.env, TMPDIR: dir }, timeout: 60_000 },
  );
  fs.rmSync(keyFile, { force: true });
  return { code: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

/** The relay signer's launcher as the pod runs it: the checked copy into WRITER_KEY, then the signer (here `env`). */
function startSigner() {
  const result = spawnSync(
    '/bin/sh',
    [path.join(SCRIPTS_DIR, START_COMPANION_SCRIPT), '/usr/bin/env', 'WRITER_KEY', checkedKey],
    { encoding: 'utf8', env: { PATH: process.env.PATH, [MISSING_KEY_EXIT_VARIABLE]: String(MISSING_KEY_EXIT_CODE) } },
  );
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.trim() };
}

describe('check-node-key.sh (the key check of keyCustody secret)', () => {
  it('lets the pod start on the key of publicKey, copying it where the pod reads it, and leaves no other file behind', () => {
    const result = check(`${KEY_ONE}\n`);
    expect(result).toEqual({
      code: 0,
      stdout: `lacchain: the key in entry nodekey of Secret vault-writer-key is the node's (public key ${PUBLIC_KEY})`,
      stderr: '',
    });
    expect(fs.readFileSync(checkedKey, 'utf8')).toBe(`${KEY_ONE}\n`);
    // Readable by the pod's user alone (the Secret's file here is 0400, as its defaultMode 0440 less the check's umask).
    expect(fs.statSync(checkedKey).mode & 0o077).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(['checked-key']);
  });

  it.each([
    ['the raw Secret', `data-path = "/data"\nnode-private-key-file = "/etc/besu/secret-key/key"\n`],
    ['the checked copy and then the raw Secret', `${CONFIG}node-private-key-file = "/etc/besu/secret-key/key"\n`],
    ['no key file at all (Besu would make a key)', 'data-path = "/data"\n'],
  ])(
    'refuses a config.toml whose node-private-key-file is %s, even with the right key in the Secret, and leaves no copy',
    (_what, config) => {
      const result = check(`${KEY_ONE}\n`, config);
      expect(result.code).toBe(1);
      expect(result.stderr.split('\n')).toEqual([
        `lacchain: ${configFile} does not set node-private-key-file to the checked key ${checkedKey}: the node does not start (key custody secret, docs/security.md#key-custody)`,
      ]);
      expect(fs.existsSync(checkedKey)).toBe(false);
    },
  );

  it('refuses another key, naming both public keys, the Secret and its entry, in one line', () => {
    const result = check(OTHER_KEY);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toEqual([
      `lacchain: the key in entry nodekey of Secret vault-writer-key has public key 0x${publicKeyHex(OTHER_KEY).replace(/^0x/, '')}, not the node's publicKey ${PUBLIC_KEY}: the node does not start (key custody secret, docs/security.md#key-custody)`,
    ]);
    expect(fs.existsSync(checkedKey)).toBe(false);
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
    expect(fs.existsSync(checkedKey)).toBe(false);
  });

  it('refuses a key swapped in the Secret between two checks, and the relay signer started after that refuses too', () => {
    // The first start: the right key passes, and the signer starts with it.
    expect(check(`${KEY_ONE}\n`).code).toBe(0);
    const signer = startSigner();
    expect(signer.code).toBe(0);
    expect(signer.stdout.split('\n')).toContain(`WRITER_KEY=${KEY_ONE}`);
    // The Secret now holds another key (a refresh, a mistaken kubectl apply): the next pod's check refuses it...
    expect(check(OTHER_KEY).code).toBe(1);
    // ...and removes the checked copy, so the signer's next start refuses, in one line, instead of signing with it.
    const again = startSigner();
    expect(again.code).toBe(MISSING_KEY_EXIT_CODE);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(
      `lacchain: node key ${checkedKey} is missing or empty: the companion cannot start without it.`,
    );
  });
});

/**
 * The operator commands `keygen` and `identity`, run as an operator runs them.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parsePrivateKey, CURVE_ORDER } from '../../core/identity/nodeKey';
import { KEY_ONE, KEY_ONE_ADDRESS, KEY_ONE_PUBLIC } from '../../testing/fixtures';
import { runNpm } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

const dir = workFolder('lacchain-identity-');
const file = (name: string, contents?: string) => {
  const p = path.join(dir, name);
  if (contents !== undefined) fs.writeFileSync(p, contents);
  return p;
};

describe('identity', () => {
  it('prints the published identity of private key 1', () => {
    const result = runNpm('identity', ['--key-file', file('one', KEY_ONE), '--host', '190.113.0.10']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `{"publicKey":"0x${KEY_ONE_PUBLIC}","enode":"enode://${KEY_ONE_PUBLIC}@190.113.0.10:60606","address":"${KEY_ONE_ADDRESS}"}\n`,
    );
  });

  it('takes --port', () => {
    const result = runNpm('identity', [
      '--key-file',
      file('one-nl', `${KEY_ONE}\n`),
      '--host',
      'node.example.org',
      '--port',
      '30303',
    ]);
    expect(JSON.parse(result.stdout).enode).toBe(`enode://${KEY_ONE_PUBLIC}@node.example.org:30303`);
  });

  it.each([
    ['wrong length', '0x1234', /has 4 hex digits/],
    ['not hex', `0x${'z'.repeat(64)}`, /not hexadecimal/],
    ['zero', `0x${'0'.repeat(64)}`, /zero/],
    ['above the curve order', `0x${(CURVE_ORDER + 1n).toString(16)}`, /curve order/],
    ['two lines', `${KEY_ONE}\n${KEY_ONE}`, /more than one line/],
  ])('refuses a key file that is %s, naming the file', (name, contents, problem) => {
    const keyFile = file(name.replace(/ /g, '-'), contents);
    const result = runNpm('identity', ['--key-file', keyFile, '--host', '190.113.0.10']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`key file ${keyFile}`);
    expect(result.stderr).toMatch(problem);
    expect(result.stderr).not.toMatch(/at .*\.ts:\d+/);
  });

  it('refuses a missing key file and bad options with usage errors', () => {
    expect(runNpm('identity', ['--key-file', file('absent'), '--host', '1.2.3.4']).stderr).toMatch(
      /cannot be read: ENOENT/,
    );
    const noHost = runNpm('identity', ['--key-file', file('one')]);
    expect([noHost.code, noHost.stderr]).toEqual([2, expect.stringMatching(/--host is required/)]);
    const badPort = runNpm('identity', ['--key-file', file('one'), '--host', '1.2.3.4', '--port', '70000']);
    expect([badPort.code, badPort.stderr]).toEqual([2, expect.stringMatching(/--port: given "70000"/)]);
  });

  it.each(['190.113.0.999', '300.1.1.1', '10.0.0', 'node..example.org'])(
    'refuses --host %s (no IPv4 address and no DNS name): no enode to send',
    (host) => {
      const result = runNpm('identity', ['--key-file', file('one'), '--host', host]);
      expect([result.code, result.stdout, result.stderr.trim()]).toEqual([
        2,
        '',
        expect.stringContaining(`--host: given ${JSON.stringify(host)}; allowed: an IPv4 address or a DNS name`),
      ]);
    },
  );
});

describe('keygen', () => {
  it('writes a new key file with mode 0600 and prints the identity, never the key', () => {
    const out = file('new-key');
    const result = runNpm('keygen', ['--out', out, '--host', '190.113.0.10']);
    expect(result.code).toBe(0);
    const key = fs.readFileSync(out, 'utf8');
    expect(key).toMatch(/^0x[0-9a-f]{64}$/);
    expect(() => parsePrivateKey(key)).not.toThrow();
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    const shown = JSON.parse(result.stdout);
    expect(Object.keys(shown).sort()).toEqual(['address', 'enode', 'keyFile', 'publicKey']);
    expect(result.stdout).not.toContain(key.slice(2));
    // The printed identity is the key's: identity agrees.
    const again = JSON.parse(runNpm('identity', ['--key-file', out, '--host', '190.113.0.10']).stdout);
    expect(again).toEqual({ publicKey: shown.publicKey, enode: shown.enode, address: shown.address });
  });

  it('refuses to overwrite an existing key file', () => {
    const out = file('existing', KEY_ONE);
    const result = runNpm('keygen', ['--out', out]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('already exists: refusing to overwrite');
    expect(fs.readFileSync(out, 'utf8')).toBe(KEY_ONE);
  });

  it('makes a different key every time', () => {
    runNpm('keygen', ['--out', file('a')]);
    runNpm('keygen', ['--out', file('b')]);
    expect(fs.readFileSync(file('a'), 'utf8')).not.toBe(fs.readFileSync(file('b'), 'utf8'));
  });
});

/**
 * The pod's start step (scripts/kubernetes/start-besu.sh), run for real: no key, no Besu.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { SCRIPTS_DIR } from '../../core/scripts';
import { KUBERNETES_START_SCRIPT } from '../../core/kubernetes/nodeFiles';

const script = path.join(SCRIPTS_DIR, KUBERNETES_START_SCRIPT);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-start-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
// A recording stand-in for the Besu binary: writes its arguments to a file.
const fakeBesu = path.join(dir, 'besu');
fs.writeFileSync(fakeBesu, `#!/bin/sh\necho "$@" > "${dir}/ran"\n`, { mode: 0o755 });

function start(keyFile: string) {
  fs.rmSync(path.join(dir, 'ran'), { force: true });
  return spawnSync('/bin/sh', [script, fakeBesu, keyFile, '/etc/besu/config/config.toml'], { encoding: 'utf8' });
}

describe('start-besu.sh', () => {
  it('starts Besu with the config file when the key is there', () => {
    const key = path.join(dir, 'key');
    fs.writeFileSync(key, `0x${'1'.repeat(64)}`);
    const result = start(key);
    expect(result.status).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'ran'), 'utf8')).toBe('--config-file=/etc/besu/config/config.toml\n');
  });

  it.each([
    ['missing', path.join(dir, 'absent')],
    ['empty', path.join(dir, 'empty')],
  ])('refuses to start Besu when the key is %s', (_name, key) => {
    if (key.endsWith('empty')) fs.writeFileSync(key, '');
    const result = start(key);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/refusing to start Besu with a new identity/);
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false);
  });
});

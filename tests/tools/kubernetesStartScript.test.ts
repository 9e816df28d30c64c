/**
 * The start step of both paths (scripts/start-node.sh), run for real: no key, no Besu.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { MISSING_KEY_EXIT_CODE, MISSING_KEY_EXIT_VARIABLE } from '../../core/catalog/remote';
import { SCRIPTS_DIR, START_NODE_SCRIPT } from '../../core/scripts';
import { workFolder } from '../../testing/workFolder';

const script = path.join(SCRIPTS_DIR, START_NODE_SCRIPT);
const dir = workFolder('lacchain-start-');
// A recording stand-in for the Besu binary: writes its arguments to a file.
const fakeBesu = path.join(dir, 'besu');
fs.writeFileSync(fakeBesu, `#!/bin/sh\necho "$@" > "${dir}/ran"\n`, { mode: 0o755 });

function start(keyFile: string, ...log: string[]) {
  fs.rmSync(path.join(dir, 'ran'), { force: true });
  return spawnSync('/bin/sh', [script, fakeBesu, keyFile, '/etc/besu/config/config.toml', ...log], {
    encoding: 'utf8',
    // As the systemd unit and the container give it.
    env: { ...process.env, [MISSING_KEY_EXIT_VARIABLE]: String(MISSING_KEY_EXIT_CODE) },
  });
}

describe('start-node.sh', () => {
  it('starts Besu with the config file when the key is there', () => {
    const key = path.join(dir, 'key');
    fs.writeFileSync(key, `0x${'1'.repeat(64)}`);
    const result = start(key);
    expect(result.status).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'ran'), 'utf8')).toBe('--config-file=/etc/besu/config/config.toml\n');
  });

  it('appends Besu output to the info log when one is given (the remote machine)', () => {
    const key = path.join(dir, 'key');
    fs.writeFileSync(key, `0x${'1'.repeat(64)}`);
    const log = path.join(dir, 'besu_info.log');
    fs.writeFileSync(log, 'earlier\n');
    fs.writeFileSync(fakeBesu, `#!/bin/sh\necho "$@" > "${dir}/ran"\necho started\n`, { mode: 0o755 });
    expect(start(key, log).status).toBe(0);
    expect(fs.readFileSync(log, 'utf8')).toBe('earlier\nstarted\n');
  });

  it.each([
    ['missing', path.join(dir, 'absent')],
    ['empty', path.join(dir, 'empty')],
  ])('refuses to start Besu when the key is %s', (_name, key) => {
    if (key.endsWith('empty')) fs.writeFileSync(key, '');
    const result = start(key);
    expect(result.status).toBe(MISSING_KEY_EXIT_CODE);
    expect(result.stderr).toMatch(/refusing to start Besu with a new identity/);
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false);
  });
});

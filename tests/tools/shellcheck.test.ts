/**
 * Every shell script of the project (remote steps, pod start step, test hosts, the Besu stand-in's launcher, the tools' builds) is
 * shellcheck-clean.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { PROJECT_DIR } from '../../testing/run';

function shellScripts(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : shellScripts(file);
    const first = fs.readFileSync(file, 'utf8').split('\n', 1)[0];
    return entry.name.endsWith('.sh') || /^#!.*\b(ba)?sh\b/.test(first) ? [file] : [];
  });
}

const scripts = ['scripts', 'tests', 'tools', '.ci'].flatMap((d) => shellScripts(path.join(PROJECT_DIR, d)));
const available = spawnSync('shellcheck', ['--version']).status === 0;

describe('shell scripts', () => {
  it('are found where expected', () => {
    const names = scripts.map((s) => path.relative(PROJECT_DIR, s));
    expect(names).toEqual(expect.arrayContaining(['scripts/remote/start.sh', 'scripts/start-node.sh', '.ci/run']));
  });

  it('are shellcheck-clean', () => {
    if (!available && process.env.CI !== 'true') {
      console.warn('shellcheck is not installed: apt-get install shellcheck');
      return;
    }
    const result = spawnSync('shellcheck', ['-x', ...scripts], { cwd: PROJECT_DIR, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

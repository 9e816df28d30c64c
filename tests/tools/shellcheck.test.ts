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
/** Without shellcheck the check is a skipped test, and says why; under CI=true it runs, and fails. */
const runs = available || process.env.CI === 'true';
if (!runs) console.warn('shellcheck-clean skipped: shellcheck is not installed (apt-get install shellcheck)');
const needsShellcheck = runs ? it : it.skip;

describe('shell scripts', () => {
  it('are found where expected', () => {
    const names = scripts.map((s) => path.relative(PROJECT_DIR, s));
    expect(names).toEqual(expect.arrayContaining(['scripts/remote/start.sh', 'scripts/start-node.sh', '.ci/run']));
  });

  needsShellcheck('are shellcheck-clean', () => {
    const result = spawnSync('shellcheck', ['-x', ...scripts], { cwd: PROJECT_DIR, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

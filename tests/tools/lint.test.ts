/**
 * The type-check (`npm run build`) and the lint (`npm run lint`: eslint, prettier, and knip for unused files, exports
 * and dependencies) as a test file, so that `npm test` (and CI) runs them beside the other suites instead of before
 * them, and a failure is a failed test named in the summary.
 */
import { spawnSync } from 'child_process';
import { PROJECT_DIR } from '../../testing/run';

jest.setTimeout(5 * 60 * 1000);

/** `npm run <script>` in the project folder: its exit status and everything it printed. */
function npmRun(script: string): { status: number | null; output: string } {
  const result = spawnSync('npm', ['run', '--silent', script], { cwd: PROJECT_DIR, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('the code', () => {
  it('type-checks (npm run build)', () => {
    // On failure, the object printed shows tsc's errors.
    expect(npmRun('build')).toMatchObject({ status: 0 });
  });

  it('passes the lint (npm run lint: eslint, prettier, knip)', () => {
    expect(npmRun('lint')).toMatchObject({ status: 0 });
  });
});

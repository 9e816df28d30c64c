/**
 * The type-check (`npm run build`) and the lint (`npm run lint`: eslint, prettier, and knip for unused files, exports
 * and dependencies) as a test file, so that `npm test` (and CI) runs them beside the other suites instead of before
 * them, and a failure is a failed test named in the summary.
 */
import { runNpm } from '../../testing/run';

jest.setTimeout(5 * 60 * 1000);

describe('the code', () => {
  // On failure, the result printed shows what tsc, eslint, prettier or knip said.
  it('type-checks (npm run build)', () => {
    expect(runNpm('build', [])).toMatchObject({ code: 0 });
  });

  it('passes the lint (npm run lint: eslint, prettier, knip)', () => {
    expect(runNpm('lint', [])).toMatchObject({ code: 0 });
  });
});

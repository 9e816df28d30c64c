/**
 * The end-to-end suites' frame: whether this machine can build test hosts (testing/host/), the suite that needs them,
 * and progress lines to follow a long run.
 */

import * as path from 'path';
import { PROJECT_DIR } from './run';

/** How many more times a failed test of a suite with independent tests runs (one). */
const E2E_RETRIES = 1;

/**
 * The security suites (paths from the project folder): what they guard cannot be right one time in two, so none of
 * them may ask for a second try (hostSuite refuses it).
 */
export const SECURITY_SUITES = [
  'tests/e2e/hostileUser.test.ts',
  'tests/e2e/restoreKeyCopy.test.ts',
  'tests/tools/keyCheckScript.test.ts',
];

/** How a suite of real hosts runs its tests. */
export interface HostSuiteOptions {
  /**
   * Each test of the file starts from the state it needs (a `beforeEach` puts the host back), so one that fails may run
   * once more, at once (before any other test), its first error printed, and named in the run's summary
   * (tests/summary.js: "on a second try"); a security suite (SECURITY_SUITES) may not ask for it. Without it (the
   * default) a failed test fails: the file's tests build on one another, and a second try would run on what the failed
   * try, or a later test, left.
   */
  independentTests?: boolean;
}

/** Whether this machine can build test hosts (root on Linux, not switched off by LACCHAIN_E2E_HOSTS=0). */
export function hostsPossible(): boolean {
  return process.platform === 'linux' && process.getuid?.() === 0 && process.env.LACCHAIN_E2E_HOSTS !== '0';
}

/**
 * `describe`, or `describe.skip` with a printed reason where test hosts cannot be built. In CI (CI=true) the tests
 * must run: there the reason is an error. A failed test runs again only in a file of independent tests
 * (`HostSuiteOptions.independentTests`).
 */
export function hostSuite(what: string, options: HostSuiteOptions = {}): jest.Describe {
  const file = path.relative(PROJECT_DIR, expect.getState().testPath ?? '');
  if (options.independentTests && SECURITY_SUITES.includes(file)) {
    throw new Error(`${file} is a security suite: its tests get no second try (testing/hostSuite.ts, SECURITY_SUITES)`);
  }
  if (hostsPossible()) {
    if (options.independentTests) {
      // Jest 30 runs a retry after the describe's later tests unless told otherwise: then it would run on their state.
      jest.retryTimes(E2E_RETRIES, { retryImmediately: true, logErrorsBeforeRetry: true });
    }
    return describe;
  }
  const reason = process.env.CI === 'true' ? 'CI must run them: run as root on Linux' : 'needs root on Linux';
  console.warn(`${what} skipped: ${reason}`);
  if (process.env.CI === 'true') throw new Error(`${what} cannot run: ${reason}`);
  return describe.skip;
}

/** Progress lines on stderr (LACCHAIN_TEST_VERBOSE=1), to follow a long run. */
export function progress(line: string): void {
  if (process.env.LACCHAIN_TEST_VERBOSE === '1') {
    process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  }
}

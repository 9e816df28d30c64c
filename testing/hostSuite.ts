/**
 * The end-to-end suites' frame: whether this machine can build test hosts (testing/host/), the suite that needs them,
 * and progress lines to follow a long run.
 */

/** How many more times a failed end-to-end test runs (one). */
const E2E_RETRIES = 1;

/** Whether this machine can build test hosts (root on Linux, not switched off by LACCHAIN_E2E_HOSTS=0). */
export function hostsPossible(): boolean {
  return process.platform === 'linux' && process.getuid?.() === 0 && process.env.LACCHAIN_E2E_HOSTS !== '0';
}

/**
 * `describe`, or `describe.skip` with a printed reason where test hosts cannot be built. In CI (CI=true) the tests
 * must run: there the reason is an error.
 */
export function hostSuite(what: string): jest.Describe {
  if (hostsPossible()) {
    // A test of a real host that fails is run once more, its first failure printed, and named in the run's summary
    // (tests/summary.js: "passed on a second try"): a broken behaviour fails both times; a wait that lost a race with a
    // busy machine is shown, not hidden, and does not cost the run.
    jest.retryTimes(E2E_RETRIES, { logErrorsBeforeRetry: true });
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

/**
 * The run's summary (tests/summary.js, read by CI): its closing line `N passed, N failed[, N skipped], N on a second
 * try` from jest's JSON reports, merged; the tests that passed on a second try named above it. And no security suite
 * may ask for a second try (testing/hostSuite.ts).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { hostSuite, SECURITY_SUITES } from '../../testing/hostSuite';
import { PROJECT_DIR } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

const work = workFolder('lacchain-summary-');
let reports = 0;

/** A jest JSON report of one file whose tests ended as `tests` say (`retried`: passed on its second invocation). */
function report(
  file: string,
  tests: Array<'passed' | 'failed' | 'pending' | 'retried'>,
  extra: Record<string, number> = {},
): string {
  const count = (status: string) => tests.filter((t) => t === status || (status === 'passed' && t === 'retried'));
  const written = path.join(work, `report-${++reports}.json`);
  const results = tests.map((t, i) => ({
    title: `test ${i}`,
    fullName: `suite test ${i}`,
    status: t === 'retried' ? 'passed' : t,
    duration: 10 * (i + 1),
    ...(t === 'retried' ? { invocations: 2, retryReasons: ['Error: the first try failed\n    at somewhere'] } : {}),
  }));
  fs.writeFileSync(
    written,
    JSON.stringify({
      startTime: Date.now() - 5000,
      numPassedTests: count('passed').length,
      numFailedTests: count('failed').length,
      numPendingTests: count('pending').length,
      numTodoTests: 0,
      numRuntimeErrorTestSuites: 0,
      ...extra,
      testResults: [
        {
          name: path.join(PROJECT_DIR, file),
          startTime: Date.now() - 4000,
          endTime: Date.now() - 1000,
          assertionResults: results,
        },
      ],
    }),
  );
  return written;
}

/** Runs the summary on `files`; its lines and exit status. */
function summary(...files: string[]) {
  const result = spawnSync('node', [path.join(PROJECT_DIR, 'tests/summary.js'), ...files], {
    cwd: PROJECT_DIR,
    encoding: 'utf8',
  });
  return { lines: result.stdout.trimEnd().split('\n'), code: result.status, stderr: result.stderr };
}

describe("the run's summary", () => {
  it('ends with passed, failed, skipped and second tries, counting a file that did not run as failed', () => {
    const { lines, code } = summary(
      report('tests/e2e/cuts.test.ts', ['passed', 'passed', 'failed', 'pending', 'retried'], {
        numRuntimeErrorTestSuites: 1,
      }),
    );
    expect(lines[lines.length - 1]).toBe('3 passed, 2 failed, 1 skipped, 1 on a second try');
    expect(code).toBe(0);
    // The test that passed on a second try is named, with its first try's error.
    const at = lines.indexOf("passed on a second try (1): the first try's error is in the log above");
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 3)).toEqual([
      '  tests/e2e/cuts.test.ts: suite test 4',
      '    Error: the first try failed',
    ]);
  });

  it('adds the reports of the two jests (the real-worker tier beside the rest), and says no skipped when none was', () => {
    const { lines } = summary(
      report('tests/unit/a.test.ts', ['passed', 'passed']),
      report('tests/kubelet/b.test.ts', ['passed', 'failed']),
    );
    expect(lines[lines.length - 1]).toBe('3 passed, 1 failed, 0 on a second try');
    expect(lines).toContain('the 4 slowest tests:');
  });

  it('fails, printing no closing line, when it cannot read a report (tests/run.sh then prints its own)', () => {
    const { lines, code } = summary(path.join(work, 'missing.json'));
    expect(code).not.toBe(0);
    expect(lines.join('\n')).not.toMatch(/passed, .* failed/);
  });
});

describe('a security suite', () => {
  it.each(SECURITY_SUITES)('%s may not ask for a second try', (file) => {
    const testPath = expect.getState().testPath;
    expect.setState({ testPath: path.join(PROJECT_DIR, file) });
    try {
      expect(() => hostSuite('x', { independentTests: true })).toThrow(
        `${file} is a security suite: its tests get no second try`,
      );
    } finally {
      expect.setState({ testPath });
    }
  });

  it('asks for none in its source either (jest.retryTimes)', () => {
    for (const file of SECURITY_SUITES) {
      expect(fs.readFileSync(path.join(PROJECT_DIR, file), 'utf8')).not.toMatch(/retryTimes|independentTests/);
    }
  });
});

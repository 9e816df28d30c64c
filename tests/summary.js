// Prints, from jest's JSON report (or reports, merged): each test file's wall time, slowest first (where a run's time goes), the slowest
// tests, the tests that passed only on a second try, then the plain summary line CI reads,
// "N passed, N failed[, N skipped], N on a second try", last (tests/tools/summary.test.ts). Only a file of independent
// tests may ask for a second try (testing/hostSuite.ts); the security suites never do, so none of theirs is counted here.
const fs = require('fs');
const path = require('path');

/** How many of the slowest tests are listed after the files. */
const SLOWEST_TESTS = 20;

/**
 * The run's report: jest's JSON reports given (tests/run.sh runs the real-worker tier in a jest of its own beside the
 * rest), as one: their files together, their counts added, the earliest start.
 */
function mergedReport(files) {
  const reports = files.map((file) => JSON.parse(fs.readFileSync(file, 'utf8')));
  const sum = (key) => reports.reduce((total, r) => total + (r[key] ?? 0), 0);
  return {
    startTime: Math.min(...reports.map((r) => r.startTime)),
    testResults: reports.flatMap((r) => r.testResults),
    numPassedTests: sum('numPassedTests'),
    numFailedTests: sum('numFailedTests'),
    numRuntimeErrorTestSuites: sum('numRuntimeErrorTestSuites'),
    numPendingTests: sum('numPendingTests'),
    numTodoTests: sum('numTodoTests'),
  };
}

const report = mergedReport(process.argv.slice(2));
const files = report.testResults
  .map((file) => ({ name: path.relative(process.cwd(), file.name), seconds: (file.endTime - file.startTime) / 1000 }))
  .filter((file) => Number.isFinite(file.seconds))
  .sort((a, b) => b.seconds - a.seconds);
if (files.length > 0) {
  const wall = (Date.now() - report.startTime) / 1000;
  const sum = files.reduce((total, file) => total + file.seconds, 0);
  console.log(
    `\ntest files by wall time (${files.length} files, ${sum.toFixed(0)} s in all, ${wall.toFixed(0)} s of jest):`,
  );
  for (const file of files) console.log(`${file.seconds.toFixed(1).padStart(8)} s  ${file.name}`);
  console.log('');
  // And the slowest tests themselves: where inside those files the time goes.
  const tests = report.testResults
    .flatMap((file) => file.assertionResults.map((test) => ({ file: path.relative(process.cwd(), file.name), test })))
    .filter(({ test }) => Number.isFinite(test.duration))
    .sort((a, b) => b.test.duration - a.test.duration)
    .slice(0, SLOWEST_TESTS);
  console.log(`the ${tests.length} slowest tests:`);
  for (const { file, test } of tests) {
    console.log(`${(test.duration / 1000).toFixed(1).padStart(8)} s  ${file}: ${test.title}`);
  }
  console.log('');
}
// The tests that failed once and passed when run again (testing/hostSuite.ts): named, with the first error.
const retried = report.testResults.flatMap((file) =>
  file.assertionResults
    .filter((test) => test.status === 'passed' && (test.invocations ?? 1) > 1)
    .map((test) => ({ file: path.relative(process.cwd(), file.name), test })),
);
if (retried.length > 0) {
  console.log(`passed on a second try (${retried.length}): the first try's error is in the log above`);
  for (const { file, test } of retried) {
    const first = (test.retryReasons ?? [])[0] ?? '';
    console.log(`  ${file}: ${test.fullName}\n    ${first.split('\n').find((line) => line.trim()) ?? ''}`);
  }
  console.log('');
}
const passed = report.numPassedTests;
const failed = report.numFailedTests + report.numRuntimeErrorTestSuites;
const skipped = report.numPendingTests + report.numTodoTests;
console.log(
  `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}, ${retried.length} on a second try`,
);

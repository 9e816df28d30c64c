// Prints the plain test summary line CI reads, "N passed, N failed[, N skipped]", from jest's JSON report.
const fs = require('fs');

const report = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const failed = report.numFailedTests + report.numRuntimeErrorTestSuites;
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${report.numPassedTests} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);

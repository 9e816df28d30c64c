#!/usr/bin/env bash
# The test command (npm test): every jest suite, then one plain summary line "N passed, N failed[, N skipped]".
# Extra arguments go to jest (e.g. `npm test -- tests/unit`).
set -uo pipefail
cd "$(dirname "$0")/.."
report=$(mktemp)
trap 'rm -f "$report"' EXIT
npx jest --json --outputFile="$report" "$@"
status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  const failedSuites = r.numRuntimeErrorTestSuites;
  let line = `${r.numPassedTests} passed, ${r.numFailedTests + failedSuites} failed`;
  if (skipped > 0) line += `, ${skipped} skipped`;
  console.log(line);
' "$report" || { echo "0 passed, 1 failed"; exit 1; }
exit $status

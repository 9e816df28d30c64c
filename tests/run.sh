#!/usr/bin/env bash
# The test command (npm test): set up what the tests need (tests/setup.sh), every jest suite, then one plain summary
# line "N passed, N failed[, N skipped], N on a second try". Extra arguments go to jest (e.g. `npm test -- tests/unit`). The tiers that
# need nothing installed (tests/unit, tests/program: see tests/README.md) skip the set-up when run on their own.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
case "$*" in
  tests/unit | tests/program | "tests/unit tests/program") ;;
  *) bash tests/setup.sh || echo "tests/setup.sh failed: the tests that need its tools will say so" >&2 ;;
esac
# The command-line tools run from their build in bin/ when it is current (launcher.js); build it when a source is newer,
# so every suite runs the tools as an operator does (and no suite sees the launcher's note about a stale build).
node -e "process.exit(require('./launcher').staleBuild(process.cwd(), 'cli/node') ? 1 : 0)" || npm run --silent build:program
report=$(mktemp)
trap 'rm -f "$report"' EXIT
npx jest --json --outputFile="$report" "$@"
status=$?
# The summary exits 3 when it counted a failure jest did not (a security suite's test passing on a second try), and
# otherwise non-zero only when it could not read the report: then it printed no summary line.
node tests/summary.js "$report"
case $? in
  0) ;;
  3) exit 1 ;;
  *) echo "0 passed, 1 failed, 0 on a second try" && exit 1 ;;
esac
exit $status

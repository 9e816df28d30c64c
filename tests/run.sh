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
kubelet_report=$(mktemp)
kubelet_log=$(mktemp)
# The kubelet tier's images, built once for all its files (testing/cluster/sharedImages.ts).
kubelet_images=$(mktemp -d)
trap 'rm -f "$report" "$kubelet_report" "$kubelet_log"; rm -rf "$kubelet_images"' EXIT
if [ $# -eq 0 ]; then
  # The whole run: the real-worker tier (tests/kubelet: one real kubelet on this machine, one file at a time) in a jest
  # of its own, one file after another, beside the rest on the usual workers. In the one jest its files took worker
  # slots only to wait for the machine's one real worker, while the other files queued (tests/README.md). Run in jest's
  # own process, its files share one cluster (testing/cluster/sharedKubelet.ts).
  LACCHAIN_KUBELET_IMAGES="$kubelet_images" npx jest --json --outputFile="$kubelet_report" --maxWorkers=1 tests/kubelet \
    >"$kubelet_log" 2>&1 &
  kubelet_jest=$!
  # The rest a little behind it for the cores (nice 5: about a third of the kubelet tier's share for each of its
  # processes when both want a core): the real-worker tier is the longer chain and cannot be split, the rest can wait
  # (its four files, their hosts and tools inherit the niceness; the cluster's processes and pods do not).
  nice -n 5 npx jest --json --outputFile="$report" --testPathIgnorePatterns '/tests/kubelet/'
  status=$?
  wait "$kubelet_jest"
  kubelet_status=$?
  echo "--- the real-worker tier (tests/kubelet), run beside the rest:"
  cat "$kubelet_log"
  [ "$kubelet_status" -eq 0 ] || status=$kubelet_status
  reports=("$report" "$kubelet_report")
else
  npx jest --json --outputFile="$report" "$@"
  status=$?
  reports=("$report")
fi
# The summary exits non-zero only when it could not read a report: then it printed no summary line.
node tests/summary.js "${reports[@]}" || { echo "0 passed, 1 failed, 0 on a second try" && exit 1; }
exit $status

#!/usr/bin/env bash
# tests/half-cpu.sh [jest arguments]: the test command (tests/run.sh) on half this machine's CPU, as on a CI machine
# about twice as slow. Two busy loops in a cgroup of their own, capped at one core and ten times the default share,
# take one core for as long as the tests run, and are stopped and removed however the run ends. Needs root and the
# cgroup v1 `cpu` controller or cgroup v2 with `cpu` enabled. Its last line is tests/run.sh's summary line.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
case "${1:-}" in
  -h | --help)
    echo "usage: bash tests/half-cpu.sh [jest arguments]   (as root) the tests on half this machine's CPU; e.g. bash tests/half-cpu.sh tests/e2e/sshNodeDay2"
    exit 0
    ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "tests/half-cpu.sh: run as $(id -un), not root; it makes a cgroup: run it as root (sudo bash tests/half-cpu.sh)" >&2; exit 2; }

if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
  group=/sys/fs/cgroup/cpu/lacchain-test-half-cpu
  mkdir -p "$group"
  echo 10240 >"$group/cpu.shares"
  echo 100000 >"$group/cpu.cfs_period_us"
  echo 100000 >"$group/cpu.cfs_quota_us"
elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
  group=/sys/fs/cgroup/lacchain-test-half-cpu
  mkdir -p "$group"
  echo 1000 >"$group/cpu.weight"
  echo "100000 100000" >"$group/cpu.max"
else
  echo "tests/half-cpu.sh: no cgroup cpu controller here (cgroup v1 cpu, or v2 with cpu in cgroup.subtree_control)" >&2
  exit 2
fi

loops=()
stop_loops() {
  [ "${#loops[@]}" -eq 0 ] || kill "${loops[@]}" 2>/dev/null
  wait "${loops[@]}" 2>/dev/null
  rmdir "$group" 2>/dev/null || true
}
trap stop_loops EXIT
for _ in 1 2; do
  sh -c 'echo $$ >"$1/cgroup.procs" && exec sh -c "while :; do :; done"' half-cpu "$group" &
  loops+=("$!")
done

bash tests/run.sh "$@"

#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# crash-host.sh NAME — the machine stopped hard and booted again on the same disk: every process of the test host NAME
# (started by start-host.sh) is killed at once with SIGKILL, its init included, as a power cut ends them; then the
# host boots again from the same file system, with the same address, host key and client key, and this waits (bounded,
# LACCHAIN_TEST_BOOT_TIMEOUT seconds, default 90) until SSH answers as start-host.sh does.
#
# What it cannot show: the files' contents are those the kernel of this machine holds (its page cache is not lost),
# so a write that a real power cut would lose before it reached the disk is kept here. It is a crash of every process,
# not of the disk.
# On success it prints the host's JSON line again (hosts/NAME/host.json, with the new nspawn pid).
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
lct_host_argument "$@"
[ -f "$STATE/host.json" ] || lct_die "no running test host $NAME (start it with start-host.sh)"
IP=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ip"])' "$STATE/host.json")
PID="$(cat "$PIDFILE")"
lct_is_our_nspawn "$PID" "$ROOT" || lct_die "$NAME is not running (nspawn pid $PID is gone)"

# Everything inside at once: no process gets to clean up, flush or stop a service in order.
# shellcheck disable=SC2046 # one pid a word
kill -KILL $(lct_pids_inside "$ROOT") 2>/dev/null || true
for _ in $(seq 1 100); do
  lct_is_our_nspawn "$PID" "$ROOT" || break
  sleep 0.1
done
if lct_is_our_nspawn "$PID" "$ROOT"; then kill -KILL "$PID" 2>/dev/null || true; fi
# A killed process may take a while to go (one blocked on the disk under load): booting again while one of them still
# holds a port makes the new sshd or nginx fail to start. Wait for all of them, and say so if one outlives the wait.
for _ in $(seq 1 600); do
  [ -z "$(lct_pids_inside "$ROOT")" ] && ! lct_is_our_nspawn "$PID" "$ROOT" && break
  # shellcheck disable=SC2046 # one pid a word
  kill -KILL $(lct_pids_inside "$ROOT") 2>/dev/null || true
  sleep 0.1
done
LEFT="$(lct_pids_inside "$ROOT" | tr '\n' ' ')"
[ -z "${LEFT// /}" ] || lct_die "processes of $NAME outlived SIGKILL for 60 s: $LEFT"
lct_remove_tree "/run/systemd/nspawn/propagate/$NS"
lct_log "$NAME stopped hard; booting it again on the same disk"

# When the host does not come back, what its units said (the journal, read from inside the container).
on_failure() {
  local rc=$? init
  [ "$rc" -eq 0 ] && return 0
  init=$(pgrep -P "$(cat "$PIDFILE")" | head -n 1 || true)
  if [ -n "$init" ]; then
    lct_log "the units that failed at this boot, and their last lines:"
    nsenter --target "$init" --all journalctl -b --no-pager -p warning -n 40 2>&1 | sed 's/^/    /' >&2 || true
  fi
  exit "$rc"
}
trap on_failure EXIT
lct_boot "$NAME" "$NS" "$ROOT" "$IP" "$STATE/id_ed25519" "$STATE/known_hosts" "$PIDFILE" "$STATE/nspawn.log" \
  "${LACCHAIN_TEST_BOOT_TIMEOUT:-90}"
trap - EXIT
lct_log "$NAME is $STATUS again"
python3 - "$STATE/host.json" "$(cat "$PIDFILE")" "$STATUS" <<'PY'
import json, sys
path, pid, status = sys.argv[1], int(sys.argv[2]), sys.argv[3]
info = json.load(open(path))
info.update(pid=pid, status=status)
open(path, "w").write(json.dumps(info, separators=(",", ":")) + "\n")
print(json.dumps(info, separators=(",", ":")))
PY

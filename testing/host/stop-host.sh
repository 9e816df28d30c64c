#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# stop-host.sh NAME — stop and remove one e2e test host started by start-host.sh.
#
#   1. the systemd-nspawn process (by the pid in hosts/NAME/nspawn.pid, checked to really be
#      our nspawn): SIGTERM, which nspawn turns into an orderly poweroff of the container;
#      wait up to LACCHAIN_TEST_STOP_TIMEOUT seconds (default 20), then SIGKILL; with 0, SIGKILL at once (no
#      poweroff begun: a host whose disk is thrown away, testHost.ts's stop());
#   2. any process still running inside the host's copy (their /proc/PID/root is that copy),
#      by pid, with SIGKILL;
#   3. the host's cgroup (common.sh, lct_cgroup_dirs), the veth pair lct-NAME and the network namespace lct-NAME;
#   4. the host's state dir hosts/NAME (its rootfs overlay mount or copy, keys, pid; the overlay
#      is unmounted first) — the console log is kept
#      as logs/NAME.nspawn.log for debugging.
# With LACCHAIN_TEST_SAVE_HOST=DIR, the host's disk is saved in DIR before 4 (start-host.sh can boot a copy of it).
# Idempotent: anything already gone is skipped; it exits 0 unless NAME is invalid.
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
lct_host_argument "$@"
STOP_TIMEOUT="${LACCHAIN_TEST_STOP_TIMEOUT:-20}"

STOPPED=0
if [ -f "$PIDFILE" ]; then
  PID="$(cat "$PIDFILE" 2>/dev/null || true)"
  if [[ "$PID" =~ ^[0-9]+$ ]] && lct_is_our_nspawn "$PID" "$ROOT"; then
    lct_log "stopping $NAME (nspawn pid $PID)"
    if [ "$STOP_TIMEOUT" != 0 ]; then kill -TERM "$PID" 2>/dev/null || true; fi
    DEADLINE=$(($(date +%s) + STOP_TIMEOUT))
    while lct_is_our_nspawn "$PID" "$ROOT" && [ "$(date +%s)" -lt "$DEADLINE" ]; do sleep 0.2; done
    if lct_is_our_nspawn "$PID" "$ROOT"; then
      [ "$STOP_TIMEOUT" = 0 ] || lct_log "nspawn pid $PID did not stop within ${STOP_TIMEOUT}s: SIGKILL"
      kill -KILL "$PID" 2>/dev/null || true
      for _ in $(seq 1 50); do
        lct_is_our_nspawn "$PID" "$ROOT" || break
        sleep 0.1
      done
    fi
    # It is now dead (at most a zombie: start-host.sh exited, so init reaps it, usually within
    # a second or two). Wait a little for the pid to disappear so callers see it gone.
    for _ in $(seq 1 50); do
      [ -e "/proc/$PID" ] || break
      sleep 0.1
    done
    if [ -e "/proc/$PID" ]; then
      lct_log "nspawn pid $PID has exited ($(awk '{print "state " $3 ", parent " $4}' "/proc/$PID/stat" 2>/dev/null || echo gone)); its parent reaps it"
    fi
    STOPPED=1
  fi
fi

LEFT="$(lct_pids_inside "$ROOT" | tr '\n' ' ')"
if [ -n "${LEFT// /}" ]; then
  lct_log "killing processes left inside $NAME: $LEFT"
  for p in $LEFT; do kill -KILL "$p" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    [ -z "$(lct_pids_inside "$ROOT")" ] && break
    sleep 0.1
  done
fi
lct_remove_cgroup "$NAME"

if ip link show "$VETH" >/dev/null 2>&1; then
  ip link del "$VETH" 2>/dev/null || true
fi
if [ -e "/run/netns/$NS" ] || ip netns list 2>/dev/null | grep -qw -- "$NS"; then
  ip netns del "$NS" 2>/dev/null || true
fi

# systemd-nspawn's per-machine mount propagation directory (it refuses to clean it itself
# when /run is not a tmpfs, as on some VMs).
lct_remove_tree "/run/systemd/nspawn/propagate/$NS"

# LACCHAIN_TEST_SAVE_HOST=DIR keeps the stopped host's disk for start-host.sh (LACCHAIN_TEST_HOST_BASE=DIR): its
# changes over the cached root file system (overlay) or its whole file system (copy).
SAVE="${LACCHAIN_TEST_SAVE_HOST:-}"
if [ -n "$SAVE" ] && [ -d "$STATE" ]; then
  # The system it booted (start-host.sh wrote it): the root file system its overlay lies on.
  if [ -f "$STATE/system" ]; then lct_use_system "$(cat "$STATE/system")"; fi
  lct_remove_tree "$SAVE"
  mkdir -p "$SAVE/fs"
  printf '%s\n' "$LCT_SYSTEM" >"$SAVE/system"
  if [ -d "$STATE/upper" ]; then
    # The saved disk is this host's own changes, over the layers it was booted on (the saved disks below it, named in
    # $SAVE/lower, then the cached root file system): those must stay where they are while it is used.
    cp -a "$STATE/upper/." "$SAVE/fs/"
    BELOW=$(findmnt -rn -o OPTIONS "$ROOT" | tr ',' '\n' | sed -n 's/^lowerdir=//p' | tr ':' '\n' | grep -vxF "$LCT_ROOTFS" |
      paste -sd: || true)
    printf '%s' "$BELOW" >"$SAVE/lower"
    echo overlay >"$SAVE/mode"
  else
    cp -a "$ROOT/." "$SAVE/fs/"
    echo copy >"$SAVE/mode"
  fi
  lct_log "saved $NAME's disk in $SAVE"
fi

if [ -d "$STATE" ]; then
  if [ -f "$STATE/nspawn.log" ]; then
    mkdir -p "$LCT_LOGS"
    cp -f "$STATE/nspawn.log" "$LCT_LOGS/$NAME.nspawn.log" 2>/dev/null || true
  fi
  lct_remove_tree "$STATE"
fi

if [ "$STOPPED" = 1 ]; then lct_log "$NAME stopped and removed"; fi
exit 0

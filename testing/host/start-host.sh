#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# start-host.sh NAME INDEX — boot one real Debian test host (systemd + sshd) with
# systemd-nspawn inside its own network namespace, reachable by SSH from this machine: Debian 12
# (bookworm) by default, LACCHAIN_TEST_SYSTEM=trixie for Debian 13; a saved host boots on its own.
#
#   - fresh copy of the cached rootfs (build-rootfs.sh) in $LACCHAIN_TEST_CACHE/hosts/NAME/rootfs:
#     an overlayfs mount over the read-only cache (changes in hosts/NAME/upper), or a cp -a copy
#     where overlayfs is unavailable (any earlier host called NAME is stopped and removed first); with
#     LACCHAIN_TEST_HOST_BASE=DIR, over a host saved by stop-host.sh instead (the same disk, booted anew: one more
#     read-only overlay layer, or a copy);
#   - network namespace lct-NAME; veth pair lct-NAME (this machine, 10.231.INDEX.1/30, the
#     gateway) <-> eth0 (inside the namespace, 10.231.INDEX.2/30). No default route and IPv6
#     off on the pair: the host can reach the gateway address and nothing else;
#   - a fresh machine-id, hostname NAME and SSH host key in the copy; an ed25519 client key pair
#     for the test, authorized for root and for "operator" (passwordless sudo); a known_hosts file
#     built from the host's own key; apt pointed at the proxy http://10.231.INDEX.1:3142
#     (/etc/apt/apt.conf.d/01proxy — the caller runs the proxy, e.g. aptProxy.js);
#   - systemd-nspawn -b in the background (console log hosts/NAME/nspawn.log, pid nspawn.pid);
#   - waits (bounded, LACCHAIN_TEST_BOOT_TIMEOUT seconds, default 90) until
#     `ssh root@10.231.INDEX.2 systemctl is-system-running --wait` says running (or degraded:
#     the failed units are reported on stderr).
# On success it prints ONE line of JSON on stdout:
#   {"name","ip","gateway","user","sudoUser","privateKeyFile","knownHostsFile","hostPublicKey","pid","stateDir",
#    "status": "running" or "degraded", "system": bookworm or trixie}   (also saved as hosts/NAME/host.json)
# Everything else goes to stderr. On failure the host is torn down (stop-host.sh) unless
# LACCHAIN_TEST_KEEP_FAILED=1, and the exit status is non-zero.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$HERE/common.sh"

[ "$#" -eq 2 ] || lct_die "usage: start-host.sh NAME INDEX"
INDEX="$2"
lct_validate_index "$INDEX"
lct_host "$1"
T0=$(lct_now)

GW="10.231.$INDEX.1"
IP="10.231.$INDEX.2"
KEY="$STATE/id_ed25519"
KNOWN="$STATE/known_hosts"
LOG="$STATE/nspawn.log"
BOOT_TIMEOUT="${LACCHAIN_TEST_BOOT_TIMEOUT:-90}"

# Fresh every start: stop whatever ran under this name before.
"$HERE/stop-host.sh" "$NAME" >&2

# A saved host boots on the system it was saved from.
BASE="${LACCHAIN_TEST_HOST_BASE:-}"
[ -z "$BASE" ] || [ -f "$BASE/mode" ] || lct_die "$BASE is not a saved host (no $BASE/mode)"
if [ -n "$BASE" ] && [ -f "$BASE/system" ]; then lct_use_system "$(cat "$BASE/system")"; fi

# The /30 must not be in use by another host (e.g. a different NAME with the same INDEX).
if [ -n "$(ip -o -4 addr show to "$GW/32" 2>/dev/null)" ]; then
  lct_die "$GW is already configured on this machine ($(ip -o -4 addr show to "$GW/32" | awk '{print $2}')): index $INDEX is in use by another host"
fi

"$HERE/build-rootfs.sh" >&2
lct_ensure_tools

on_failure() {
  local rc=$?
  [ "$rc" -eq 0 ] && return 0
  if [ -f "$LOG" ]; then
    lct_log "last lines of the console log ($LOG):"
    tail -n 30 "$LOG" | sed 's/^/    /' >&2 || true
  fi
  if [ "${LACCHAIN_TEST_KEEP_FAILED:-0}" = 1 ]; then
    lct_log "start failed; LACCHAIN_TEST_KEEP_FAILED=1 so $NAME is left as is (stop-host.sh $NAME)"
  else
    lct_log "start failed; tearing $NAME down"
    "$HERE/stop-host.sh" "$NAME" >&2 || true
  fi
  exit "$rc"
}
trap on_failure EXIT

# --- the host's own copy of the file system ---
# An overlay (cached rootfs read-only below, this host's changes in upper/) is instant; a full
# copy (cp -a, 1-10 s depending on disk load) is the fallback where overlayfs is not available.
# LACCHAIN_TEST_ROOTFS_MODE=copy forces the copy.
# LACCHAIN_TEST_HOST_BASE=DIR starts from a host saved by stop-host.sh (LACCHAIN_TEST_SAVE_HOST=DIR) instead of the
# bare root file system: its changes (overlay) or its whole file system (copy), as DIR/fs and DIR/mode.
mkdir -p "$STATE/upper" "$STATE/work" "$ROOT" "$LCT_LOGS"
printf '%s\n' "$LCT_SYSTEM" >"$STATE/system"
MODE=copy
# A saved overlay host is one more read-only layer over the cached root file system: nothing to copy.
LOWER="$LCT_ROOTFS"
# A saved disk made over other saved disks lies on them too (stop-host.sh names them in DIR/lower).
if [ -n "$BASE" ] && [ "$(cat "$BASE/mode")" = overlay ]; then
  BELOW=$(cat "$BASE/lower" 2>/dev/null || true)
  LOWER="$BASE/fs:${BELOW:+$BELOW:}$LCT_ROOTFS"
fi
if [ "${LACCHAIN_TEST_ROOTFS_MODE:-overlay}" = overlay ] && { [ -z "$BASE" ] || [ "$(cat "$BASE/mode")" = overlay ]; } &&
  mount -t overlay "lct-$NAME" -o "lowerdir=$LOWER,upperdir=$STATE/upper,workdir=$STATE/work" "$ROOT" 2>/dev/null; then
  MODE=overlay
else
  rm -rf "$STATE/upper" "$STATE/work"
  if [ -n "$BASE" ]; then
    [ "$(cat "$BASE/mode")" = copy ] || lct_die "$BASE was saved from an overlay, and this host cannot use one"
    cp -a "$BASE/fs/." "$ROOT/"
  else
    cp -a "$LCT_ROOTFS/." "$ROOT/"
  fi
fi
T_COPY=$(lct_now)

tr -d '-' </proc/sys/kernel/random/uuid >"$ROOT/etc/machine-id"
printf '%s\n' "$NAME" >"$ROOT/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n%s\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
  "$NAME" "$IP" "$NAME" >"$ROOT/etc/hosts"

# SSH host key (unique per host) and the test's client key.
rm -f "$ROOT"/etc/ssh/ssh_host_*
ssh-keygen -q -t ed25519 -N '' -C "root@$NAME" -f "$ROOT/etc/ssh/ssh_host_ed25519_key"
ssh-keygen -q -t ed25519 -N '' -C "lacchain-e2e@$NAME" -f "$KEY"
chmod 0600 "$KEY"
HOST_PUB="$(awk '{print $1" "$2}' "$ROOT/etc/ssh/ssh_host_ed25519_key.pub")"
printf '%s %s\n' "$IP" "$HOST_PUB" >"$KNOWN"

# Key exchange by X25519 alone (which Go's SSH client, Pulumi's command provider's, offers too): OpenSSH's default
# hybrid sntrup761x25519 costs both ends about 80 ms of a core per connection (20 connections: 1.9 s of the client's
# CPU, 0.3 s with X25519), and the steps' user opens one per step and session, about a thousand in a full run.
printf 'KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org\n' >"$ROOT/etc/ssh/sshd_config.d/20-lacchain-test-kex.conf"

install -m 0600 "$KEY.pub" "$ROOT/root/.ssh/authorized_keys"
OPERATOR_IDS="$(awk -F: '$1 == "operator" {print $3":"$4}' "$ROOT/etc/passwd")"
[ -n "$OPERATOR_IDS" ] || lct_die "user operator missing in the rootfs"
install -m 0600 "$KEY.pub" "$ROOT/home/operator/.ssh/authorized_keys"
chown -R "$OPERATOR_IDS" "$ROOT/home/operator/.ssh"

cat >"$ROOT/etc/apt/apt.conf.d/01proxy" <<EOF
// e2e test host: no route out; apt goes through the test's proxy on the gateway address.
Acquire::http::Proxy "http://$GW:$LCT_APT_PROXY_PORT";
Acquire::https::Proxy "http://$GW:$LCT_APT_PROXY_PORT";
EOF

# --- network namespace and veth pair ---
ip netns add "$NS"
ip link add "$VETH" type veth peer name eth0 netns "$NS"
sysctl -qw "net.ipv6.conf.$VETH.disable_ipv6=1"
ip addr add "$GW/30" dev "$VETH"
ip link set "$VETH" up
ip netns exec "$NS" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
ip -n "$NS" link set lo up
ip -n "$NS" addr add "$IP/30" dev eth0
ip -n "$NS" link set eth0 up
# (deliberately no default route inside the namespace)
if [ "$(cat /proc/sys/net/ipv4/ip_forward 2>/dev/null || echo 0)" != 0 ]; then
  lct_log "note: net.ipv4.ip_forward=1 here; the host has no default route, but root inside could add one"
fi

# --- boot ---
lct_boot "$NAME" "$NS" "$ROOT" "$IP" "$KEY" "$KNOWN" "$PIDFILE" "$LOG" "$BOOT_TIMEOUT"
PID=$(cat "$PIDFILE")
T_READY=$(lct_now)

if [ "$STATUS" = degraded ]; then
  lct_log "WARNING: $NAME is degraded; failed units:"
  ssh "${SSH_OPTS[@]}" "root@$IP" systemctl --failed --no-legend --plain 2>&1 | sed 's/^/    /' >&2 || true
fi
lct_log "$NAME is $STATUS: prepare ($MODE) $(lct_elapsed "$T0" "$T_COPY")s, boot to ssh-ready $(lct_elapsed "$T_COPY" "$T_READY")s, total $(lct_elapsed "$T0" "$T_READY")s"

json_str() {
  local s="$1"
  s="${s//\\/\\\\}"
  s="${s//\"/\\\"}"
  printf '"%s"' "$s"
}
printf '{"name":%s,"ip":%s,"gateway":%s,"user":"root","sudoUser":"operator","privateKeyFile":%s,"knownHostsFile":%s,"hostPublicKey":%s,"pid":%s,"stateDir":%s,"status":%s,"system":%s}\n' \
  "$(json_str "$NAME")" "$(json_str "$IP")" "$(json_str "$GW")" "$(json_str "$KEY")" \
  "$(json_str "$KNOWN")" "$(json_str "$HOST_PUB")" "$PID" "$(json_str "$STATE")" "$(json_str "$STATUS")" \
  "$(json_str "$LCT_SYSTEM")" |
  tee "$STATE/host.json"
trap - EXIT

# shellcheck shell=bash disable=SC2034
# common.sh — shared settings and helpers for the e2e test-host scripts
# (build-rootfs.sh, start-host.sh, stop-host.sh, crash-host.sh). Sourced, never run directly.
#
# Layout (all under LACCHAIN_TEST_CACHE, default /var/cache/lacchain-test), per Debian release SYSTEM (bookworm,
# Debian 12, the default; trixie, Debian 13; LACCHAIN_TEST_SYSTEM chooses):
#   rootfs-SYSTEM/            the cached, pristine root file system
#   rootfs-SYSTEM.done        marker: the build finished (holds the recipe it was built from)
#   rootfs-SYSTEM.partial/    a build in progress (removed and redone if a build was interrupted)
#   debs/                     debootstrap's package cache (makes a re-build after a failure fast)
#   hosts/NAME/               one booted test host: rootfs/ (fresh copy), SSH keys, pid, log, host.json
#   logs/NAME.nspawn.log      the console log of the last host called NAME, kept after stop
#
# Address plan: host INDEX (1..254) uses 10.231.INDEX.0/30; this machine's end of the veth
# pair is 10.231.INDEX.1 (the gateway), the test host's eth0 is 10.231.INDEX.2. The test
# host has no default route: it can reach only the gateway address.

LCT_CACHE="${LACCHAIN_TEST_CACHE:-/var/cache/lacchain-test}"
LCT_HOSTS="$LCT_CACHE/hosts"
LCT_LOGS="$LCT_CACHE/logs"
LCT_APT_PROXY_PORT="${LACCHAIN_TEST_APT_PROXY_PORT:-3142}"
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:${PATH:-}"

# The script's name in its messages (the one run: a script another one runs says its own).
LCT_SCRIPT=$(basename "$0" .sh)

lct_log() { printf '[%s %s] %s\n' "$(date +%H:%M:%S)" "${LCT_SCRIPT:-lct}" "$*" >&2; }
lct_die() {
  lct_log "ERROR: $*"
  exit 1
}

# The Debian releases a test host can boot, by code name.
LCT_SYSTEMS="bookworm trixie"

# lct_use_system SYSTEM: the root file system the scripts build, boot or save from (LCT_SYSTEM, LCT_ROOTFS…).
lct_use_system() {
  case " $LCT_SYSTEMS " in
    *" ${1:-} "*) ;;
    *) lct_die "unknown test host system '${1:-}': one of $LCT_SYSTEMS" ;;
  esac
  LCT_SYSTEM="$1"
  LCT_ROOTFS="$LCT_CACHE/rootfs-$LCT_SYSTEM"
  LCT_ROOTFS_DONE="$LCT_ROOTFS.done"
  LCT_ROOTFS_PARTIAL="$LCT_ROOTFS.partial"
  export LACCHAIN_TEST_SYSTEM="$LCT_SYSTEM"
}
lct_use_system "${LACCHAIN_TEST_SYSTEM:-bookworm}"

lct_require_root() {
  [ "$(id -u)" -eq 0 ] || lct_die "must run as root (needs debootstrap, network namespaces and systemd-nspawn)"
}

# Install the host tools these scripts need, if missing (Debian/Ubuntu: apt-get).
lct_ensure_tools() {
  local missing=() pair cmd pkg
  for pair in debootstrap:debootstrap systemd-nspawn:systemd-container ip:iproute2 \
    ssh:openssh-client ssh-keygen:openssh-client flock:util-linux findmnt:util-linux; do
    cmd="${pair%%:*}"
    pkg="${pair#*:}"
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || lct_die "missing tools (${missing[*]}) and no apt-get to install them"
  lct_log "installing host tools: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 "${missing[@]}" >&2 ||
    {
      apt-get update -q >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 "${missing[@]}" >&2
    }
}

# Host NAME: lower-case, short enough that "lct-NAME" is a valid interface name (<= 15 chars).
lct_validate_name() {
  [[ "${1:-}" =~ ^[a-z][a-z0-9-]{0,10}$ ]] ||
    lct_die "bad host name '${1:-}': use 1-11 characters [a-z0-9-], starting with a letter"
}

# lct_host_argument NAME: the one argument of a script that acts on one host (its usage otherwise), as lct_host.
lct_host_argument() {
  [ "$#" -eq 1 ] || lct_die "usage: $LCT_SCRIPT.sh NAME"
  lct_host "$1"
}

# lct_host NAME: as root, checks NAME and names the host's parts (globals): NS, the network namespace; VETH, its veth
# pair; STATE, its folder; ROOT, its file system; PIDFILE, its nspawn's pid.
lct_host() {
  lct_validate_name "$1"
  lct_require_root
  NAME=$1
  NS="lct-$NAME"
  VETH="lct-$NAME"
  STATE="$LCT_HOSTS/$NAME"
  ROOT="$STATE/rootfs"
  PIDFILE="$STATE/nspawn.pid"
  export NAME NS VETH STATE ROOT PIDFILE
}

lct_validate_index() {
  if ! [[ "${1:-}" =~ ^[0-9]{1,3}$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt 254 ]; then
    lct_die "bad host index '${1:-}': use an integer 1..254 (it becomes 10.231.INDEX.0/30)"
  fi
}

# Unmount anything still mounted at or below a directory (deepest first), e.g. /proc that an
# interrupted debootstrap left behind, so that removing the directory never crosses into it.
lct_umount_below() {
  local dir="$1" m
  [ -d "$dir" ] || return 0
  dir="$(cd "$dir" && pwd -P)"
  while read -r m; do
    if [ -n "$m" ]; then umount -l "$m" 2>/dev/null || true; fi
  done < <(findmnt -rn -o TARGET | awk -v d="$dir" 'index($0, d) == 1' | sort -r)
}

lct_remove_tree() {
  local dir="$1"
  [ -e "$dir" ] || return 0
  lct_umount_below "$dir"
  rm -rf --one-file-system -- "$dir"
}

# Print "URI SUITE" for every enabled deb entry in this machine's apt sources
# (one-line *.list format and deb822 *.sources format).
lct_apt_source_entries() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" {
           i = 2
           if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
           if (i + 1 <= NF) print $(i), $(i + 1)
         }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'function flush() {
           if (types ~ /(^| )deb( |$)/ && enabled !~ /^[Nn]o/) {
             nu = split(uris, u, " "); ns = split(suites, s, " ")
             for (a = 1; a <= nu; a++) for (b = 1; b <= ns; b++) print u[a], s[b]
           }
           types = ""; uris = ""; suites = ""; enabled = ""
         }
         /^[ \t]*#/ { next }
         /^[ \t]*$/ { flush(); next }
         { line = $0; key = line; sub(/:.*/, "", key); val = line; sub(/^[^:]*:[ \t]*/, "", val)
           key = tolower(key)
           if (key == "types") types = val
           else if (key == "uris") uris = val
           else if (key == "suites") suites = val
           else if (key == "enabled") enabled = val }
         END { flush() }' "$f"
  done
}

# The Debian archive URI this machine's apt uses (override: LACCHAIN_TEST_MIRROR).
lct_debian_mirror() {
  if [ -n "${LACCHAIN_TEST_MIRROR:-}" ]; then
    printf '%s\n' "$LACCHAIN_TEST_MIRROR"
    return 0
  fi
  local uri
  uri="$(lct_apt_source_entries | awk '$2 == "bookworm" { print $1; exit }')"
  [ -n "$uri" ] || uri="$(lct_apt_source_entries | awk '$2 !~ /-/ && $1 ~ /\/debian\/?$/ { print $1; exit }')"
  if [ -z "$uri" ]; then
    lct_log "warning: no Debian archive found in /etc/apt sources; falling back to http://deb.debian.org/debian"
    uri="http://deb.debian.org/debian"
  fi
  printf '%s\n' "${uri%/}"
}

# The Debian security archive URI this machine's apt uses (override: LACCHAIN_TEST_SECURITY_MIRROR).
lct_debian_security_mirror() {
  if [ -n "${LACCHAIN_TEST_SECURITY_MIRROR:-}" ]; then
    printf '%s\n' "$LACCHAIN_TEST_SECURITY_MIRROR"
    return 0
  fi
  local uri
  uri="$(lct_apt_source_entries | awk '$2 ~ /-security$/ { print $1; exit }')"
  if [ -z "$uri" ]; then
    uri="$(lct_debian_mirror)"
    uri="${uri%/debian}/debian-security"
  fi
  printf '%s\n' "${uri%/}"
}

lct_now() { date +%s.%N; }
# Seconds between two lct_now values, one decimal.
lct_elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# lct_cgroup_dirs NAME: the cgroup host NAME boots in, one folder per hierarchy that systemd tracks processes in (v1's
# name=systemd, and cgroup v2, mounted alone or beside v1 as here). systemd-nspawn (--keep-unit, --register=no) puts the
# container's tree (payload/, supervisor/) under the cgroup it starts in: hosts booted from one cgroup shared every
# unit's (payload/system.slice/besu.service, ssh.service, user.slice/user-1000.slice/user@1000.service...), so each
# host's systemd found the other hosts' processes in its units (pid 0 to it: not in its pid namespace) and gave up
# killing its own there ("Failed to kill control group ..., ignoring: Input/output error"). A real machine's units
# hold its own processes only; so do a test host's.
lct_cgroup_dirs() {
  awk -v leaf="lacchain-test-host-$1" '$3 == "cgroup2" || ($3 == "cgroup" && $4 ~ /(^|,)name=systemd(,|$)/) {
    print $2 "/" leaf }' /proc/self/mounts
}

# lct_enter_cgroup NAME: moves this shell into host NAME's cgroup (made when missing).
lct_enter_cgroup() {
  local dir
  for dir in $(lct_cgroup_dirs "$1"); do
    mkdir -p "$dir"
    echo "$BASHPID" >"$dir/cgroup.procs"
  done
}

# lct_remove_cgroup NAME: removes host NAME's cgroup, its folders deepest first, once no process is left in it: a
# process killed a moment ago may still hold it, so it tries for up to 5 s (a folder still in use then stays, and says
# so).
lct_remove_cgroup() {
  local dir
  for dir in $(lct_cgroup_dirs "$1"); do
    for _ in $(seq 1 50); do
      [ -d "$dir" ] || break
      find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null && break
      sleep 0.1
    done
    [ ! -d "$dir" ] ||
      lct_log "cgroup $dir is still in use: $(find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' ')"
  done
}

# lct_boot NAME NS ROOT IP KEY KNOWN PIDFILE LOG TIMEOUT: boots the host's file system ROOT with systemd-nspawn in
# the background inside the network namespace NS (its pid in PIDFILE, its console in LOG), and waits (at most TIMEOUT
# seconds) until `systemctl is-system-running --wait` over SSH (as root, with KEY, the host key in KNOWN) says running
# or degraded. Sets STATUS (that answer) and SSH_OPTS (the ssh options it used).
lct_boot() {
  local name=$1 ns=$2 root=$3 ip=$4 key=$5 known=$6 pidfile=$7 log=$8 timeout=$9 pid deadline remaining
  mkdir -p /run/systemd/nspawn
  lct_remove_cgroup "$name"
  # In a cgroup of its own (lct_cgroup_dirs), as its first act. setsid + all three streams redirected: the container
  # must not hold the caller's stdout open (a Node parent reading our stdout would otherwise wait for it forever) and
  # must not get the caller's terminal signals. CAP_NET_ADMIN lets the host's root manage the packet filter of its own
  # network namespace (and nothing else), as root on a real machine does: the relay signer's nftables fence needs it.
  (
    lct_enter_cgroup "$name"
    exec setsid systemd-nspawn --boot --register=no --keep-unit \
      --network-namespace-path="/run/netns/$ns" --capability=CAP_NET_ADMIN \
      --directory="$root" --machine="$ns" --hostname="$name" \
      --console=read-only --link-journal=no --resolv-conf=off --timezone=off
  ) </dev/null >>"$log" 2>&1 &
  pid=$!
  printf '%s\n' "$pid" >"$pidfile"
  lct_log "booting $name (nspawn pid $pid) at $ip"

  SSH_OPTS=(-F none -o BatchMode=yes -o IdentitiesOnly=yes -i "$key"
    -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$known" -o GlobalKnownHostsFile=/dev/null
    -o ConnectTimeout=3 -o LogLevel=ERROR)

  deadline=$(($(date +%s) + timeout))
  STATUS=""
  while :; do
    kill -0 "$pid" 2>/dev/null || lct_die "systemd-nspawn exited during boot"
    remaining=$((deadline - $(date +%s)))
    [ "$remaining" -gt 0 ] || lct_die "host not ready over SSH within ${timeout}s"
    STATUS="$(timeout "$remaining" ssh "${SSH_OPTS[@]}" "root@$ip" systemctl is-system-running --wait 2>/dev/null || true)"
    case "$STATUS" in
    running | degraded) break ;;
    *) sleep 0.5 ;;
    esac
  done
}

# lct_is_our_nspawn PID ROOT: whether PID is the systemd-nspawn that boots the host file system ROOT (and not a recycled
# pid).
lct_is_our_nspawn() {
  local pid=$1 root=$2
  [ -r "/proc/$pid/cmdline" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd-nspawn ] || return 1
  tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "--directory=$root"
}

# lct_pids_inside ROOT: the pids of the container's processes: those whose own root mount ("/") is the host file system
# ROOT: its overlay mount (this host's upper/ layer) or, in copy mode, ROOT itself. Read from /proc/PID/mountinfo, not
# /proc/PID/root: that link reads "/" for every process that has a mount namespace of its own (the container's init,
# and each service systemd sandboxes inside it), so matching it misses them, and a container whose init is missed
# outlives its nspawn (reparented to this machine's init), keeping its services and their ports.
lct_pids_inside() {
  local root state escaped_root escaped_upper
  [ -n "$1" ] || return 0
  root="$1"
  state="$(dirname "$root")"
  escaped_root="$(printf '%s' "$root" | sed 's/[.[\*^$]/\\&/g')"
  escaped_upper="$(printf '%s' "$state/upper" | sed 's/[.[\*^$]/\\&/g')"
  grep -lsE -e "^[0-9]+ [0-9]+ [0-9]+:[0-9]+ / / .*,upperdir=$escaped_upper," \
    -e "^[0-9]+ [0-9]+ [0-9]+:[0-9]+ $escaped_root / " /proc/[0-9]*/mountinfo 2>/dev/null |
    sed -n 's#^/proc/\([0-9]*\)/mountinfo$#\1#p' || true
}

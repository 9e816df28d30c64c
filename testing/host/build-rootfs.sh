#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# build-rootfs.sh — build (once, cached) the Debian root file system that the e2e test hosts
# boot from, with debootstrap, into $LACCHAIN_TEST_CACHE/rootfs-SYSTEM (default
# /var/cache/lacchain-test/rootfs-bookworm): SYSTEM is LACCHAIN_TEST_SYSTEM, bookworm (Debian 12,
# the default) or trixie (Debian 13).
#
# The image looks like a fresh cloud server: systemd as init, dbus, openssh-server, sudo,
# iproute2, python3 (>= 3.11, so tomllib exists), ca-certificates, procps — and deliberately
# NOT curl, nginx or Java, which the provisioning scripts under test install with apt.
# It is prepared so that:
#   - sshd allows root login with keys only (no passwords at all);
#   - a non-root user "operator" exists with passwordless sudo (for the sudo code path);
#   - /etc/machine-id is empty and there are no SSH host keys: start-host.sh writes a fresh
#     machine-id and host key into each host's copy;
#   - apt uses this machine's Debian mirrors; start-host.sh writes /etc/apt/apt.conf.d/01proxy
#     (the proxy on the host's gateway address) into each host's copy at boot time.
#
# Idempotent: the build happens in rootfs-SYSTEM.partial and is renamed when complete; the
# marker rootfs-SYSTEM.done records the recipe. A missing/other marker means rebuild; an
# interrupted build is thrown away and redone. Concurrent callers serialize on a lock.
#
# Usage: build-rootfs.sh [--force]      (needs root; prints timing on stderr)
# Env:   LACCHAIN_TEST_SYSTEM, LACCHAIN_TEST_CACHE, LACCHAIN_TEST_MIRROR, LACCHAIN_TEST_SECURITY_MIRROR
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
# shellcheck source=common.sh
. "$HERE/common.sh"

SUITE="$LCT_SYSTEM"
PACKAGES="systemd,systemd-sysv,dbus,libpam-systemd,openssh-server,sudo,iproute2,python3,ca-certificates,procps,netbase,less"
# Bump RECIPE_VERSION whenever the preparation steps below change: cached images are rebuilt.
RECIPE_VERSION=5
# Debian 13's user manager for root (user@0.service, started by pam_systemd for each SSH session) starts slowly in
# the container and every session waits for it: there it is kept running (lingering), as on a server with linger.
LINGER_USERS=""
if [ "$SUITE" = trixie ]; then LINGER_USERS="root operator"; fi
RECIPE="v$RECIPE_VERSION $SUITE minbase $PACKAGES${LINGER_USERS:+ linger=$LINGER_USERS}"

FORCE=0
[ "${1:-}" = "--force" ] && FORCE=1

lct_require_root
mkdir -p "$LCT_CACHE" "$LCT_CACHE/debs"

# One build of a system at a time (parallel test workers all call this).
exec 9>"$LCT_CACHE/.build-$SUITE.lock"
flock 9

if [ "$FORCE" = 0 ] && [ -f "$LCT_ROOTFS_DONE" ] && [ -d "$LCT_ROOTFS" ] &&
  [ "$(cat "$LCT_ROOTFS_DONE")" = "$RECIPE" ]; then
  lct_log "rootfs is ready (cached): $LCT_ROOTFS"
  exit 0
fi

# Running hosts may use the cached rootfs as their overlay's lower layer: never pull it away.
if findmnt -rn -t overlay -o OPTIONS | grep -qF "lowerdir=$LCT_ROOTFS,"; then
  lct_die "the rootfs must be rebuilt (recipe changed or --force) but test hosts are running on it: stop them first (stop-host.sh NAME)"
fi

lct_ensure_tools
MIRROR="$(lct_debian_mirror)"
SECURITY_MIRROR="$(lct_debian_security_mirror)"
START=$(lct_now)
lct_log "building Debian $SUITE rootfs from $MIRROR into $LCT_ROOTFS (a minute or two)"

rm -f "$LCT_ROOTFS_DONE"
lct_remove_tree "$LCT_ROOTFS_PARTIAL"
lct_remove_tree "$LCT_ROOTFS"

# On failure, leave nothing half-built behind except the package cache.
trap 'lct_umount_below "$LCT_ROOTFS_PARTIAL"' EXIT

debootstrap --variant=minbase --include="$PACKAGES" --cache-dir="$LCT_CACHE/debs" \
  "$SUITE" "$LCT_ROOTFS_PARTIAL" "$MIRROR" >&2 ||
  lct_die "debootstrap failed (see the output above; $LCT_ROOTFS_PARTIAL will be redone next time)"
T_DEBOOTSTRAP=$(lct_now)

R="$LCT_ROOTFS_PARTIAL"
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

# --- apt: the same mirrors as this machine (reached through the proxy at boot time) ---
rm -f "$R/etc/apt/sources.list"
cat >"$R/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY_MIRROR
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
in_root apt-get clean
rm -rf "$R"/var/lib/apt/lists/*

# --- sshd: root by key only, no passwords; host keys are made per host by start-host.sh ---
rm -f "$R"/etc/ssh/ssh_host_*
cat >"$R/etc/ssh/sshd_config.d/10-lacchain-test.conf" <<'EOF'
# e2e test host: keys only, root allowed by key (like a fresh cloud server).
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
HostKey /etc/ssh/ssh_host_ed25519_key
UseDNS no
EOF
grep -q '^Include /etc/ssh/sshd_config.d/\*.conf' "$R/etc/ssh/sshd_config" ||
  lct_die "sshd_config does not include sshd_config.d"
install -d -m 0700 "$R/root/.ssh"

# --- the non-root sudo user ---
if ! in_root getent passwd operator >/dev/null; then
  # Debian's base-passwd already has a group "operator" (gid 37): join it instead of
  # letting useradd fail trying to create a same-named user group.
  if in_root getent group operator >/dev/null; then
    in_root useradd --create-home --shell /bin/bash --gid operator operator
  else
    in_root useradd --create-home --shell /bin/bash --user-group operator
  fi
fi
in_root usermod --password '*' operator # no password, but not "locked" (key login works)
install -d -m 0700 "$R/home/operator/.ssh"
in_root chown -R operator:operator /home/operator/.ssh
printf 'operator ALL=(ALL:ALL) NOPASSWD:ALL\n' >"$R/etc/sudoers.d/90-operator"
chmod 0440 "$R/etc/sudoers.d/90-operator"

# --- identity and name resolution (per-host values are written by start-host.sh) ---
: >"$R/etc/machine-id" # empty: start-host.sh writes a fresh one into each copy
rm -f "$R/var/lib/dbus/machine-id"
ln -s /etc/machine-id "$R/var/lib/dbus/machine-id"
printf 'lacchain-test\n' >"$R/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tlacchain-test\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$R/etc/hosts"
rm -f "$R/etc/resolv.conf"
printf '# e2e test host: no DNS server; the host reaches only its gateway (apt uses its HTTP proxy)\n' \
  >"$R/etc/resolv.conf"

# --- the user managers kept running (see LINGER_USERS) ---
for user in $LINGER_USERS; do
  install -d -m 0755 "$R/var/lib/systemd/linger"
  : >"$R/var/lib/systemd/linger/$user"
done

# --- quiet, container-friendly boot ---
# (getty on the container console is harmless; nothing else needs masking in bookworm)
in_root systemctl enable ssh.service >/dev/null 2>&1 || true

# --- sanity checks ---
in_root python3 -c 'import sys, tomllib; assert sys.version_info >= (3, 11)' ||
  lct_die "python3 >= 3.11 with tomllib is missing in the rootfs"
for forbidden in curl nginx nginx-light default-jre-headless openjdk-17-jre-headless; do
  if in_root dpkg-query -W -f="\${Status}" "$forbidden" 2>/dev/null | grep -q 'install ok installed'; then
    lct_die "package $forbidden must not be in the base image"
  fi
done
# sshd's config test needs a host key and its privilege separation dir: use throwaway ones
# (each host gets its own key from start-host.sh).
install -d -m 0755 "$R/run/sshd"
ssh-keygen -q -t ed25519 -N '' -f "$R/etc/ssh/ssh_host_ed25519_key"
in_root /usr/sbin/sshd -t || lct_die "sshd rejects its configuration"
rm -rf "$R"/etc/ssh/ssh_host_* "$R/run/sshd"

trap - EXIT
mv "$LCT_ROOTFS_PARTIAL" "$LCT_ROOTFS"
printf '%s\n' "$RECIPE" >"$LCT_ROOTFS_DONE"
END=$(lct_now)
lct_log "rootfs ready: debootstrap $(lct_elapsed "$START" "$T_DEBOOTSTRAP")s, prepare $(lct_elapsed "$T_DEBOOTSTRAP" "$END")s, total $(lct_elapsed "$START" "$END")s, size $(du -sh "$LCT_ROOTFS" | cut -f1)"

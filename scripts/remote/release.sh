#!/usr/bin/env bash
# The release step of provisioning a remote node: put the Besu release BESU_VERSION in its own folder
# RELEASES_DIR/besu-BESU_VERSION, beside any release already there. It does not switch the node to it: the start
# step does, after the files are in place. Nothing is downloaded when the release is already unpacked.
# The archive is fetched over https only (redirects included) or read from a local file: path, and its SHA-256 must
# be RELEASE_SHA256 before anything is unpacked: on a mismatch the step fails, shows both digests and leaves the
# machine as it was. With RELEASE_FALLBACK_URLS (the release's other published sources), each source is tried in
# order, RELEASE_URL first, until one serves an archive of that digest; the step says which served it.
# Parameters (environment): BESU_VERSION, RELEASE_URL (the archive's URL), RELEASE_FALLBACK_URLS (optional, URLs
# separated by spaces), RELEASE_SHA256, RELEASES_DIR.
set -euo pipefail
: "${BESU_VERSION:?}" "${RELEASE_URL:?}" "${RELEASE_SHA256:?}" "${RELEASES_DIR:?}"
RELEASE_FALLBACK_URLS=${RELEASE_FALLBACK_URLS:-}

target="$RELEASES_DIR/besu-$BESU_VERSION"
if [ -x "$target/bin/besu" ] && [ ! -L "$target" ]; then
  echo "release: Besu $BESU_VERSION already in $target"
  exit 0
fi

# Downloaded and checked in root's own private folder, outside the node home.
download=$(mktemp -d)
unpack=""
cleanup() {
  rm -rf "$download"
  if [ -n "$unpack" ]; then rm -rf "$unpack"; fi
}
trap cleanup EXIT

if [ -z "$RELEASE_FALLBACK_URLS" ]; then
  download_checked "$RELEASE_URL" "$RELEASE_SHA256" "$download/besu.tar.gz" "Besu $BESU_VERSION"
  SERVED_BY=$RELEASE_URL
else
  # shellcheck disable=SC2086 # the fallback URLs are separated by spaces, none holds one
  download_first_checked "$RELEASE_SHA256" "$download/besu.tar.gz" "Besu $BESU_VERSION" \
    "$RELEASE_URL" $RELEASE_FALLBACK_URLS
fi

# The node home and its releases folder belong to root (a home an older version of this program gave the service user
# is taken back; the node-files step finishes that); a symlink there that root did not make is removed, never
# followed. The release is unpacked beside its final place, then renamed into it in one
# step, so a cut-off run never leaves a half-unpacked release that looks installed.
home=$(dirname "$RELEASES_DIR")
if [ -d "$home" ] && [ ! -L "$home" ] && [ "$(stat -c %u "$home")" != 0 ]; then
  chown -h root "$home"
  chmod go-w "$home"
fi
if [ -L "$RELEASES_DIR" ] && [ "$(stat -c %u "$RELEASES_DIR")" != 0 ]; then rm -f "$RELEASES_DIR"; fi
install -d -m 0755 -o root -g root "$RELEASES_DIR"
rm -rf "$RELEASES_DIR"/.unpack-*
unpack=$(mktemp -d "$RELEASES_DIR/.unpack-XXXXXX")
if ! tar --no-same-owner -xzf "$download/besu.tar.gz" -C "$unpack" 2>"$download/tar.err"; then
  # A disk that filled up while unpacking: what is unpacked so far goes (the trap), the node runs as before.
  full=$(disk_full_hint "$RELEASES_DIR" "$download/tar.err")
  if [ -n "$full" ]; then
    fail "no room to unpack Besu $BESU_VERSION in $RELEASES_DIR$full; nothing changed: the node runs its release as before"
  fi
  fail "the archive from $SERVED_BY is not a valid .tar.gz: $(head -n 1 "$download/tar.err")"
fi
[ -x "$unpack/besu-$BESU_VERSION/bin/besu" ] \
  || fail "the archive from $SERVED_BY does not hold besu-$BESU_VERSION/bin/besu"
chown -hR root:root "$unpack/besu-$BESU_VERSION"
chmod -R go-w "$unpack/besu-$BESU_VERSION"
rm -rf "$target"
mv -T "$unpack/besu-$BESU_VERSION" "$target"
echo "release: Besu $BESU_VERSION (sha256 $RELEASE_SHA256, from $SERVED_BY) unpacked in $target"

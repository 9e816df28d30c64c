#!/usr/bin/env bash
# Step 3 of provisioning a remote node: put the Besu release BESU_VERSION in its own folder
# RELEASES_DIR/besu-BESU_VERSION, beside any release already there. It does not switch the node to it: the start
# step does, after the files are in place. Nothing is downloaded when the release is already unpacked.
# Parameters (environment): BESU_VERSION, RELEASE_URL (the archive's URL), RELEASES_DIR.
set -euo pipefail
: "${BESU_VERSION:?}" "${RELEASE_URL:?}" "${RELEASES_DIR:?}"

fail() { echo "release: $*" >&2; exit 1; }

target="$RELEASES_DIR/besu-$BESU_VERSION"
if [ -x "$target/bin/besu" ]; then
  echo "release: Besu $BESU_VERSION already in $target"
  exit 0
fi

mkdir -p "$RELEASES_DIR"
work=$(mktemp -d "$RELEASES_DIR/.download-XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "release: downloading $RELEASE_URL"
curl --fail --silent --show-error --location --retry 3 --connect-timeout 20 -o "$work/besu.tar.gz" "$RELEASE_URL" \
  || fail "cannot download Besu $BESU_VERSION from $RELEASE_URL"
tar -xzf "$work/besu.tar.gz" -C "$work" || fail "the archive from $RELEASE_URL is not a valid .tar.gz"
[ -x "$work/besu-$BESU_VERSION/bin/besu" ] \
  || fail "the archive from $RELEASE_URL does not hold besu-$BESU_VERSION/bin/besu"

chown -R root:root "$work/besu-$BESU_VERSION"
mv "$work/besu-$BESU_VERSION" "$target"
echo "release: Besu $BESU_VERSION unpacked in $target"

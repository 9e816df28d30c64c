#!/bin/sh
# The key check of a cluster node whose key is the operator's own Secret (key custody secret): an init container of
# the node's pod, on the node's own (pinned) Besu image. The program never reads that Secret, so it cannot know what
# key it holds; the node's enode and address come from the `publicKey` setting. Before Besu starts, this compares the
# public key of the mounted key (as the release's own `besu public-key export` reads it) with that setting, and
# refuses to start the pod otherwise: a wrong entry, a key swapped in the Secret (or upstream, in a vault), or another
# node's key would run the node under an identity it does not advertise (for a validator: two signers with one key).
# The reason is one line on standard error and in the container's termination message (kubectl describe pod).
# Usage: check-node-key.sh BESU_BINARY KEY_FILE EXPECTED_PUBLIC_KEY SECRET_NAME SECRET_ENTRY
set -eu

besu_binary=$1
key_file=$2
expected=$3
secret=$4
entry=$5
work=${TMPDIR:-/tmp}/lacchain-key-check

# refuse REASON: says why the pod does not start, where kubectl shows it, and stops.
refuse() {
  message="lacchain: $1: the node does not start (key custody secret, docs/security.md#key-custody)"
  echo "$message" >&2
  printf '%s\n' "$message" >/dev/termination-log 2>/dev/null || true
  exit 1
}

if [ ! -s "$key_file" ]; then
  refuse "entry $entry of Secret $secret is empty or missing"
fi
rm -rf "$work"
mkdir -p "$work"
# Besu would make a key where none is; the file is there (checked above) and mounted read-only.
if ! "$besu_binary" --data-path="$work/data" --node-private-key-file="$key_file" public-key export \
  --to="$work/public-key" >/dev/null 2>&1; then
  refuse "entry $entry of Secret $secret is not a node key Besu can read (one line of 64 hex digits)"
fi
actual=$(cat "$work/public-key")
rm -rf "$work"
if [ "$actual" != "$expected" ]; then
  refuse "the key in entry $entry of Secret $secret has public key $actual, not the node's publicKey $expected"
fi
echo "lacchain: the key in entry $entry of Secret $secret is the node's (public key $expected)"

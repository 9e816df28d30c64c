#!/bin/sh
# The key check of a cluster node whose key is the operator's own Secret (key custody secret), on the node's own
# (pinned) Besu image: the pod's `<node>-key-check` init container, the only container of the pod that mounts that
# Secret. It runs from the pod's checked copy of the node's config (check-config.sh ran before it). The program never
# reads that Secret, so it cannot know what key it holds; the node's enode and address come from the `publicKey`
# setting. This compares the public key of the mounted key (as the release's own `besu public-key export` reads it)
# with that setting, and refuses to start otherwise: a wrong entry, a key swapped in the Secret (or upstream, in a
# vault), or another node's key would run the node under an identity it does not advertise (for a validator: two
# signers with one key).
# A key that passes is copied to CHECKED_KEY (a memory volume of the pod's, which every other container mounts
# read-only): Besu and the node's companions read their key there, never from the Secret, so they only ever get a
# checked key, and it cannot change while the pod lives. It also refuses a config.toml whose node-private-key-file is
# not CHECKED_KEY: Besu would read another key than the checked one. A refusal removes the copy. The reason is one
# line on standard error and in the container's termination message (kubectl describe pod).
# Usage: check-node-key.sh BESU_BINARY KEY_FILE EXPECTED_PUBLIC_KEY SECRET_NAME SECRET_ENTRY CHECKED_KEY CONFIG_FILE
set -eu

besu_binary=$1
key_file=$2
expected=$3
secret=$4
entry=$5
checked_key=$6
config_file=$7
work=${TMPDIR:-/tmp}/lacchain-key-check

# refuse REASON: says why the node does not start, where kubectl shows it, and stops.
refuse() {
  rm -f "$checked_key"
  message="lacchain: $1: the node does not start (key custody secret, docs/security.md#key-custody)"
  echo "$message" >&2
  printf '%s\n' "$message" >/dev/termination-log 2>/dev/null || true
  exit 1
}

# Besu reads its key where config.toml says: only the checked copy will do (one line, as the program writes it).
key_lines=$(grep -c '^node-private-key-file *=' "$config_file" || true)
if [ "$key_lines" != 1 ] || ! grep -qx "node-private-key-file *= *\"$checked_key\"" "$config_file"; then
  refuse "$config_file does not set node-private-key-file to the checked key $checked_key"
fi
if [ ! -s "$key_file" ]; then
  refuse "entry $entry of Secret $secret is empty or missing"
fi
rm -rf "$work"
mkdir -p "$work"
umask 077
# The key is read once, into the check's own file: what is checked is what the companions get.
cp "$key_file" "$work/key"
# Besu would make a key where none is; the file is there (checked above).
if ! "$besu_binary" --data-path="$work/data" --node-private-key-file="$work/key" public-key export \
  --to="$work/public-key" >/dev/null 2>&1; then
  rm -rf "$work"
  refuse "entry $entry of Secret $secret is not a node key Besu can read (one line of 64 hex digits)"
fi
actual=$(cat "$work/public-key")
if [ "$actual" != "$expected" ]; then
  rm -rf "$work"
  refuse "the key in entry $entry of Secret $secret has public key $actual, not the node's publicKey $expected"
fi
mv -f "$work/key" "$checked_key.new"
mv -f "$checked_key.new" "$checked_key"
rm -rf "$work"
echo "lacchain: the key in entry $entry of Secret $secret is the node's (public key $expected)"

#!/bin/sh
# The config check of a cluster node's pod: its first init container, on the node's own (pinned) Besu image. The
# script is not read from the node's ConfigMap: it is the text of the StatefulSet's own command (`sh -c`), as is the
# digest it checks against, so a ConfigMap edited or made again under its name cannot change what it checks.
# It copies every entry of the ConfigMap (mounted at SOURCE_DIR) into CONFIG_DIR, the pod's own folder (an emptyDir
# that every other container mounts read-only, so nothing the kubelet or anyone does to the ConfigMap later reaches a
# container that starts again in this pod), then computes the digest of the copy: the SHA-256 of the lines
# `<sha256 of the entry>  <entry>` (sha256sum's), the entries in byte order. A copy whose digest is not DIGEST (the
# one the program computed from the files it declared, core/kubernetes/configCheck.ts) is removed and the pod does
# not start: the check script, the start step and config.toml (its node-private-key-file) run as the program wrote
# them, or not at all. The reason is one line on standard error and in the container's termination message.
# Usage: check-config.sh SOURCE_DIR CONFIG_DIR DIGEST
set -eu
LC_ALL=C
export LC_ALL

source_dir=$1
config_dir=$2
expected=$3

# refuse REASON: says why the pod does not start, where kubectl shows it, removes the copy, and stops.
refuse() {
  rm -f "$config_dir"/*
  message="lacchain: $1: the node does not start (docs/security.md#what-a-pod-reads)"
  echo "$message" >&2
  printf '%s\n' "$message" >/dev/termination-log 2>/dev/null || true
  exit 1
}

rm -f "$config_dir"/*
# The ConfigMap's entries (its volume's own ..data links and folders start with a dot and are not entries).
for entry in "$source_dir"/*; do
  [ -f "$entry" ] || refuse "ConfigMap entry $(basename "$entry") is not a file"
  cp "$entry" "$config_dir/"
done
chmod 0444 "$config_dir"/*
actual=$(cd "$config_dir" && sha256sum -- * | sha256sum | cut -d' ' -f1)
if [ "$actual" != "$expected" ]; then
  refuse "the node's ConfigMap holds files of digest $actual, not the $expected its StatefulSet names (edited after pulumi up?)"
fi
echo "lacchain: the pod's config is the one its StatefulSet names (digest $expected)"

#!/bin/sh
# The start step of a node, on both paths: the Besu container's command on Kubernetes, and the launcher systemd runs
# on a remote machine (installed as NODE_HOME/bin/start-node.sh).
# Besu silently generates a new key when its key file is missing, which would give the node a new identity and lose
# its permissioning: this step refuses to start Besu without the key (exit MISSING_KEY_EXIT_CODE, which the systemd
# service does not restart on). Otherwise it runs Besu with its config, appending its output to INFO_LOG when one is
# given.
# Usage: start-node.sh BESU_BINARY KEY_FILE CONFIG_FILE [INFO_LOG]
# Environment: MISSING_KEY_EXIT_CODE (core/catalog/remote.ts; the systemd unit or the container sets it);
# LACCHAIN_JAVA_HOME, where the pinned Java runtime of the release would be (a machine's unit sets it): Besu runs on it
# when the machine holds it (the packages step put it there because the system has no Java the release can run on).
set -eu
: "${MISSING_KEY_EXIT_CODE:?}"
if [ -n "${LACCHAIN_JAVA_HOME:-}" ] && [ -x "$LACCHAIN_JAVA_HOME/bin/java" ]; then
  JAVA_HOME=$LACCHAIN_JAVA_HOME
  export JAVA_HOME
fi

besu_binary=$1
key_file=$2
config_file=$3
info_log=${4:-}

if [ ! -s "$key_file" ]; then
  echo "lacchain: node key $key_file is missing or empty: refusing to start Besu with a new identity." >&2
  echo "lacchain: restore the key (pulumi up writes it again) and start the node." >&2
  exit "$MISSING_KEY_EXIT_CODE"
fi

if [ -n "$info_log" ]; then
  exec "$besu_binary" --config-file="$config_file" >>"$info_log" 2>&1
fi
exec "$besu_binary" --config-file="$config_file"

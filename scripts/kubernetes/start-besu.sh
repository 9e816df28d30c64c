#!/bin/sh
# Start step of the Besu container (Kubernetes path).
# Besu silently generates a new key when its key file is missing, which would give the node a new identity and
# lose its permissioning. This step refuses to start Besu unless the node key the program created is present.
# Usage: start-besu.sh BESU_BINARY KEY_FILE CONFIG_FILE
set -eu

besu_binary=$1
key_file=$2
config_file=$3

if [ ! -s "$key_file" ]; then
  echo "lacchain: node key $key_file is missing or empty: refusing to start Besu with a new identity." >&2
  echo "lacchain: restore the key Secret (pulumi up recreates it from the stack) and restart the pod." >&2
  exit 1
fi

exec "$besu_binary" --config-file="$config_file"

#!/bin/sh
# The start of a companion service of a node (the relay signer, the rotation client) on a remote machine, installed
# as NODE_HOME/bin/start-companion.sh and run by the companion's systemd service in the companion's working folder.
# With KEY_VARIABLE, the node key is read from KEY_FILE into that environment variable first: the relay signer reads
# its key only from there. The key never appears on a command line; a missing key is exit MISSING_KEY_EXIT_CODE
# (EX_CONFIG), which the service does not restart on.
# Usage: start-companion.sh EXECUTABLE [KEY_VARIABLE KEY_FILE]
# Environment: MISSING_KEY_EXIT_CODE (core/catalog/remote.ts; the companion's systemd unit sets it).
set -eu
: "${MISSING_KEY_EXIT_CODE:?}"

executable=$1
if [ "$#" -ge 3 ]; then
  if [ ! -s "$3" ]; then
    echo "lacchain: node key $3 is missing or empty: the companion cannot start without it." >&2
    exit "$MISSING_KEY_EXIT_CODE"
  fi
  key=$(cat "$3")
  export "$2=$key"
fi
exec "$executable"

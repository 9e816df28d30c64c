#!/usr/bin/env bash
# Step 5 of provisioning a remote node: write the node key the program owns to NODE_HOME/data/key (mode 0600, owned
# by the service user). A different key already on the machine is never overwritten: that would change the node's
# permissioned identity. This step runs with command logging off and never prints the key.
# Parameters (environment): NODE_HOME, SERVICE_USER, NODE_KEY (secret).
set -euo pipefail
: "${NODE_HOME:?}" "${SERVICE_USER:?}" "${NODE_KEY:?}"

key_file="$NODE_HOME/data/key"
if [ -f "$key_file" ]; then
  if [ "$(cat "$key_file")" = "$NODE_KEY" ]; then
    chmod 0600 "$key_file"
    chown "$SERVICE_USER:$(id -gn "$SERVICE_USER")" "$key_file"
    echo "node-key: key in place"
    exit 0
  fi
  echo "node-key: $key_file holds another node key: refusing to replace the node's identity." >&2
  echo "node-key: to keep that identity, import it: pulumi config set --secret --path 'lacchain:nodeKeys.<node>' \"\$(cat key)\"" >&2
  echo "node-key: to replace it on purpose, move the file away first." >&2
  exit 1
fi

umask 077
tmp=$(mktemp "$key_file.XXXXXX")
printf '%s' "$NODE_KEY" >"$tmp"
chown "$SERVICE_USER:$(id -gn "$SERVICE_USER")" "$tmp"
chmod 0600 "$tmp"
mv -f "$tmp" "$key_file"
echo "node-key: wrote $key_file"

#!/usr/bin/env bash
# Step 5 of provisioning a remote node: write the node key the program owns to NODE_HOME/data/key (mode 0600, owned
# by the service user). A different key already on the machine is never overwritten: that would change the node's
# permissioned identity. This step runs with command logging off and never prints the key.
# With password authentication of the RPC it also writes the RPC credentials file (bcrypt hashes) RPC_CREDENTIALS_FILE,
# mode 0600, owned by the service user, and restarts a running node whose credentials changed (Besu reads them at
# start).
# Parameters (environment): NODE_HOME, SERVICE_USER, NODE_KEY (secret); with password authentication also
# RPC_CREDENTIALS_FILE, SERVICE_NAME and RPC_CREDENTIALS (secret).
set -euo pipefail
: "${NODE_HOME:?}" "${SERVICE_USER:?}" "${NODE_KEY:?}"

# write_credentials: the RPC credentials file, replaced only when it changes; restarts a running node on a change.
write_credentials() {
  local file=$RPC_CREDENTIALS_FILE group tmp
  : "${RPC_CREDENTIALS:?}" "${SERVICE_NAME:?}"
  group=$(id -gn "$SERVICE_USER")
  if [ -f "$file" ] && [ "$(cat "$file")" = "$(printf '%s' "$RPC_CREDENTIALS")" ]; then
    chmod 0600 "$file"
    chown "$SERVICE_USER:$group" "$file"
    echo "node-key: RPC credentials in place"
    return
  fi
  tmp=$(umask 077 && mktemp "$file.XXXXXX")
  printf '%s\n' "$RPC_CREDENTIALS" >"$tmp"
  chown "$SERVICE_USER:$group" "$tmp"
  chmod 0600 "$tmp"
  mv -f "$tmp" "$file"
  echo "node-key: wrote $file"
  if systemctl is-active --quiet "$SERVICE_NAME"; then
    systemctl restart "$SERVICE_NAME"
    echo "node-key: restarted $SERVICE_NAME for the new RPC credentials"
  fi
}

key_file="$NODE_HOME/data/key"
if [ -f "$key_file" ]; then
  if [ "$(cat "$key_file")" = "$NODE_KEY" ]; then
    chmod 0600 "$key_file"
    chown "$SERVICE_USER:$(id -gn "$SERVICE_USER")" "$key_file"
    echo "node-key: key in place"
    if [ -n "${RPC_CREDENTIALS_FILE:-}" ]; then write_credentials; fi
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
if [ -n "${RPC_CREDENTIALS_FILE:-}" ]; then write_credentials; fi

#!/usr/bin/env bash
# Step 4 of provisioning a remote node: the service user, the node home and every file the node reads, except the
# key (the node-key step writes it): config.toml, the verified genesis, data/nodeAddress and data/enode (the identity
# the day-2 checks compare the running node with), the logs folder and its
# rotation, the launcher and the systemd service. Files are replaced only when their contents change.
# Parameters (environment): NODE_HOME, SERVICE_NAME, SERVICE_USER, CONFIG_TOML, GENESIS_JSON, GENESIS_SHA256,
# NODE_ADDRESS, NODE_ENODE, LAUNCHER, SYSTEMD_UNIT, LOGROTATE_CONF; optional: RPC_JWT_PUBLIC_KEY_FILE and
# RPC_JWT_PUBLIC_KEY (JWT authentication of the RPC), UNSAFE_RPC_OVERRIDE (what the operator's explicit override of the
# RPC safety rules allows, e.g. "ADMIN,cors:*": reported, never decided here).
set -euo pipefail
: "${NODE_HOME:?}" "${SERVICE_NAME:?}" "${SERVICE_USER:?}" "${CONFIG_TOML:?}" "${GENESIS_JSON:?}"
: "${GENESIS_SHA256:?}" "${NODE_ADDRESS:?}" "${NODE_ENODE:?}" "${LAUNCHER:?}" "${SYSTEMD_UNIT:?}" "${LOGROTATE_CONF:?}"

fail() { echo "node-files: $*" >&2; exit 1; }

# write_file PATH MODE OWNER CONTENT: replaces PATH atomically when CONTENT differs (the file ends with one newline).
write_file() {
  local path=$1 mode=$2 owner=$3 content tmp
  content=$(printf '%s' "$4")
  if [ -f "$path" ] && [ "$(cat "$path")" = "$content" ]; then
    chmod "$mode" "$path"
    chown "$owner" "$path"
    return
  fi
  tmp=$(mktemp "$path.XXXXXX")
  printf '%s\n' "$content" >"$tmp"
  chmod "$mode" "$tmp"
  chown "$owner" "$tmp"
  mv -f "$tmp" "$path"
  echo "node-files: wrote $path"
}

if ! id "$SERVICE_USER" >/dev/null 2>&1; then
  useradd --system --home-dir "$NODE_HOME" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
  echo "node-files: created service user $SERVICE_USER"
fi
group=$(id -gn "$SERVICE_USER")

install -d -m 0750 -o "$SERVICE_USER" -g "$group" "$NODE_HOME" "$NODE_HOME/data" "$NODE_HOME/logs"
install -d -m 0755 -o root -g root "$NODE_HOME/bin"

# The genesis is written byte for byte as verified by the program, and checked again here.
actual=$(printf '%s' "$GENESIS_JSON" | sha256sum | cut -d' ' -f1)
[ "$actual" = "$GENESIS_SHA256" ] || fail "genesis arrived damaged: expected sha256 $GENESIS_SHA256, got $actual"
if [ ! -f "$NODE_HOME/data/genesis.json" ] || [ "$(sha256sum <"$NODE_HOME/data/genesis.json" | cut -d' ' -f1)" != "$GENESIS_SHA256" ]; then
  printf '%s' "$GENESIS_JSON" >"$NODE_HOME/data/genesis.json.tmp"
  chown "$SERVICE_USER:$group" "$NODE_HOME/data/genesis.json.tmp"
  chmod 0640 "$NODE_HOME/data/genesis.json.tmp"
  mv -f "$NODE_HOME/data/genesis.json.tmp" "$NODE_HOME/data/genesis.json"
  echo "node-files: wrote $NODE_HOME/data/genesis.json"
fi

write_file "$NODE_HOME/config.toml" 0640 "root:$group" "$CONFIG_TOML"
write_file "$NODE_HOME/data/nodeAddress" 0644 "$SERVICE_USER:$group" "$NODE_ADDRESS"
write_file "$NODE_HOME/data/enode" 0644 "$SERVICE_USER:$group" "$NODE_ENODE"
write_file "$NODE_HOME/bin/start-node.sh" 0755 root:root "$LAUNCHER"
write_file "/etc/systemd/system/$SERVICE_NAME.service" 0644 root:root "$SYSTEMD_UNIT"
write_file "/etc/logrotate.d/lacchain-$SERVICE_NAME" 0644 root:root "$LOGROTATE_CONF"
if [ -n "${RPC_JWT_PUBLIC_KEY_FILE:-}" ]; then
  write_file "$RPC_JWT_PUBLIC_KEY_FILE" 0644 "root:$group" "${RPC_JWT_PUBLIC_KEY:?}"
fi
if [ -n "${UNSAFE_RPC_OVERRIDE:-}" ]; then
  echo "node-files: WARNING: the RPC is publicly reachable with $UNSAFE_RPC_OVERRIDE (lacchain:rpc.allowUnsafeApis)"
fi
touch "$NODE_HOME/logs/${SERVICE_NAME}_info.log"
chown "$SERVICE_USER:$group" "$NODE_HOME/logs/${SERVICE_NAME}_info.log"

systemctl daemon-reload
echo "node-files: ok"

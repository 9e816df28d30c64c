#!/usr/bin/env bash
# Step 4 of provisioning a remote node: the service user, the node home (root's: only data/ and logs/ are the
# service user's, and what goes there is written as the service user) and every file the node reads, except the
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

# remove_planted_symlink PATH: removes PATH when it is a symlink that root did not make (the service user planted it
# while it could still write there), so root never follows it. The operator's own (root's) symlinks are kept.
remove_planted_symlink() {
  if [ -L "$1" ] && [ "$(stat -c %u "$1")" != 0 ]; then
    rm -f "$1"
    echo "node-files: removed a symlink $1 that root did not make"
  fi
}

# write_file PATH MODE OWNER CONTENT: as root, in a folder only root can write: replaces PATH atomically when CONTENT
# differs (the file ends with one newline). A symlink at PATH is replaced, never followed.
write_file() {
  local path=$1 mode=$2 owner=$3 content tmp
  content=$(printf '%s' "$4")
  remove_planted_symlink "$path"
  if [ -f "$path" ] && [ "$(cat "$path")" = "$content" ]; then
    chmod "$mode" "$path"
    chown -h "$owner" "$path"
    return
  fi
  tmp=$(mktemp "$path.XXXXXX")
  printf '%s\n' "$content" >"$tmp"
  chmod "$mode" "$tmp"
  chown -h "$owner" "$tmp"
  mv -f "$tmp" "$path"
  echo "node-files: wrote $path"
}

# user_write PATH MODE: run as the service user, writes standard input to PATH (in a folder of the service user's)
# atomically when it differs. A symlink there leads nowhere the service user could not write anyway.
user_write() {
  local path=$1 mode=$2 tmp
  umask 077
  tmp=$(mktemp "$path.XXXXXX")
  cat >"$tmp"
  if [ -f "$path" ] && [ ! -L "$path" ] && cmp -s "$tmp" "$path"; then
    rm -f "$tmp"
    chmod "$mode" "$path"
    return
  fi
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$path"
  echo "node-files: wrote $path"
}

# plain_file PATH: run as the service user, makes PATH a plain file of its own (a symlink there is replaced).
plain_file() {
  if [ -L "$1" ]; then rm -f "$1"; fi
  if [ ! -e "$1" ]; then : >"$1"; fi
}

# as_service_user FUNCTION ARGS...: runs one of this script's functions as the service user (standard input passed
# on), so nothing root does in the service user's folders can be redirected by a symlink planted there.
as_service_user() {
  local function=$1
  shift
  runuser -u "$SERVICE_USER" -- bash -c "set -euo pipefail; $(declare -f "$function"); $function \"\$@\"" "$function" "$@"
}

if ! id "$SERVICE_USER" >/dev/null 2>&1; then
  useradd --system --home-dir "$NODE_HOME" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
  echo "node-files: created service user $SERVICE_USER"
fi
group=$(id -gn "$SERVICE_USER")

# The node home belongs to root (the service user may only read it); only data/ and logs/, which Besu writes, belong
# to the service user. Whatever the service user may have planted in the home before it was root's is not followed.
if [ -L "$NODE_HOME" ] && [ "$(stat -c %u "$NODE_HOME")" != 0 ]; then
  fail "$NODE_HOME is a symlink that root did not make: give the real folder as node_home"
fi
install -d -m 0750 -o root -g "$group" "$NODE_HOME"
for entry in data logs bin config.toml; do remove_planted_symlink "$NODE_HOME/$entry"; done
install -d -m 0750 -o "$SERVICE_USER" -g "$group" "$NODE_HOME/data" "$NODE_HOME/logs"
install -d -m 0755 -o root -g root "$NODE_HOME/bin"

# The genesis is written byte for byte as verified by the program, and checked again here.
actual=$(printf '%s' "$GENESIS_JSON" | sha256sum | cut -d' ' -f1)
[ "$actual" = "$GENESIS_SHA256" ] || fail "genesis arrived damaged: expected sha256 $GENESIS_SHA256, got $actual"
printf '%s' "$GENESIS_JSON" | as_service_user user_write "$NODE_HOME/data/genesis.json" 0640
printf '%s\n' "$NODE_ADDRESS" | as_service_user user_write "$NODE_HOME/data/nodeAddress" 0644
printf '%s\n' "$NODE_ENODE" | as_service_user user_write "$NODE_HOME/data/enode" 0644

write_file "$NODE_HOME/config.toml" 0640 "root:$group" "$CONFIG_TOML"
write_file "$NODE_HOME/bin/start-node.sh" 0755 root:root "$LAUNCHER"
write_file "/etc/systemd/system/$SERVICE_NAME.service" 0644 root:root "$SYSTEMD_UNIT"
write_file "/etc/logrotate.d/lacchain-$SERVICE_NAME" 0644 root:root "$LOGROTATE_CONF"
if [ -n "${RPC_JWT_PUBLIC_KEY_FILE:-}" ]; then
  write_file "$RPC_JWT_PUBLIC_KEY_FILE" 0644 "root:$group" "${RPC_JWT_PUBLIC_KEY:?}"
fi
if [ -n "${UNSAFE_RPC_OVERRIDE:-}" ]; then
  echo "node-files: WARNING: the RPC is publicly reachable with $UNSAFE_RPC_OVERRIDE (lacchain:rpc.allowUnsafeApis)"
fi
as_service_user plain_file "$NODE_HOME/logs/${SERVICE_NAME}_info.log"

systemctl daemon-reload
echo "node-files: ok"

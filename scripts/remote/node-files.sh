#!/usr/bin/env bash
# The node-files step of provisioning a remote node: the service user, the node home (root's: only its data and logs
# folders are the service user's, and what goes there is written as the service user) and every file the node reads,
# except the key and the identity files (the node-key step writes them, once the key is the one they name):
# config.toml, the verified genesis, the logs folder and its rotation, the launcher and the
# systemd service, and the metrics relay. Files are replaced only when their contents change.
# A restore cut half-way (its data folder moved aside to DATA_DIR plus BEFORE_RESTORE_SUFFIX, the restored one not yet
# in place) gets its data put back first.
# Parameters (environment): NODE_HOME and where its files go (DATA_DIR, LOGS_DIR, BIN_DIR, CONFIG_FILE, GENESIS_FILE,
# NODE_ADDRESS_FILE, ENODE_FILE, LAUNCHER_FILE, INFO_LOG: DATA_DIR and LOGS_DIR are the service user's and hold the
# files written as that user; the others are inside NODE_HOME), SERVICE_NAME, SERVICE_USER, CONFIG_TOML, GENESIS_JSON,
# GENESIS_SHA256, NODE_ADDRESS and NODE_ENODE (the identity, shown for review; absent with machine custody), LAUNCHER, SYSTEMD_UNIT, LOGROTATE_CONF, the metrics relay (METRICS_RELAY,
# its file METRICS_RELAY_FILE, its unit METRICS_RELAY_UNIT named METRICS_RELAY_SERVICE: enabled, and restarted when
# Besu runs); optional: RPC_JWT_PUBLIC_KEY_FILE and
# RPC_JWT_PUBLIC_KEY (JWT authentication of the RPC), UNSAFE_RPC_OVERRIDE (what the operator's explicit override of the
# RPC safety rules allows, e.g. "ADMIN,cors:*": reported, never decided here).
set -euo pipefail
: "${NODE_HOME:?}" "${SERVICE_NAME:?}" "${SERVICE_USER:?}" "${CONFIG_TOML:?}" "${GENESIS_JSON:?}"
: "${GENESIS_SHA256:?}" "${LAUNCHER:?}" "${SYSTEMD_UNIT:?}" "${LOGROTATE_CONF:?}"
: "${BEFORE_RESTORE_SUFFIX:?}" "${DATA_DIR:?}" "${LOGS_DIR:?}" "${BIN_DIR:?}" "${CONFIG_FILE:?}" "${GENESIS_FILE:?}" "${NODE_ADDRESS_FILE:?}"
: "${ENODE_FILE:?}" "${LAUNCHER_FILE:?}" "${INFO_LOG:?}"
: "${METRICS_RELAY:?}" "${METRICS_RELAY_FILE:?}" "${METRICS_RELAY_SERVICE:?}" "${METRICS_RELAY_UNIT:?}"

# plain_file PATH: run as the service user, makes PATH a plain file of its own (a symlink there is replaced).
plain_file() {
  if [ -L "$1" ]; then rm -f "$1"; fi
  if [ ! -e "$1" ]; then : >"$1"; fi
}

if ! id "$SERVICE_USER" >/dev/null 2>&1; then
  useradd --system --home-dir "$NODE_HOME" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
  echo "node-files: created service user $SERVICE_USER"
fi
group=$(id -gn "$SERVICE_USER")

# The node home belongs to root (the service user may only read it); only its data and logs, which Besu writes, belong
# to the service user. Whatever the service user may have planted in the home before it was root's is not followed.
if [ -L "$NODE_HOME" ] && [ "$(stat -c %u "$NODE_HOME")" != 0 ]; then
  fail "$NODE_HOME is a symlink that root did not make: give the real folder as node_home"
fi
install -d -m 0750 -o root -g "$group" "$NODE_HOME"
put_back_data_of_cut_restore "$DATA_DIR" "$BEFORE_RESTORE_SUFFIX"
for entry in "$DATA_DIR" "$LOGS_DIR" "$BIN_DIR" "$CONFIG_FILE"; do remove_planted_symlink "$entry"; done
install -d -m 0750 -o "$SERVICE_USER" -g "$group" "$DATA_DIR" "$LOGS_DIR"
install -d -m 0755 -o root -g root "$BIN_DIR"

# The genesis is written byte for byte as verified by the program, and checked again here.
actual=$(printf '%s' "$GENESIS_JSON" | sha256sum | cut -d' ' -f1)
[ "$actual" = "$GENESIS_SHA256" ] || fail "genesis arrived damaged: expected sha256 $GENESIS_SHA256, got $actual"
printf '%s' "$GENESIS_JSON" | as_service_user user_write "$GENESIS_FILE" 0640

write_file "$CONFIG_FILE" 0640 "root:$group" "$CONFIG_TOML"
write_file "$LAUNCHER_FILE" 0755 root:root "$LAUNCHER"
write_file "/etc/systemd/system/$SERVICE_NAME.service" 0644 root:root "$SYSTEMD_UNIT"
write_file "/etc/logrotate.d/lacchain-$SERVICE_NAME" 0644 root:root "$LOGROTATE_CONF"
write_file "$METRICS_RELAY_FILE" 0755 root:root "$METRICS_RELAY"
write_file "/etc/systemd/system/$METRICS_RELAY_SERVICE.service" 0644 root:root "$METRICS_RELAY_UNIT"
if [ -n "${RPC_JWT_PUBLIC_KEY_FILE:-}" ]; then
  write_file "$RPC_JWT_PUBLIC_KEY_FILE" 0644 "root:$group" "${RPC_JWT_PUBLIC_KEY:?}"
fi
if [ -n "${UNSAFE_RPC_OVERRIDE:-}" ]; then
  echo "node-files: WARNING: the RPC is publicly reachable with $UNSAFE_RPC_OVERRIDE (lacchain:rpc.allowUnsafeApis)"
fi
as_service_user plain_file "$INFO_LOG"

systemctl daemon-reload
# The relay starts and stops with Besu (WantedBy, PartOf); a running node gets its new relay now.
systemctl enable "$METRICS_RELAY_SERVICE" >/dev/null 2>&1
if systemctl is-active --quiet "$SERVICE_NAME"; then systemctl restart "$METRICS_RELAY_SERVICE"; fi
echo "node-files: ok"

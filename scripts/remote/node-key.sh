#!/usr/bin/env bash
# The node-key step of provisioning a remote node: write the node key the program owns to KEY_FILE (mode 0600, owned
# by the service user). A different key already on the machine is never overwritten: that would change the node's
# permissioned identity. This step runs with command logging off and never prints the key.
# With password authentication of the RPC it also writes the RPC credentials file (bcrypt hashes) RPC_CREDENTIALS_FILE,
# mode 0600, owned by the service user, and restarts a running node whose credentials changed (Besu reads them at
# start).
# It also writes the backup environment BACKUP_ENV_FILE (root's only, mode 0600): the restic repository
# BACKUP_REPOSITORY and its password, which the node's backup command reads.
# A restore cut half-way gets the node's data put back first (BEFORE_RESTORE_SUFFIX: where the restore moved it).
# Parameters (environment): NODE_HOME, KEY_FILE (in the service user's data folder), SERVICE_USER, NODE_KEY (secret),
# BACKUP_ENV_FILE, BACKUP_REPOSITORY, BACKUP_PASSWORD (secret), with an S3 repository BACKUP_S3_ACCESS_KEY_ID and
# BACKUP_S3_SECRET_ACCESS_KEY (secret); with password authentication also
# RPC_CREDENTIALS_FILE, SERVICE_NAME and RPC_CREDENTIALS (secret); with a metrics endpoint (lacchain:metricsToken)
# METRICS_TOKEN_CHECK_FILE and METRICS_TOKEN (secret): the nginx file (root's, 0600) the metrics endpoint includes,
# refusing a request without that bearer token, reloading a running nginx when it changes.
set -euo pipefail
: "${NODE_HOME:?}" "${KEY_FILE:?}" "${SERVICE_USER:?}" "${NODE_KEY:?}" "${BACKUP_ENV_FILE:?}" "${BACKUP_REPOSITORY:?}"
: "${BACKUP_PASSWORD:?}" "${BEFORE_RESTORE_SUFFIX:?}"

# write_credentials: the RPC credentials file, replaced only when it changes; restarts a running node on a change.
write_credentials() {
  local file=$RPC_CREDENTIALS_FILE group tmp
  : "${RPC_CREDENTIALS:?}" "${SERVICE_NAME:?}"
  group=$(id -gn "$SERVICE_USER")
  # In the node home, which only root may write: a symlink there that root did not make is removed, never followed.
  if [ -L "$file" ] && [ "$(stat -c %u "$file")" != 0 ]; then rm -f "$file"; fi
  if [ -f "$file" ] && [ "$(cat "$file")" = "$(printf '%s' "$RPC_CREDENTIALS")" ]; then
    chmod 0600 "$file"
    chown -h "$SERVICE_USER:$group" "$file"
    echo "node-key: RPC credentials in place"
    return
  fi
  tmp=$file$SIBLING_TEMP_SUFFIX
  rm -f "$tmp"
  (umask 077 && printf '%s\n' "$RPC_CREDENTIALS" >"$tmp")
  chown -h "$SERVICE_USER:$group" "$tmp"
  chmod 0600 "$tmp"
  mv -f "$tmp" "$file"
  echo "node-key: wrote $file"
  if systemctl is-active --quiet "$SERVICE_NAME"; then
    systemctl restart "$SERVICE_NAME"
    echo "node-key: restarted $SERVICE_NAME for the new RPC credentials"
  fi
}

# key_write KEY_FILE: run as the service user, writes the key from standard input to KEY_FILE (mode 0600) unless a
# file is already there; exits 0 when written or already the same key, 3 when another key is there, 4 when
# something else than a file is there.
key_write() {
  local key_file=$1 new
  umask 077
  new=$key_file$SIBLING_TEMP_SUFFIX
  rm -f "$new"
  cat >"$new"
  if [ -L "$key_file" ] || { [ -e "$key_file" ] && [ ! -f "$key_file" ]; }; then
    rm -f "$new"
    return 4
  fi
  if [ -f "$key_file" ]; then
    if cmp -s "$new" "$key_file"; then
      rm -f "$new"
      chmod 0600 "$key_file"
      echo "node-key: key in place"
      return 0
    fi
    rm -f "$new"
    return 3
  fi
  chmod 0600 "$new"
  mv -f "$new" "$key_file"
  echo "node-key: wrote $key_file"
}

# The key is written by the service user itself, in its own folder: no symlink planted there can make root write
# or change the mode of anything else.
key_file=$KEY_FILE
put_back_data_of_cut_restore "$(dirname "$KEY_FILE")" "$BEFORE_RESTORE_SUFFIX"
status=0
printf '%s' "$NODE_KEY" \
  | as_service_user key_write "$key_file" \
  || status=$?
case "$status" in
  0) ;;
  3)
    echo "node-key: $key_file holds another node key: refusing to replace the node's identity." >&2
    echo "node-key: to keep that identity, import it: pulumi config set --secret --path 'lacchain:nodeKeys.<node>' < key" >&2
    echo "node-key: to replace it on purpose, move the file away first." >&2
    exit 1
    ;;
  4)
    echo "node-key: $key_file is not a plain file (a symlink or a folder): refusing to write the key there; remove it and run again." >&2
    exit 1
    ;;
  *)
    echo "node-key: could not write $key_file as $SERVICE_USER (exit $status)" >&2
    exit 1
    ;;
esac
if [ -n "${RPC_CREDENTIALS_FILE:-}" ]; then write_credentials; fi
install -d -m 0755 -o root -g root "$(dirname "$BACKUP_ENV_FILE")"
backup_env=$(printf 'RESTIC_REPOSITORY=%q\nRESTIC_PASSWORD=%q' "$BACKUP_REPOSITORY" "$BACKUP_PASSWORD")
if [ -n "${BACKUP_S3_ACCESS_KEY_ID:-}" ]; then
  backup_env+=$(printf '\nAWS_ACCESS_KEY_ID=%q\nAWS_SECRET_ACCESS_KEY=%q' "$BACKUP_S3_ACCESS_KEY_ID" \
    "${BACKUP_S3_SECRET_ACCESS_KEY:?}")
fi
write_file "$BACKUP_ENV_FILE" 0600 root:root "$backup_env"
if [ -n "${METRICS_TOKEN_CHECK_FILE:-}" ]; then
  # The metrics endpoint's token check, included by the proxy's site: the token stays in this root-only file.
  changed=false
  # shellcheck disable=SC2016 # nginx's variable, written as it is
  write_file "$METRICS_TOKEN_CHECK_FILE" 0600 root:root \
    "$(printf 'if ($http_authorization != "Bearer %s") { return 401; }' "${METRICS_TOKEN:?}")"
  if [ "$changed" = true ] && systemctl is-active --quiet nginx && nginx -t -q; then systemctl reload nginx; fi
fi

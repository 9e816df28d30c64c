#!/usr/bin/env bash
# The node-key step of provisioning a remote node. With key custody stack (KEY_CUSTODY), write the node key the
# program owns to KEY_FILE (mode 0600, owned by the service user). A different key already on the machine is never
# overwritten: that would change the node's permissioned identity. With key custody machine, the key is the machine's:
# kept when there, made there by the release's own `besu public-key export` (as the service user, mode 0600) when the
# node never had one, refused when the node had one (ENODE_FILE names it) and it is gone; its public key is printed
# (PUBLIC_KEY_LABEL), its address and enode written (NODE_ADDRESS_FILE, ENODE_FILE), and with EXPECTED_PUBLIC_KEY
# (pinned in the settings) a machine holding another key, or none, is refused. A node moved here (npm run node --
# move) finds its key carried root to root in INCOMING_KEY_FILE (root's), taken in once when the machine has none. This step runs with command logging
# off and never prints the key.
# With password authentication of the RPC it also writes the RPC credentials file (bcrypt hashes) RPC_CREDENTIALS_FILE,
# mode 0600, owned by the service user, and restarts a running node whose credentials changed (Besu reads them at
# start).
# It also writes the backup environment BACKUP_ENV_FILE (root's only, mode 0600): the restic repository
# BACKUP_REPOSITORY and its password, which the node's backup command reads.
# A restore cut half-way gets the node's data put back first (BEFORE_RESTORE_SUFFIX: where the restore moved it).
# Parameters (environment): NODE_HOME, KEY_FILE (in the service user's data folder), SERVICE_USER, KEY_CUSTODY
# (stack or machine), NODE_ADDRESS_FILE, ENODE_FILE (the identity files, written once the key is accepted); with stack
# NODE_KEY (secret), NODE_ADDRESS and NODE_ENODE (the key's identity); with machine DATA_DIR, P2P_ENDPOINT
# (host:port), BESU_BINARY, JAVA_HOME_LINK, PUBLIC_KEY_LABEL, BACKUP_PASSWORD_LABEL, optional EXPECTED_PUBLIC_KEY;
# BACKUP_ENV_FILE, BACKUP_REPOSITORY, BACKUP_PASSWORD (secret; with machine custody, when absent, the HMAC-SHA-256 of
# BACKUP_PASSWORD_LABEL under the machine's key, as the program derives it), with an S3 repository BACKUP_S3_ACCESS_KEY_ID and
# BACKUP_S3_SECRET_ACCESS_KEY (secret); with password authentication also
# RPC_CREDENTIALS_FILE, SERVICE_NAME and RPC_CREDENTIALS (secret); with a metrics endpoint (lacchain:metricsToken)
# METRICS_TOKEN_CHECK_FILE and METRICS_TOKEN (secret): the nginx file (root's, 0600) the metrics endpoint includes,
# refusing a request without that bearer token, reloading a running nginx when it changes.
set -euo pipefail
: "${NODE_HOME:?}" "${KEY_FILE:?}" "${SERVICE_USER:?}" "${KEY_CUSTODY:?}" "${BACKUP_ENV_FILE:?}" "${BACKUP_REPOSITORY:?}"
: "${BEFORE_RESTORE_SUFFIX:?}"

# write_credentials: the RPC credentials file, replaced only when it changes; restarts a running node on a change.
write_credentials() {
  local file=$RPC_CREDENTIALS_FILE group tmp
  : "${RPC_CREDENTIALS:?}" "${SERVICE_NAME:?}"
  group=$(id -gn "$SERVICE_USER")
  # In the node home, which only root may write: a symlink there that root did not make is removed, never followed.
  if [ -L "$file" ] && [ "$(stat -c %u "$file")" != 0 ]; then rm -f "$file"; fi
  # (The file is the service user's: compared with cmp, which stops at the first difference, never read whole.)
  if [ -f "$file" ] && [ ! -L "$file" ] && printf '%s\n' "$RPC_CREDENTIALS" | cmp -s - "$file"; then
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

# besu_public_key BESU_BINARY JAVA_HOME_LINK DATA_DIR KEY_FILE WHAT: run as the service user, prints the public key
# (WHAT export) or the address (WHAT export-address) of the key in KEY_FILE, as the release's Besu reads it; Besu
# makes the key first when the file is missing (umask 077: mode 0600). Only the public part is ever printed.
besu_public_key() {
  local besu=$1 java_home=$2 data_dir=$3 key_file=$4 what=$5 out
  umask 077
  if [ -x "$java_home/bin/java" ]; then export JAVA_HOME=$java_home; fi
  out=$(mktemp -d)
  trap 'rm -rf "$out"' RETURN
  "$besu" --data-path="$data_dir" --node-private-key-file="$key_file" public-key "$what" --to="$out/value" >/dev/null
  cat "$out/value"
}

# key_private KEY_FILE: run as the service user, makes the key readable by that user only (root reads it too).
key_private() { chmod 0600 "$1"; }

# enode_public_key: the public key (128 hex digits) of the enode on standard input, or nothing: what a message may say
# of a file the service user can write, whatever else it holds.
enode_public_key() { sed -n 's#^enode://\([0-9a-f]\{128\}\)@.*#\1#p' | head -n 1; }

# machine_key: key custody machine. The key stays the machine's; prints its public key, writes its address and enode.
# Root records the public key it accepted in KEY_RECORD_FILE (in the node home, root's): from then on that is the
# key's pin, as a pinned publicKey is, so a key swapped on the disk is refused; before that record, a key whose public
# key is not the one data/enode names is refused too.
machine_key() {
  : "${DATA_DIR:?}" "${NODE_ADDRESS_FILE:?}" "${ENODE_FILE:?}" "${P2P_ENDPOINT:?}" "${BESU_BINARY:?}"
  : "${JAVA_HOME_LINK:?}" "${PUBLIC_KEY_LABEL:?}" "${BACKUP_PASSWORD_LABEL:?}" "${KEY_RECORD_FILE:?}"
  local public_key address had="" recorded=""
  [ -x "$BESU_BINARY" ] || fail "Besu is not installed at $BESU_BINARY (the release step puts it there)"
  if [ -L "$KEY_FILE" ] || { [ -e "$KEY_FILE" ] && [ ! -f "$KEY_FILE" ]; }; then
    fail "$KEY_FILE is not a plain file (a symlink or a folder): refusing to use it as the node key; remove it and run again"
  fi
  # The enode the node had (data/enode is the service user's: read as that user, and only its public key kept).
  if [ -s "$ENODE_FILE" ] || [ -L "$ENODE_FILE" ]; then
    had=$(read_as_service_user "$ENODE_FILE" 300 | enode_public_key || true)
  fi
  if [ -e "$KEY_RECORD_FILE" ] || [ -L "$KEY_RECORD_FILE" ]; then
    # Root's word alone: a record root did not write (planted while an older layout let the service user write the
    # node home, or a link) vouches for nothing.
    if [ -L "$KEY_RECORD_FILE" ] || [ ! -f "$KEY_RECORD_FILE" ] || [ "$(stat -c %u "$KEY_RECORD_FILE")" != 0 ]; then
      fail "the record of the machine's key $KEY_RECORD_FILE is not a file of root's (it is $(stat -c '%F of %U' "$KEY_RECORD_FILE")): refusing to trust it; check that the node key is the permissioned one (npm run --silent identity -- --key-file ...), then remove the record and run pulumi up again, or pin publicKey"
    fi
    recorded=$(read_plain_file "$KEY_RECORD_FILE" 200 | sed -n 's/^\(0x[0-9a-f]\{128\}\)$/\1/p' || true)
  fi
  if [ ! -s "$KEY_FILE" ] && [ -f "${INCOMING_KEY_FILE:?}" ] && [ ! -L "$INCOMING_KEY_FILE" ] \
    && [ "$(stat -c %u "$INCOMING_KEY_FILE")" = 0 ]; then
    rm -f "$KEY_FILE"
    read_plain_file "$INCOMING_KEY_FILE" 200 | as_service_user key_write "$KEY_FILE" >/dev/null \
      || fail "the node key carried to this machine ($INCOMING_KEY_FILE) could not be written to $KEY_FILE"
    rm -f "$INCOMING_KEY_FILE"
    echo "node-key: took in the node key carried from the node's former machine"
  fi
  if [ ! -s "$KEY_FILE" ]; then
    if [ -n "$had" ] || [ -n "$recorded" ] || [ -n "${EXPECTED_PUBLIC_KEY:-}" ]; then
      fail "the node key $KEY_FILE is not on this machine, and the node has an identity (public key ${EXPECTED_PUBLIC_KEY:-${recorded:-0x$had}}): refusing to make a new key, which would change its enode and lose its permissioning. Put your copy back (npm run node -- restore --key-file FILE, or copy it to $KEY_FILE owned by $SERVICE_USER, mode 0600) and run pulumi up again; to replace the key on purpose see docs/security.md#replacing-a-machines-key"
    fi
    rm -f "$KEY_FILE"
  fi
  public_key=$(as_service_user besu_public_key "$BESU_BINARY" "$JAVA_HOME_LINK" "$DATA_DIR" "$KEY_FILE" export) \
    || fail "besu public-key export failed: the node key cannot be made or read"
  [[ $public_key =~ ^0x[0-9a-f]{128}$ ]] || fail "besu public-key export printed no public key"
  if [ -n "${EXPECTED_PUBLIC_KEY:-}" ] && [ "$public_key" != "$EXPECTED_PUBLIC_KEY" ]; then
    fail "the node key $KEY_FILE is not the one the stack pins (publicKey $EXPECTED_PUBLIC_KEY; this machine's is $public_key): refusing to run the node with another identity; put the pinned key back, or change publicKey on purpose"
  fi
  if [ -z "${EXPECTED_PUBLIC_KEY:-}" ] && [ -n "$recorded" ] && [ "$public_key" != "$recorded" ]; then
    fail "the node key $KEY_FILE is not the one this machine accepted before (public key $recorded, recorded in $KEY_RECORD_FILE; the key there now is $public_key): refusing to run the node with another identity; put that key back, or replace the key on purpose (docs/security.md#replacing-a-machines-key)"
  fi
  if [ -z "${EXPECTED_PUBLIC_KEY:-}" ] && [ -z "$recorded" ] && [ -n "$had" ] && [ "$public_key" != "0x$had" ]; then
    fail "the node key $KEY_FILE is not the one the node's enode ($ENODE_FILE) names (public key 0x$had; the key there now is $public_key): refusing to run the node with another identity; put that key back, or replace the key on purpose (docs/security.md#replacing-a-machines-key)"
  fi
  address=$(as_service_user besu_public_key "$BESU_BINARY" "$JAVA_HOME_LINK" "$DATA_DIR" "$KEY_FILE" export-address) \
    || fail "besu public-key export-address failed"
  [[ $address =~ ^0x[0-9a-f]{40}$ ]] || fail "besu public-key export-address printed no address"
  as_service_user key_private "$KEY_FILE"
  write_file "$KEY_RECORD_FILE" 0644 root:root "$public_key"
  printf '%s\n' "$address" | as_service_user user_write "$NODE_ADDRESS_FILE" 0644
  printf 'enode://%s@%s\n' "${public_key#0x}" "$P2P_ENDPOINT" | as_service_user user_write "$ENODE_FILE" 0644
  echo "$PUBLIC_KEY_LABEL $public_key"
  if [ -z "${BACKUP_PASSWORD:-}" ]; then
    BACKUP_PASSWORD=$(read_as_service_user "$KEY_FILE" 200 | hmac_sha256_of_key "$BACKUP_PASSWORD_LABEL") \
      || fail "the node key $KEY_FILE is not one line of 64 hex digits: no backup password can be derived from it"
  fi
}

# The key is written by the service user itself, in its own folder: no symlink planted there can make root write
# or change the mode of anything else.
key_file=$KEY_FILE
put_back_data_of_cut_restore "$(dirname "$KEY_FILE")" "$BEFORE_RESTORE_SUFFIX"
status=0
if [ "$KEY_CUSTODY" = machine ]; then
  machine_key
else
  printf '%s' "${NODE_KEY:?}" \
    | as_service_user key_write "$key_file" \
    || status=$?
fi
: "${BACKUP_PASSWORD:?}"
case "$status" in
  0)
    # The identity the day-2 checks compare the running node with, written once the key on the machine is its own.
    if [ "$KEY_CUSTODY" != machine ]; then
      printf '%s\n' "${NODE_ADDRESS:?}" | as_service_user user_write "${NODE_ADDRESS_FILE:?}" 0644
      printf '%s\n' "${NODE_ENODE:?}" | as_service_user user_write "${ENODE_FILE:?}" 0644
    fi
    ;;
  3)
    echo "node-key: $key_file holds another node key: refusing to replace the node's identity." >&2
    echo "node-key: to keep that identity, import it: pulumi config set --secret --path 'lacchain:nodeKeys.<node>' < key" >&2
    echo "node-key: (or leave it on the machine: keyCustody machine, docs/security.md#key-custody)" >&2
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

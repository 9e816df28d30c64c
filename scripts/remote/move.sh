#!/usr/bin/env bash
# A node's move between machines (npm run node -- move), on one of the two machines, as root. MOVE_ACTION says which:
#   leave    the old machine: the node's units (UNITS: the service and its companions) get a drop-in that keeps them
#            from starting while MOVED_OUT_FILE is there (written first, naming DESTINATION), then stop; prints the
#            moment the service stopped (MOVE_STOPPED_AT=, UTC): nothing starts the old node again, not a reboot, a
#            backup or an operator's start, until the file is removed on purpose
#   arrive   the new machine: MOVED_IN_FILE names the backup (BACKUP_ID) its start step restores before the node's
#            first start there, and the enode the node had (FROM_ENODE, for npm run node -- check); BACKUP_PATH, when
#            given, is the data folder's path inside the backup (a cluster's backup: its root, /); a
#            MOVED_OUT_FILE an earlier move away from this machine left goes
#   remove   the old machine, once the new node is healthy: the units' files and the backup timer (BACKUP_UNIT) are
#            removed; the node home and its data, the repository and MOVED_OUT_FILE are kept
#   look     the old machine, after a move ended in its stop: prints how far leave got (MOVE_OLD_NODE=): running (a
#            unit still runs or is stopping), kept (none runs, MOVED_OUT_FILE is there and systemd loaded the drop-in
#            of each unit), stopped (none runs, not kept from starting); changes nothing
# Parameters (environment): MOVE_ACTION, SERVICE_NAME, UNITS, MOVED_OUT_FILE, MOVED_IN_FILE, DROP_IN, DESTINATION,
# BACKUP_ID, FROM_ENODE and BACKUP_PATH (arrive), BACKUP_UNIT (remove). Arriving, the node identity files an earlier
# stay left here (IDENTITY_FILES, in the service user's data folder, and root's KEY_RECORD_FILE) are set aside into
# KEYS_ASIDE_DIR (root's only), so the node-key step takes in the carried key (INCOMING_KEY_FILE), writes the stack's
# or makes one; with a new key (NEW_KEY=yes) a key an earlier, cut move carried here is deleted first. SERVICE_USER
# (arrive) is the user whose folder IDENTITY_FILES are in.
set -euo pipefail
: "${MOVE_ACTION:?}" "${SERVICE_NAME:?}" "${UNITS:?}" "${MOVED_OUT_FILE:?}" "${MOVED_IN_FILE:?}" "${DROP_IN:?}"

units_dir=/etc/systemd/system

leave() {
  : "${DESTINATION:?}"
  local unit active=""
  install -d -m 0755 -o root -g root "$(dirname "$MOVED_OUT_FILE")"
  if [ ! -f "$MOVED_OUT_FILE" ] || [ -L "$MOVED_OUT_FILE" ]; then
    write_file "$MOVED_OUT_FILE" 0644 root:root "moved-to=$DESTINATION"
  fi
  for unit in $UNITS; do
    install -d -m 0755 -o root -g root "$units_dir/$unit.service.d"
    write_file "$units_dir/$unit.service.d/$DROP_IN" 0644 root:root \
      "$(printf '[Unit]\n# The node moved to %s (npm run node -- move): never started here again.\nConditionPathExists=!%s' \
        "$DESTINATION" "$MOVED_OUT_FILE")"
  done
  systemctl daemon-reload
  for unit in $UNITS; do
    systemctl disable "$unit" >/dev/null 2>&1 || true
    systemctl stop "$unit" || true
  done
  for unit in $UNITS; do
    if systemctl is-active --quiet "$unit"; then active="$active $unit"; fi
  done
  [ -z "$active" ] || fail "systemd could not stop$active: the node was not moved; see systemctl status$active"
  echo "MOVE_STOPPED_AT=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)"
  echo "move: $SERVICE_NAME stopped and kept from starting here (moved to $DESTINATION)"
}

# The most of one identity file set aside (a key, an enode, an address: a few hundred bytes).
IDENTITY_FILE_MAX_BYTES=4096

# set_identity_aside: with a new key, the key an earlier cut move carried here (INCOMING_KEY_FILE) deleted; the identity
# files a former stay of the node left here moved (never copied) into a folder of KEYS_ASIDE_DIR only root reads: the
# node-key step then finds no key and takes in the carried one, writes the stack's, or makes one. IDENTITY_FILES are in
# the service user's data folder (lib.sh's rule): each is seen, read and removed as that user only (a link or a FIFO
# there is removed, never read; a file that user cannot reach is none of the node's), its content written by root into
# a file of its own in the aside folder; root's record of the machine key (KEY_RECORD_FILE, in the node home, root's)
# is renamed there, never followed.
set_identity_aside() {
  : "${IDENTITY_FILES:?}" "${KEY_RECORD_FILE:?}" "${KEYS_ASIDE_DIR:?}" "${INCOMING_KEY_FILE:?}" "${SERVICE_USER:?}"
  local file aside content said user_files=$IDENTITY_FILES
  # With a new key: the old key, carried here by a move that was cut before its bring-up took it in, is never the
  # new node's.
  if [ "${NEW_KEY:?}" = yes ] && { [ -e "$INCOMING_KEY_FILE" ] || [ -L "$INCOMING_KEY_FILE" ]; }; then
    rm -f "$INCOMING_KEY_FILE" "$INCOMING_KEY_FILE.new"
    echo "move: deleted the key an earlier move carried here ($INCOMING_KEY_FILE): a new key is made here"
  fi
  aside="$KEYS_ASIDE_DIR/$(date -u +%Y%m%dT%H%M%S.%NZ)"
  # A machine the node never lived on has no service user yet, nor any of its files.
  id "$SERVICE_USER" >/dev/null 2>&1 || user_files=""
  for file in $user_files; do
    # shellcheck disable=SC2016 # expanded by the service user's shell
    run_as_service_user sh -c '[ -e "$1" ] || [ -L "$1" ]' sh "$file" || continue
    install -d -m 0700 -o root -g root "$KEYS_ASIDE_DIR" "$aside"
    # Copied before the original goes: a cut in between leaves it in both places, the next arrive sets it aside again.
    said="removed $file, which was no file to read (a link, a FIFO or empty)"
    if content=$(read_as_service_user "$file" "$IDENTITY_FILE_MAX_BYTES") && [ -n "$content" ]; then
      write_file "$aside/$(basename "$file")" 0600 root:root "$content" >/dev/null
      said="set $file aside in $aside (an earlier stay's)"
    fi
    run_as_service_user rm -rf -- "$file" \
      || fail "could not remove $file as $SERVICE_USER: remove it (an earlier stay's; its content is in $aside) and run move again"
    echo "move: $said"
  done
  if [ -e "$KEY_RECORD_FILE" ] || [ -L "$KEY_RECORD_FILE" ]; then
    install -d -m 0700 -o root -g root "$KEYS_ASIDE_DIR" "$aside"
    mv -fT "$KEY_RECORD_FILE" "$aside/$(basename "$KEY_RECORD_FILE")"
    echo "move: set $KEY_RECORD_FILE aside in $aside (an earlier stay's)"
  fi
}

arrive() {
  : "${BACKUP_ID:?}" "${FROM_ENODE?}"
  [[ $BACKUP_ID =~ ^[0-9a-f]{8,64}$ ]] || fail "not a backup id: $BACKUP_ID"
  install -d -m 0755 -o root -g root "$(dirname "$MOVED_IN_FILE")"
  # The node comes back to a machine it once moved away from: that record no longer holds.
  rm -f "$MOVED_OUT_FILE"
  set_identity_aside
  write_file "$MOVED_IN_FILE" 0600 root:root \
    "$(printf 'backup=%s\nfrom-enode=%s\nbackup-path=%s' "$BACKUP_ID" "$FROM_ENODE" "${BACKUP_PATH:-}")"
  echo "move: the start step restores backup $BACKUP_ID before $SERVICE_NAME first starts here"
}

remove() {
  : "${BACKUP_UNIT:?}"
  local unit
  [ -f "$MOVED_OUT_FILE" ] || fail "$SERVICE_NAME did not move away from this machine ($MOVED_OUT_FILE is missing): refusing to remove it"
  for unit in $UNITS "$BACKUP_UNIT"; do
    systemctl disable --now "$unit.timer" >/dev/null 2>&1 || true
    systemctl disable --now "$unit" >/dev/null 2>&1 || true
    rm -rf "${units_dir:?}/$unit.service" "$units_dir/$unit.service.d" "$units_dir/$unit.timer"
  done
  systemctl daemon-reload
  systemctl reset-failed >/dev/null 2>&1 || true
  echo "move: removed the service $SERVICE_NAME and its companions here; its data and backups are kept"
}

look() {
  local unit state=kept
  for unit in $UNITS; do
    case "$(systemctl is-active "$unit" || true)" in
      active | activating | deactivating | reloading)
        echo "MOVE_OLD_NODE=running"
        return
        ;;
    esac
  done
  [ -f "$MOVED_OUT_FILE" ] || state=stopped
  for unit in $UNITS; do
    # The drop-ins systemd loaded: one written but not yet loaded (no daemon-reload since) does not keep it.
    case " $(systemctl show -p DropInPaths --value "$unit.service") " in
      *" $units_dir/$unit.service.d/$DROP_IN "*) ;;
      *) state=stopped ;;
    esac
  done
  echo "MOVE_OLD_NODE=$state"
}

case "$MOVE_ACTION" in
  leave) leave ;;
  look) look ;;
  arrive) arrive ;;
  remove) remove ;;
  *) fail "unknown move action: $MOVE_ACTION" ;;
esac

# shellcheck shell=bash
# The node's backup command on a remote machine (installed by the backups step as NODE_HOME/bin/node-backup, after
# its settings and scripts/remote/lib.sh; run as root): backs up, lists and restores the node's chain data with restic.
# A backup is consistent: the node is stopped while its data folder is copied, and started again after. It holds the
# data folder without the node key, and config.toml; its tags say the node, the release that ran the data, the chain
# head at the time and why it was taken. Progress is printed as restic's JSON status lines (restore: lines of the same
# shape made here), messages as plain lines.
#   node-backup init                       make the repository when it does not exist; check the password opens it
#   node-backup backup REASON              back up now (REASON: manual, scheduled, before-release-change)
#   node-backup list                       the node's backups, restic's JSON
#   node-backup recorded-enode ID          the enode recorded in backup ID (data/enode)
#   node-backup restore ID RELEASE HEAD    put backup ID back, start the node on RELEASE, check it answers with the
#                                          recorded enode at a head of at least HEAD; with KEY_FROM_STDIN=true, the
#                                          node key is read from standard input when the machine lost it
#   node-backup take-in RECORD             a node moved to this machine (npm run node -- move): restore the backup
#                                          RECORD names (root's file, backup=ID; backup-path=, the data folder's path
#                                          in it when not this machine's) into the data folder before the node's
#                                          first start here, keeping this machine's key and identity files; no start
#   node-backup export ID                  a node moved to a cluster (npm run node -- move): backup ID's data folder,
#                                          without the key and the machine's identity files, as a tar on standard
#                                          output (restored beside the data folder, which stays as it is)
# Settings (environment, written before this script): NODE_NAME, SERVICE_NAME, SERVICE_USER, DATA_DIR, KEY_FILE,
# KEY_CUSTODY (stack or machine: where a lost key comes back from),
# ENODE_FILE, NODE_ADDRESS_FILE, CONFIG_FILE, RELEASES_DIR, RPC_PORT, START_TIMEOUT, KEEP, ENV_FILE (the repository and its password),
# RUN_DIR (root's only, under /run: the lock and the marker), LOCK_FILE, STOPPED_FILE (there while a backup has the
# node stopped), BEFORE_RESTORE_SUFFIX, VERSION_METADATA, TAG_* (the tags' names), MARK, REASON_BEFORE_CHANGE.
: "${NODE_NAME:?}" "${SERVICE_NAME:?}" "${SERVICE_USER:?}" "${DATA_DIR:?}" "${KEY_FILE:?}" "${ENODE_FILE:?}"
: "${NODE_ADDRESS_FILE:?}" "${CONFIG_FILE:?}" "${RELEASES_DIR:?}" "${RPC_PORT:?}" "${START_TIMEOUT:?}" "${KEEP:?}" "${ENV_FILE:?}"
: "${RUN_DIR:?}" "${LOCK_FILE:?}" "${STOPPED_FILE:?}" "${BEFORE_RESTORE_SUFFIX:?}" "${VERSION_METADATA:?}" "${TAG_NODE:?}" "${TAG_RELEASE:?}"
: "${TAG_HEAD:?}" "${TAG_REASON:?}" "${MARK:?}" "${REASON_BEFORE_CHANGE:?}"

[ "$(id -u)" = 0 ] || fail "run as root (sudo)"
[ -f "$ENV_FILE" ] || fail "no backup settings in $ENV_FILE: run pulumi up first"
# The repository and its password (written by the node-key step), as this shell's variables only: never exported, so
# that no command of the backup but restic (below) has them in its environment, where any process of its user could
# read them (/proc/PID/environ).
# shellcheck source=/dev/null
. "$ENV_FILE"
export RESTIC_CACHE_DIR=/var/cache/lacchain-restic

# restic ARGS...: the real restic, given the repository's settings in its own environment alone.
restic() {
  if [ -n "${AWS_ACCESS_KEY_ID:-}" ]; then
    RESTIC_REPOSITORY=$RESTIC_REPOSITORY RESTIC_PASSWORD=$RESTIC_PASSWORD AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID \
      AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-} command restic "$@"
  else
    RESTIC_REPOSITORY=$RESTIC_REPOSITORY RESTIC_PASSWORD=$RESTIC_PASSWORD command restic "$@"
  fi
}


# head_block: the node's chain head as a decimal number, or nothing when it does not answer.
head_block() {
  hex_number "$(rpc_result eth_blockNumber)"
}

# release_in_use: the version of the release the current link points at, or nothing.
release_in_use() {
  local link="$RELEASES_DIR/current"
  [ -L "$link" ] && basename "$(readlink "$link")" | sed 's/^besu-//'
}

# newer A B: true when version A is newer than version B.
newer() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]; }

# take_lock: one backup or restore at a time (the timer, the start step and the operator may all ask).
# Then puts back what a cut run left: the data of a restore cut half-way, and the repository locks of a restic that
# was killed (`restic unlock` removes only stale ones: of a process gone from this machine, or older than 30 minutes;
# left there, they make restic's retention and check refuse the repository).
take_lock() {
  # In a folder only root can write: no other user can hold the lock, plant the marker, or make the open fail.
  root_run_dir "$RUN_DIR"
  exec 9>"$LOCK_FILE"
  flock -w 600 9 || fail "another backup or restore of $SERVICE_NAME is running ($LOCK_FILE)"
  put_back_data_of_cut_restore "$DATA_DIR" "$BEFORE_RESTORE_SUFFIX"
  if repository_exists && may_hold_locks; then restic unlock >/dev/null 2>&1 || true; fi
}

# may_hold_locks: false only for a repository on this machine's disk without any lock file, where restic unlock would
# find nothing to remove (each restic command opens the repository: about half a second of a core deriving its key).
may_hold_locks() {
  case "$RESTIC_REPOSITORY" in
    /*) [ -n "$(ls -A "$RESTIC_REPOSITORY/locks" 2>/dev/null)" ] ;;
    *) true ;;
  esac
}

repository_exists() {
  case "$RESTIC_REPOSITORY" in
    /*) [ -f "$RESTIC_REPOSITORY/config" ] ;;
    *) restic cat config >/dev/null 2>&1 ;;
  esac
}

# root_path DIR: true when DIR and every folder above it are real folders (no symlink) that only root can change
# (root's, and writable by nobody else unless sticky, as /tmp is); otherwise sets unsafe_parent and unsafe_reason.
root_path() {
  local dir=$1 mode
  while :; do
    if [ -e "$dir" ] || [ -L "$dir" ]; then
      mode=$(stat -c %a "$dir")
      if [ -L "$dir" ] || [ ! -d "$dir" ]; then
        unsafe_parent=$dir unsafe_reason="is not a folder but a link or a file"
        return 1
      elif [ "$(stat -c %u "$dir")" != 0 ]; then
        unsafe_parent=$dir unsafe_reason="is $(stat -c %U "$dir")'s, not root's"
        return 1
      elif [ $((8#$mode & 8#022)) -ne 0 ] && [ $((8#$mode & 8#1000)) -eq 0 ]; then
        unsafe_parent=$dir unsafe_reason="others may write in (mode $mode)"
        return 1
      fi
    fi
    [ "$dir" = / ] && return 0
    dir=$(dirname "$dir")
  done
}

# repository_folder: a repository on this machine's disk is a folder of root's only, made new (mode 0700). One that is
# there already is never re-owned nor re-moded (it could be a user's home, another program's data or install): it is
# used only when it is root's and either a repository already or empty.
repository_folder() {
  local repository=$RESTIC_REPOSITORY unsafe_parent="" unsafe_reason=""
  if ! root_path "$(dirname "$repository")"; then
    fail "the repository $repository lies under $unsafe_parent, which $unsafe_reason: a folder there could be swapped for a link to anywhere; name a folder whose parents are root's alone (lacchain:backups.repository)"
  fi
  if [ -L "$repository" ]; then
    fail "the repository $repository is a symlink: name the real folder (lacchain:backups.repository)"
  elif [ ! -e "$repository" ]; then
    install -d -m 0700 -o root -g root "$repository"
  elif [ ! -d "$repository" ]; then
    fail "the repository $repository is not a folder: name another (lacchain:backups.repository)"
  elif [ "$(stat -c %u "$repository")" != 0 ]; then
    fail "the repository folder $repository is $(stat -c %U "$repository")'s, not root's: refusing to take it over; name a new folder (lacchain:backups.repository)"
  elif [ ! -f "$repository/config" ] && [ -n "$(ls -A "$repository")" ]; then
    fail "the repository folder $repository holds other files and is not a restic repository: refusing to write the backups among them; name a new folder (lacchain:backups.repository)"
  fi
}

cmd_init() {
  case "$RESTIC_REPOSITORY" in
    /*) repository_folder ;;
  esac
  if repository_exists; then
    restic cat config >/dev/null 2>&1 \
      || fail "the repository $RESTIC_REPOSITORY exists but its password is not the stack's (lacchain:backupPassword): add the stack's with restic key add, or name a new repository"
    echo "node-backup: repository $RESTIC_REPOSITORY ready"
    return
  fi
  restic init --quiet >/dev/null || fail "cannot make the repository $RESTIC_REPOSITORY"
  echo "node-backup: made the repository $RESTIC_REPOSITORY"
}

cmd_backup() {
  local reason=$1 release head was_active=false marked_before=false tags status=0 full errors taken
  take_lock
  repository_exists || cmd_init >&2
  release=$(release_in_use)
  [ -n "$release" ] || fail "no release in use in $RELEASES_DIR: nothing to back up yet"
  [ -d "$DATA_DIR" ] || fail "no data folder $DATA_DIR: nothing to back up"
  head=$(head_block || true)
  tags="$MARK,$TAG_NODE=$NODE_NAME,$TAG_RELEASE=$release,$TAG_REASON=$reason"
  if [ -n "$head" ]; then tags="$tags,$TAG_HEAD=$head"; fi
  # A node an earlier backup stopped and, cut, never started again counts as running: this one starts it. That
  # marker is root's, in root's folder: nobody else can make a backup start a node stopped on purpose.
  if systemctl is-active --quiet "$SERVICE_NAME" || { [ -f "$STOPPED_FILE" ] && [ ! -L "$STOPPED_FILE" ]; }; then
    was_active=true
  fi
  errors=$(mktemp) || fail "cannot make a temporary file$(disk_full_hint "${TMPDIR:-/tmp}"): $SERVICE_NAME was not stopped, no backup was taken; run it again"
  # The node is stopped while its data is copied: a copy of a running database is not consistent. The marker is
  # there before the stop, so that a backup cut at any moment after it leaves it; a stop that fails takes it back
  # (unless an earlier cut backup left it): this backup stopped nothing, and the next must not start what it finds.
  echo "node-backup: stopping $SERVICE_NAME (Besu $release${head:+, head $head}) for a consistent copy" >&2
  if [ "$was_active" = true ]; then
    if [ -f "$STOPPED_FILE" ]; then marked_before=true; fi
    touch "$STOPPED_FILE"
  fi
  if ! systemctl stop "$SERVICE_NAME"; then
    if [ "$marked_before" = false ]; then rm -f "$STOPPED_FILE"; fi
    rm -f "$errors"
    fail "systemd could not stop $SERVICE_NAME (it is $(unit_state "$SERVICE_NAME")): no backup was taken; see systemctl status $SERVICE_NAME, then run it again"
  fi
  # The key is never in a backup, nor any file named like it (a temporary copy, a planted key.read).
  restic backup --json --host "$NODE_NAME" --tag "$tags" --exclude "$KEY_FILE" --exclude "$KEY_FILE*" \
    "$DATA_DIR" "$CONFIG_FILE" \
    2>"$errors" || status=$?
  cat "$errors" >&2
  # However the copy ended, the node runs again before this command ends, and answers: a backup never leaves it stopped
  # without saying so. The marker goes once the start was tried, answered or not: it stands only for a backup cut
  # before its start (which the next backup makes), never for a node that failed to start, which the operator starts
  # once the cause is fixed, and which a later stop on purpose must not see undone by the next backup.
  if [ "$was_active" = true ]; then
    if [ -z "$(start_and_wait "$SERVICE_NAME")" ]; then
      rm -f "$STOPPED_FILE"
      say_journal "$SERVICE_NAME"
      taken="no backup was taken"
      if [ "$status" = 0 ]; then taken="the backup was taken"; fi
      rm -f "$errors"
      fail "$SERVICE_NAME did not answer within $START_TIMEOUT s of being started again after the copy ($taken): see the journal above, then start it with npm run node -- start"
    fi
    rm -f "$STOPPED_FILE"
    echo "node-backup: started $SERVICE_NAME again" >&2
  fi
  if [ "$status" != 0 ]; then
    full=""
    case "$RESTIC_REPOSITORY" in /*) full=$(disk_full_hint "$RESTIC_REPOSITORY" "$errors") ;; esac
    rm -f "$errors"
    fail "restic backup failed (exit $status)$full: the node runs as before, no backup was taken"
  fi
  rm -f "$errors"
  # Retention: the newest KEEP backups of this node, and every one taken before a release change (rollback's).
  restic forget --quiet --host "$NODE_NAME" --tag "$MARK" --keep-last "$KEEP" \
    --keep-tag "$TAG_REASON=$REASON_BEFORE_CHANGE" --prune >/dev/null \
    || echo "node-backup: warning: restic forget failed: older backups were not removed" >&2
}

cmd_list() {
  repository_exists || { echo '[]'; return; }
  restic snapshots --json --host "$NODE_NAME" --tag "$MARK"
}

cmd_recorded_enode() {
  restic dump "$1" "$ENODE_FILE"
}

# restore_progress FOLDER TOTAL: prints, every 2 seconds until killed, how much of TOTAL bytes is in FOLDER.
restore_progress() {
  local folder=$1 total=$2 start=$SECONDS copied
  while sleep 2; do
    copied=$(du -sb "$folder" 2>/dev/null | cut -f1)
    printf '{"message_type":"status","seconds_elapsed":%d,"total_bytes":%d,"bytes_restored":%d}\n' \
      "$((SECONDS - start))" "$total" "${copied:-0}"
  done
}

# cleanup_restore: stops the progress lines and removes the restore's work folder.
cleanup_restore() {
  if [ -n "${progress:-}" ]; then kill "$progress" 2>/dev/null || true; fi
  if [ -n "${work:-}" ]; then rm -rf "$work"; fi
}

# swap_in_restored FOLDER: the restored FOLDER (root's, in the node home) handed to the service user, the node stopped,
# the data folder moved aside to its before-restore name (an older one removed first) and FOLDER put in its place.
swap_in_restored() {
  chown -hR "$SERVICE_USER:$(id -gn "$SERVICE_USER")" "$1"
  chmod 0750 "$1"
  systemctl stop "$SERVICE_NAME"
  rm -rf "$DATA_DIR$BEFORE_RESTORE_SUFFIX"
  if [ -e "$DATA_DIR" ]; then mv -T "$DATA_DIR" "$DATA_DIR$BEFORE_RESTORE_SUFFIX"; fi
  mv -T "$1" "$DATA_DIR"
}

cmd_restore() {
  local id=$1 release=$2 head=$3 snapshot parent restored_key key_copy total restored metadata enode expected answer
  take_lock
  [ -x "$RELEASES_DIR/besu-$release/bin/besu" ] || fail "Besu $release is not installed in $RELEASES_DIR"
  # (restic ignores the filters when a backup is named: its tags are read instead.)
  snapshot=$(restic snapshots --json "$id") || fail "no backup $id in $RESTIC_REPOSITORY"
  grep -q "\"$TAG_NODE=$NODE_NAME\"" <<<"$snapshot" || fail "backup $id is not one of node $NODE_NAME's"
  grep -q "\"$TAG_RELEASE=$release\"" <<<"$snapshot" || fail "backup $id was not taken on Besu $release"
  if [ ! -f "$KEY_FILE" ] && [ "${KEY_FROM_STDIN:-false}" != true ]; then
    if [ "${KEY_CUSTODY:-stack}" = machine ]; then
      fail "the node key $KEY_FILE is gone and is not in any backup (keyCustody machine: it lives only on the machine and in your own copy): give your copy (npm run node -- restore --key-file FILE); nothing was changed"
    fi
    fail "the node key $KEY_FILE is gone and is not in any backup: give your copy (npm run node -- restore --key-file FILE) or let pulumi up write it again (docs/operations.md); nothing was changed"
  fi
  parent=$(dirname "$DATA_DIR")
  # What a restore killed part-way left (its trap never ran): this one, under the lock, is the only restore.
  rm -rf "$parent"/.restore-*
  # Globals, for the trap that removes them however the command ends.
  work=$(mktemp -d "$parent/.restore-XXXXXX")
  progress=""
  trap cleanup_restore EXIT
  total=$(restic stats --json --mode restore-size "$id" | sed -n 's/.*"total_size":\([0-9]*\).*/\1/p')
  echo "node-backup: restoring backup $id (${total:-?} bytes) beside $DATA_DIR" >&2
  restore_progress "$work" "${total:-0}" &
  progress=$!
  restic restore --quiet "$id" --target "$work" || fail "restic restore failed: the node and its data are as before"
  kill "$progress" 2>/dev/null || true
  progress=""
  restored="$work$DATA_DIR"
  # What the backup brought back is what the service user once had in its folder: symlinks, FIFOs and names chosen to
  # be written through. Root only reads regular files there (read_plain_file) and writes nothing into it but by a
  # rename of a file it made in $work (move_into_place).
  if [ ! -d "$restored" ] || [ -L "$restored" ]; then fail "backup $id holds no $DATA_DIR"; fi
  # Never start an older Besu on a database a newer one opened (Besu records its version there from 24.3.0).
  if [ -e "$restored/$VERSION_METADATA" ]; then
    metadata=$(read_plain_file "$restored/$VERSION_METADATA" 4096 \
      | grep -o '[0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*' | head -n 1 || true)
    if [ -n "$metadata" ] && newer "$metadata" "$release"; then
      fail "the data in backup $id was opened by Besu $metadata, newer than $release: refusing to start $release on it"
    fi
  fi
  # The node's identity stays the machine's: its key is not in the backup. When the machine lost it too, the
  # operator's copy comes on standard input (checked against the backup's enode by npm run node).
  restored_key="$restored/$(basename "$KEY_FILE")"
  # The enode the restored node must answer with: the backup's record, read before anyone else can reach the folder.
  expected=$(read_plain_file "$restored/$(basename "$ENODE_FILE")" 300 | sed -n 's#^\(enode://[0-9a-f]\{128\}@[^[:space:]]*\)$#\1#p' \
    | head -n 1 || true)
  [ -n "$expected" ] || fail "backup $id holds no enode record ($ENODE_FILE) to check the restored node with: nothing was changed"
  # The key goes into a file of root's own making in the work folder (never a name inside the restored tree, which
  # the backup may have made a link), and is renamed into place.
  key_copy=$(mktemp "$work/key.XXXXXX")
  if [ -e "$KEY_FILE" ] || [ -L "$KEY_FILE" ]; then
    # The key's folder is the service user's: whatever is there when it is opened (a symlink swapped in after a
    # check, a hard link to a root-only file) must give root's rights to nobody. So it is opened once, by the service
    # user, without following a link (and without waiting on a FIFO).
    if ! read_as_service_user "$KEY_FILE" 4096 >"$key_copy" || [ ! -s "$key_copy" ]; then
      fail "the node key $KEY_FILE cannot be read as $SERVICE_USER (a link, or not that user's file): nothing was changed"
    fi
  elif [ "${KEY_FROM_STDIN:-false}" = true ]; then
    head -c 4096 >"$key_copy"
    [ -s "$key_copy" ] || fail "no node key came on standard input"
    echo "node-backup: wrote the node key from your copy" >&2
  else
    fail "the node key $KEY_FILE is not a file: nothing was changed"
  fi
  chmod 0600 "$key_copy"
  move_into_place "$key_copy" "$restored_key"
  swap_in_restored "$restored"
  if [ -f "$work$CONFIG_FILE" ] && [ ! -L "$work$CONFIG_FILE" ]; then
    chown --reference="$CONFIG_FILE" "$work$CONFIG_FILE" 2>/dev/null || true
    chmod --reference="$CONFIG_FILE" "$work$CONFIG_FILE" 2>/dev/null || true
    mv -f "$work$CONFIG_FILE" "$CONFIG_FILE"
  fi
  if [ "$(release_in_use)" != "$release" ]; then
    if [ -L "$RELEASES_DIR/current" ]; then
      ln -sfn "$(readlink "$RELEASES_DIR/current")" "$RELEASES_DIR/previous.new"
      mv -Tf "$RELEASES_DIR/previous.new" "$RELEASES_DIR/previous"
    fi
    ln -sfn "$RELEASES_DIR/besu-$release" "$RELEASES_DIR/current.new"
    mv -Tf "$RELEASES_DIR/current.new" "$RELEASES_DIR/current"
    echo "node-backup: switched the node to Besu $release, the release of the backup" >&2
  fi
  enode=$(start_and_wait "$SERVICE_NAME")
  if [ "$enode" != "$expected" ]; then
    if [ -z "$enode" ]; then say_journal "$SERVICE_NAME"; fi
    systemctl stop "$SERVICE_NAME"
    fail "the restored node answers ${enode:-nothing} but its recorded enode is $expected: stopped; the data before the restore is in $DATA_DIR$BEFORE_RESTORE_SUFFIX"
  fi
  answer=$(head_block || true)
  if [ -n "$head" ] && { [ -z "$answer" ] || [ "$answer" -lt "$head" ]; }; then
    fail "the restored node is at block ${answer:-unknown}, below the backup's $head; the data before the restore is in $DATA_DIR$BEFORE_RESTORE_SUFFIX"
  fi
  rm -rf "$DATA_DIR$BEFORE_RESTORE_SUFFIX"
  echo "node-backup: restored: $SERVICE_NAME runs Besu $release as $enode at block ${answer:-unknown}"
}

# cmd_take_in RECORD: the data of a node moved here, restored before its first start on this machine. Its key and its
# identity files (data/key, data/enode, data/nodeAddress: the enode names this machine's address) stay this machine's,
# as the node-key step wrote them; its config.toml stays this machine's too. The node is not started: the start step
# starts it and checks its enode. Once restored, RECORD becomes RECORD.taken-in, so a later start never restores again.
cmd_take_in() {
  local record=$1 id release snapshot parent restored file copy backup_path
  take_lock
  if [ -L "$record" ] || [ ! -f "$record" ] || [ "$(stat -c %u "$record")" != 0 ]; then
    fail "the move record $record is not a file of root's: refusing to restore from it"
  fi
  id=$(read_plain_file "$record" 200 | sed -n 's/^backup=\([0-9a-f]\{8,64\}\)$/\1/p' | head -n 1 || true)
  [ -n "$id" ] || fail "the move record $record names no backup (backup=ID): run npm run node -- move again"
  release=$(release_in_use)
  [ -n "$release" ] || fail "no release in use in $RELEASES_DIR: the start step switches to one first"
  snapshot=$(restic snapshots --json "$id") || fail "no backup $id in $RESTIC_REPOSITORY: run npm run node -- move again, which carries it here"
  grep -q "\"$TAG_NODE=$NODE_NAME\"" <<<"$snapshot" || fail "backup $id is not one of node $NODE_NAME's"
  grep -q "\"$TAG_RELEASE=$release\"" <<<"$snapshot" \
    || fail "backup $id was not taken on Besu $release, the release this machine starts: set the node's release to the old machine's and run pulumi up again"
  [ -s "$KEY_FILE" ] || fail "no node key in $KEY_FILE: the node-key step writes it before the start"
  parent=$(dirname "$DATA_DIR")
  rm -rf "$parent"/.restore-*
  work=$(mktemp -d "$parent/.restore-XXXXXX")
  progress=""
  trap cleanup_restore EXIT
  echo "node-backup: restoring backup $id, the node's data from its former machine, before its first start here" >&2
  restic restore --quiet "$id" --target "$work" || fail "restic restore failed: nothing was changed"
  # The data folder's path in the backup: this machine's, or the one the record names (a pod's, moved from a cluster).
  backup_path=$(read_plain_file "$record" 400 | sed -n 's#^backup-path=\(/[A-Za-z0-9._/-]*\)$#\1#p' | head -n 1 || true)
  case "$backup_path" in *..*) fail "the move record $record names a backup path with ..: run npm run node -- move again" ;; esac
  restored="$work${backup_path:-$DATA_DIR}"
  if [ ! -d "$restored" ] || [ -L "$restored" ]; then fail "backup $id holds no ${backup_path:-$DATA_DIR}"; fi
  # This machine's identity, into files of root's own making renamed into place (never written through a name the
  # backup made).
  for file in "$KEY_FILE" "$ENODE_FILE" "$NODE_ADDRESS_FILE"; do
    copy=$(mktemp "$work/identity.XXXXXX")
    if ! read_as_service_user "$file" 4096 >"$copy" || [ ! -s "$copy" ]; then
      fail "$file cannot be read as $SERVICE_USER (a link, or not that user's file): nothing was changed"
    fi
    chmod 0644 "$copy"
    if [ "$file" = "$KEY_FILE" ]; then chmod 0600 "$copy"; fi
    move_into_place "$copy" "$restored/$(basename "$file")"
  done
  swap_in_restored "$restored"
  rm -rf "$DATA_DIR$BEFORE_RESTORE_SUFFIX"
  mv -f "$record" "$record.taken-in"
  echo "node-backup: restored backup $id into $DATA_DIR"
}

# cmd_export ID: the data of backup ID as a tar stream on standard output, for a node moved to a cluster (its pod's
# data volume is filled from it before the pod's first start). The key and this machine's identity files (its enode
# and address name this machine) are left out: the pod takes its key from its Secret. Restored into a work folder
# beside the data folder, which the export never touches; the folder goes when the command ends.
cmd_export() {
  local id=$1 snapshot parent restored
  take_lock
  snapshot=$(restic snapshots --json "$id") || fail "no backup $id in $RESTIC_REPOSITORY"
  grep -q "\"$TAG_NODE=$NODE_NAME\"" <<<"$snapshot" || fail "backup $id is not one of node $NODE_NAME's"
  parent=$(dirname "$DATA_DIR")
  rm -rf "$parent"/.restore-*
  work=$(mktemp -d "$parent/.restore-XXXXXX")
  progress=""
  trap cleanup_restore EXIT
  echo "node-backup: restoring backup $id to hand its data over" >&2
  restic restore --quiet "$id" --target "$work" --exclude "$KEY_FILE" --exclude "$KEY_FILE*" \
    --exclude "$ENODE_FILE" --exclude "$NODE_ADDRESS_FILE" >&2 || fail "restic restore failed: nothing was handed over"
  restored="$work$DATA_DIR"
  if [ ! -d "$restored" ] || [ -L "$restored" ]; then fail "backup $id holds no $DATA_DIR"; fi
  tar -C "$restored" --numeric-owner -cf - . || fail "cannot read the restored data of backup $id"
}

case "${1:-}" in
  init) cmd_init ;;
  backup) cmd_backup "${2:?reason}" ;;
  list) cmd_list ;;
  recorded-enode) cmd_recorded_enode "${2:?backup id}" ;;
  restore) cmd_restore "${2:?backup id}" "${3:?release}" "${4-}" ;;
  take-in) cmd_take_in "${2:?move record}" ;;
  export) cmd_export "${2:?backup id}" ;;
  *) fail "usage: node-backup init | backup REASON | list | recorded-enode ID | restore ID RELEASE HEAD | take-in RECORD | export ID" ;;
esac

#!/usr/bin/env bash
# The start step of provisioning a remote node: switch the node to release BESU_VERSION, (re)start the service, and check that
# the node answers with the enode the program computed. Releases only move forward; the previous one is kept for
# rollback. Before switching, the step records the release in use (RELEASES_DIR/switch-record), so a run cut off
# mid-way is finished from that record, not from wherever the link was left. If the node does not come back on a new
# release, the step switches back to the recorded release and fails, unless the new release has already written to
# the data folder: then going back could corrupt the database, so it stops the node, says so and fails. Older
# releases than the previous one are removed.
# With BACKUP_BEFORE_CHANGE=true, the node's data is backed up (BACKUP_COMMAND_FILE, node stopped) before it is
# switched from one release to another: a failed backup stops the step with the node running as before.
# Parameters (environment): SERVICE_NAME, BESU_VERSION, RELEASES_DIR, DATA_DIR, EXPECTED_ENODE, RPC_PORT,
# START_TIMEOUT (seconds), CONFIG_DIGEST (changes whenever a file the node reads changes, so that this step runs and
# restarts the node), BACKUP_BEFORE_CHANGE (true|false), BACKUP_COMMAND_FILE, BACKUP_REASON, MOVE_RECORD_FILE (there
# when the node moved to this machine: the backup restored, before the start, by BACKUP_COMMAND_FILE take-in).
set -euo pipefail
: "${SERVICE_NAME:?}" "${BESU_VERSION:?}" "${RELEASES_DIR:?}" "${DATA_DIR:?}" "${EXPECTED_ENODE:?}" "${RPC_PORT:?}"
: "${START_TIMEOUT:?}" "${CONFIG_DIGEST:?}" "${BACKUP_BEFORE_CHANGE:?}" "${BACKUP_COMMAND_FILE:?}" "${BACKUP_REASON:?}"
: "${MOVE_RECORD_FILE:?}"

current_link="$RELEASES_DIR/current"
previous_link="$RELEASES_DIR/previous"
record="$RELEASES_DIR/switch-record"
target="$RELEASES_DIR/besu-$BESU_VERSION"
[ -x "$target/bin/besu" ] || fail "Besu $BESU_VERSION is not installed in $target"

# version_of DIR: the release version of a release folder.
version_of() { basename "$1" | sed 's/^besu-//'; }
# older A B: true when release A is older than release B.
older() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$1" ]; }

# switch_to DIR: points the current link at DIR atomically.
switch_to() {
  ln -sfn "$1" "$current_link.new"
  mv -Tf "$current_link.new" "$current_link"
}

# write_record PREVIOUS TARGET: records, before switching, the release in use and the one being switched to.
write_record() {
  local tmp
  tmp=$record$SIBLING_TEMP_SUFFIX
  printf 'previous=%s\ntarget=%s\n' "$1" "$2" >"$tmp"
  mv -f "$tmp" "$record"
}

# record_field NAME: a field of the switch record.
record_field() { sed -n "s/^$1=//p" "$record"; }

# database_touched: true when the data folder changed since the record's time stamp (the restart on the new release).
database_touched() {
  [ -n "$(find "$DATA_DIR" -newer "$record" -print -quit 2>/dev/null)" ]
}

# restart_and_wait: restarts the service and waits until the node answers its enode; prints it.
restart_and_wait() {
  systemctl stop "$SERVICE_NAME" || true
  if [ -f "$record" ]; then touch "$record"; fi
  start_and_wait "$SERVICE_NAME"
}

previous=""
if [ -L "$current_link" ]; then previous=$(readlink "$current_link"); fi
interrupted=false
if [ -f "$record" ] && [ ! -L "$record" ]; then
  interrupted=true
  # An earlier run was cut off while switching: the release in use before it is the recorded one.
  previous=$(record_field previous)
  from="no release"
  if [ -n "$previous" ]; then from="Besu $(version_of "$previous")"; fi
  echo "start: finishing the switch an earlier run began (from $from)"
fi
switched=false
if [ "$previous" != "$target" ]; then
  if [ -n "$previous" ] && older "$BESU_VERSION" "$(version_of "$previous")"; then
    fail "refusing to go back from Besu $(version_of "$previous") to $BESU_VERSION: a downgrade can corrupt the database"
  fi
  # The backup rollback returns to: taken on the release in use, before the new one opens the data. After a cut-off
  # switch the new release may already have opened it, so no backup is labelled with the old release then.
  if [ "$BACKUP_BEFORE_CHANGE" = true ] && [ -n "$previous" ] && [ "$interrupted" = false ] \
    && [ -n "$(ls -A "$DATA_DIR" 2>/dev/null)" ]; then
    echo "start: backing up the data of Besu $(version_of "$previous") before switching to $BESU_VERSION"
    if ! "$BACKUP_COMMAND_FILE" backup "$BACKUP_REASON" >/dev/null; then
      # The backup stops the node for its copy: say how it left it (its own message, above, says why).
      if systemctl is-active --quiet "$SERVICE_NAME"; then
        fail "the backup before the release change failed: the node runs Besu $(version_of "$previous") as before (lacchain:backups.beforeReleaseChange false upgrades without one)"
      fi
      fail "the backup before the release change failed, and the node is stopped on Besu $(version_of "$previous"): it did not come back after the backup's copy (see above); nothing was switched: fix the cause and start it with npm run node -- start, then run pulumi up again"
    fi
  fi
  rm -f "$record"
  write_record "$previous" "$target"
  switch_to "$target"
  switched=true
  echo "start: switched to Besu $BESU_VERSION${previous:+ (previous: $(version_of "$previous"))}"
fi

# A node moved to this machine (npm run node -- move): the data it had, restored before its first start here.
if [ -e "$MOVE_RECORD_FILE" ] || [ -L "$MOVE_RECORD_FILE" ]; then
  "$BACKUP_COMMAND_FILE" take-in "$MOVE_RECORD_FILE" \
    || fail "the data of the node moved here could not be restored (above): it was not started; run npm run node -- move again"
fi

systemctl daemon-reload
systemctl enable "$SERVICE_NAME" >/dev/null 2>&1
enode=$(restart_and_wait)

if [ "$enode" != "$EXPECTED_ENODE" ]; then
  if [ -z "$enode" ]; then problem="the node did not answer net_enode within $START_TIMEOUT s"; else
    problem="the node answers enode $enode but the stack's identity is $EXPECTED_ENODE"
  fi
  if [ "$switched" = true ] && [ -n "$previous" ]; then
    if database_touched; then
      say_journal "$SERVICE_NAME"
      systemctl stop "$SERVICE_NAME" || true
      fail "$problem; Besu $BESU_VERSION has already written to $DATA_DIR, so going back to Besu $(version_of "$previous") could corrupt the database: the node is stopped on Besu $BESU_VERSION. Fix the cause (journal above) and run pulumi up again, or restore the data folder from a backup before going back"
    fi
    switch_to "$previous"
    rm -f "$record"
    restart_and_wait >/dev/null || true
    fail "$problem; switched back to Besu $(version_of "$previous")"
  fi
  say_journal "$SERVICE_NAME"
  fail "$problem"
fi

if [ "$switched" = true ] && [ -n "$previous" ]; then
  ln -sfn "$previous" "$previous_link.new"
  mv -Tf "$previous_link.new" "$previous_link"
fi
rm -f "$record"
# Keep the current and the previous release only.
keep_previous=""
if [ -L "$previous_link" ]; then keep_previous=$(readlink "$previous_link"); fi
for release in "$RELEASES_DIR"/besu-*; do
  [ -d "$release" ] || continue
  if [ "$release" != "$target" ] && [ "$release" != "$keep_previous" ]; then
    rm -rf "$release"
    echo "start: removed the old release $(version_of "$release")"
  fi
done
echo "start: ok: $SERVICE_NAME runs Besu $BESU_VERSION as $enode (config $CONFIG_DIGEST)"

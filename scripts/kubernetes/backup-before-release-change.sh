#!/bin/sh
# The first init container of a cluster node's pod, before Besu starts (restic's own image): when the data volume was
# last opened by another release than RELEASE (its marker file says which), back the data up with restic, tagged with
# that release, so that `npm run node -- rollback` can return to it; then record RELEASE in the marker. The first
# start of a node (no marker yet) backs nothing up. A failed backup stops the pod here: Besu RELEASE never opens data
# that has no backup (lacchain:backups.beforeReleaseChange false starts without one).
# First of all, it refuses a data volume a restore Job was cut on while replacing its contents (RESTORE_MARKER there,
# restic-restore.sh): neither the old data nor the backup's, Besu must not open it; a restore run again puts the
# backup in place.
# Environment: as restic-backup.sh (without TAGS), plus RELEASE, MARKER, BEFORE_CHANGE (true|false), TAG_NODE,
# TAG_RELEASE, TAG_REASON, REASON, RESTORE_MARKER.
set -eu
: "${RELEASE:?}" "${MARKER:?}" "${BEFORE_CHANGE:?}" "${DATA_DIR:?}" "${NODE_NAME:?}" "${TAG_NODE:?}"
: "${TAG_RELEASE:?}" "${TAG_REASON:?}" "${REASON:?}" "${MARK:?}" "${RESTORE_MARKER:?}"

if [ -e "$DATA_DIR/$RESTORE_MARKER" ]; then
  echo "a restore of node $NODE_NAME was cut while it replaced the data volume's contents: Besu does not start on what it left; run npm run node -- restore again" >&2
  exit 1
fi

marker="$DATA_DIR/$MARKER"
previous=""
if [ -f "$marker" ]; then previous=$(cat "$marker"); fi
if [ -n "$previous" ] && [ "$previous" != "$RELEASE" ] && [ "$BEFORE_CHANGE" = true ]; then
  echo "backing up the data of Besu $previous before Besu $RELEASE opens it" >&2
  TAGS="$MARK,$TAG_NODE=$NODE_NAME,$TAG_RELEASE=$previous,$TAG_REASON=$REASON"
  export TAGS
  sh "$BACKUP_SCRIPT"
fi
printf '%s\n' "$RELEASE" >"$marker"

#!/bin/sh
# A cluster node's restore, run by restic's own image in a Job while the node's pod is stopped: restores backup
# SNAPSHOT beside the data on the data volume (mounted at DATA_DIR), checks it is the node's and was taken on
# RELEASE, then replaces the volume's contents with it. Prints JSON status lines of the same shape as restic's.
# While it replaces them (the old contents removed, the restored ones moved in), the file RESTORE_MARKER is on the
# volume: a Job cut then leaves it, and the node's pod does not start Besu on that mix (its first init container,
# backup-before-release-change.sh, refuses) until a restore runs again, from the start, to its end.
# Environment: RESTIC_REPOSITORY, RESTIC_PASSWORD, RESTIC_CACHE_DIR, DATA_DIR, NODE_NAME, SNAPSHOT, RELEASE,
# TAG_NODE, TAG_RELEASE, RESTORE_MARKER.
set -eu
: "${RESTIC_REPOSITORY:?}" "${RESTIC_PASSWORD:?}" "${DATA_DIR:?}" "${NODE_NAME:?}" "${SNAPSHOT:?}" "${RELEASE:?}"
: "${TAG_NODE:?}" "${TAG_RELEASE:?}" "${RESTORE_MARKER:?}"

snapshot=$(restic snapshots --json "$SNAPSHOT")
case "$snapshot" in *"\"$TAG_NODE=$NODE_NAME\""*) ;; *) echo "backup $SNAPSHOT is not node $NODE_NAME's" >&2; exit 1 ;; esac
case "$snapshot" in *"\"$TAG_RELEASE=$RELEASE\""*) ;; *) echo "backup $SNAPSHOT was not taken on Besu $RELEASE" >&2; exit 1 ;; esac
work="$DATA_DIR/.restore"
rm -rf "$work"
mkdir -p "$work"
total=$(restic stats --json --mode restore-size "$SNAPSHOT" | sed -n 's/.*"total_size":\([0-9]*\).*/\1/p')
start=$(date +%s)
(
  while sleep 2; do
    copied=$(du -sb "$work" 2>/dev/null | cut -f1)
    printf '{"message_type":"status","seconds_elapsed":%d,"total_bytes":%d,"bytes_restored":%d}\n' \
      "$(($(date +%s) - start))" "${total:-0}" "${copied:-0}"
  done
) &
progress=$!
restic restore --quiet "$SNAPSHOT" --target "$work" || { kill "$progress"; exit 1; }
kill "$progress" 2>/dev/null || true
marker="$DATA_DIR/$RESTORE_MARKER"
: >"$marker"
find "$DATA_DIR" -mindepth 1 -maxdepth 1 ! -name .restore ! -name "$RESTORE_MARKER" -exec rm -rf {} +
find "$work" -mindepth 1 -maxdepth 1 -exec mv {} "$DATA_DIR"/ \;
rmdir "$work"
rm -f "$marker"
echo "restored backup $SNAPSHOT (Besu $RELEASE) into the data volume" >&2

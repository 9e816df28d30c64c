#!/bin/sh
# A cluster node's backup, run by restic's own image in a Job (or a CronJob's pod) while the node's pod is stopped:
# makes the repository when it does not exist, backs the data volume up (mounted read-only at DATA_DIR) with the
# node's tags, then keeps the newest KEEP backups of the node and every one taken before a release change. Prints
# restic's JSON status lines (the progress `npm run node -- backup` shows). Exits with restic's status; with
# STATUS_FILE set, writes the status there and exits 0, so the pod's next step (starting the node again) still runs.
# Environment: RESTIC_REPOSITORY, RESTIC_PASSWORD (from the node's backup Secret), RESTIC_CACHE_DIR, DATA_DIR,
# NODE_NAME, TAGS (comma-separated), KEEP, KEEP_TAG, MARK, STATUS_FILE (optional).
set -u
: "${RESTIC_REPOSITORY:?}" "${RESTIC_PASSWORD:?}" "${DATA_DIR:?}" "${NODE_NAME:?}" "${TAGS:?}" "${KEEP:?}"
: "${KEEP_TAG:?}" "${MARK:?}"

status=0
if ! restic cat config >/dev/null 2>&1; then
  restic init >&2 || status=$?
fi
if [ "$status" = 0 ]; then
  (cd "$DATA_DIR" && restic backup --json --host "$NODE_NAME" --tag "$TAGS" .) || status=$?
fi
if [ "$status" = 0 ]; then
  restic forget --host "$NODE_NAME" --tag "$MARK" --keep-last "$KEEP" --keep-tag "$KEEP_TAG" --prune >&2 \
    || echo "restic forget failed: older backups were not removed" >&2
fi
if [ -n "${STATUS_FILE:-}" ]; then
  echo "$status" >"$STATUS_FILE"
  exit 0
fi
exit "$status"

#!/bin/bash
# The node's metrics relay (a machine's; installed by the node-files step as NODE_HOME/bin/metrics-relay and run by
# systemd as the service user, started and stopped with Besu). Besu serves its metrics on the loopback, and cannot
# also push them; the networks expect every node to push to their gateway. Every INTERVAL seconds the relay reads
# Besu's /metrics and pushes exactly that to the gateway as Besu itself would (POST to PUSH_URL, the job being the
# node's name; the first push half an interval after the start; DELETE when stopped), and writes the machine's own
# series (the data's filesystem, the node's services) with node_exporter's names to MACHINE_FILE, and its own,
# LAST_PUSH_SERIES: when the gateway last took a push (Unix seconds, 0 before the first).
set -euo pipefail
: "${BESU_METRICS_URL:?}" "${PUSH_URL:?}" "${INTERVAL:?}" "${DATA_DIR:?}" "${MACHINE_FILE:?}" "${UNITS:?}"
: "${UNIT_STATES:?}" "${LAST_PUSH_SERIES:?}"

work=$(mktemp -d)
pushing=unknown
last_push=0

stop() {
  # systemd signals every process of the service as it stops it, this DELETE's curl too when it starts in time (it
  # then went unsent: 6 stops in 30 on the test host): the curl ignores the signals (an ignored signal stays ignored
  # across exec), and its --max-time bounds it.
  trap '' TERM INT
  curl -s -o /dev/null --max-time 5 -X DELETE "$PUSH_URL" || true
  rm -rf "$work"
  exit 0
}
trap stop TERM INT

# Says a change of the push's state once, not at every interval.
push_state() {
  if [ "$1" != "$pushing" ]; then
    pushing=$1
    echo "metrics-relay: $2"
  fi
}

# The data's filesystem and the node's services, as node_exporter's filesystem and systemd collectors name them.
machine_metrics() {
  local avail size mount unit state each
  read -r avail size mount < <(df -B1 --output=avail,size,target "$DATA_DIR" | tail -n 1)
  echo '# TYPE node_filesystem_avail_bytes gauge'
  echo "node_filesystem_avail_bytes{mountpoint=\"$mount\"} $avail"
  echo '# TYPE node_filesystem_size_bytes gauge'
  echo "node_filesystem_size_bytes{mountpoint=\"$mount\"} $size"
  echo '# TYPE node_systemd_unit_state gauge'
  for unit in $UNITS; do
    state=$(systemctl is-active "$unit.service" || true)
    for each in $UNIT_STATES; do
      echo "node_systemd_unit_state{name=\"$unit.service\",state=\"$each\"} $([ "$each" = "$state" ] && echo 1 || echo 0)"
    done
  done
  echo "# TYPE $LAST_PUSH_SERIES gauge"
  echo "$LAST_PUSH_SERIES $last_push"
}

# At a fixed rate, as Besu's own push: the next push is due INTERVAL after the last one was due, however long it took.
sleep $((INTERVAL / 2)) &
wait $!
due=$SECONDS
while true; do
  if curl -sf --max-time "$INTERVAL" -H 'Host: localhost' -o "$work/besu" "$BESU_METRICS_URL"; then
    if curl -sf --max-time "$INTERVAL" -o /dev/null -H 'Content-Type: text/plain; version=0.0.4' \
      --data-binary @"$work/besu" "$PUSH_URL"; then
      last_push=$(date +%s)
      push_state ok "pushing to $PUSH_URL"
    else
      push_state failed "the network's gateway does not take the metrics ($PUSH_URL): retrying every ${INTERVAL} s"
    fi
  else
    push_state no-besu "Besu does not serve its metrics at $BESU_METRICS_URL yet: retrying every ${INTERVAL} s"
  fi
  machine_metrics >"$MACHINE_FILE.tmp" && mv -f "$MACHINE_FILE.tmp" "$MACHINE_FILE"
  due=$((due + INTERVAL))
  if [ "$due" -le "$SECONDS" ]; then due=$SECONDS; fi
  sleep $((due - SECONDS)) &
  wait $!
done

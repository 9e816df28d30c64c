#!/usr/bin/env bash
# The backups step of provisioning a remote node: install the node's backup command (BACKUP_COMMAND, made of its
# settings, scripts/remote/lib.sh and scripts/remote/node-backup.sh) as BACKUP_COMMAND_FILE, root's only; make the
# restic repository the node-key step wrote into the backup environment when it does not exist yet, and check that the
# stack's password opens it; and, when SCHEDULE_ON_CALENDAR is set, a systemd timer BACKUP_UNIT.timer that runs a
# scheduled backup then (missed runs are made up after a boot), or, when it is empty, no timer.
# Parameters (environment): BACKUP_COMMAND_FILE, BACKUP_COMMAND, BACKUP_UNIT, SCHEDULE_ON_CALENDAR (or empty),
# SERVICE_NAME.
set -euo pipefail
: "${BACKUP_COMMAND_FILE:?}" "${BACKUP_COMMAND:?}" "${BACKUP_UNIT:?}" "${SERVICE_NAME:?}"
SCHEDULE_ON_CALENDAR=${SCHEDULE_ON_CALENDAR:-}

command -v restic >/dev/null 2>&1 || fail "restic is not installed (the packages step installs it)"
write_file "$BACKUP_COMMAND_FILE" 0700 root:root "$BACKUP_COMMAND"
"$BACKUP_COMMAND_FILE" init

service_file="/etc/systemd/system/$BACKUP_UNIT.service"
timer_file="/etc/systemd/system/$BACKUP_UNIT.timer"
if [ -n "$SCHEDULE_ON_CALENDAR" ]; then
  write_file "$service_file" 0644 root:root "[Unit]
Description=Scheduled backup of the chain data of $SERVICE_NAME
After=$SERVICE_NAME.service

[Service]
Type=oneshot
ExecStart=$BACKUP_COMMAND_FILE backup scheduled"
  write_file "$timer_file" 0644 root:root "[Unit]
Description=Scheduled backups of the chain data of $SERVICE_NAME

[Timer]
OnCalendar=$SCHEDULE_ON_CALENDAR
Persistent=true
RandomizedDelaySec=600

[Install]
WantedBy=timers.target"
  systemctl daemon-reload
  systemctl enable --now "$BACKUP_UNIT.timer" >/dev/null 2>&1
  echo "backups: scheduled ($SCHEDULE_ON_CALENDAR), next: $(systemctl show -P NextElapseUSecRealtime "$BACKUP_UNIT.timer")"
else
  if [ -e "$timer_file" ]; then
    systemctl disable --now "$BACKUP_UNIT.timer" >/dev/null 2>&1 || true
    rm -f "$timer_file" "$service_file"
    systemctl daemon-reload
    echo "backups: the schedule is off: removed $BACKUP_UNIT.timer"
  fi
fi
echo "backups: ok: $BACKUP_COMMAND_FILE"

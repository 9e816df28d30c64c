#!/bin/sh
# A test failpoint in front of a command (mv, systemctl), installed on a test host only by the fault-injection harness
# (testing/cuts/cut.ts armFailpoint) as /usr/local/sbin/<command>, which root's PATH (and sudo's secure_path) finds
# before /usr/bin/<command>. It runs the real command; when its arguments are exactly those in
# /run/lacchain-failpoint, it then says so in /run/lacchain-failpoint.hit and waits, so that the harness cuts the
# caller right after that command and before anything after it.
/usr/bin/"$(basename "$0")" "$@" || exit $?
if [ -f /run/lacchain-failpoint ] && [ "$*" = "$(cat /run/lacchain-failpoint)" ]; then
  touch /run/lacchain-failpoint.hit
  sleep 600
fi

#!/bin/sh
# A test failpoint in front of mv, installed on a test host only by the fault-injection harness (testing/cuts/) as
# /usr/local/sbin/mv, which root's PATH (and sudo's secure_path) finds before /usr/bin/mv. It runs the real mv; when
# its arguments are exactly those in /run/lacchain-failpoint, it then says so in /run/lacchain-failpoint.hit and waits,
# so that the harness cuts the command right after that rename and before anything after it.
/usr/bin/mv "$@" || exit $?
if [ -f /run/lacchain-failpoint ] && [ "$*" = "$(cat /run/lacchain-failpoint)" ]; then
  touch /run/lacchain-failpoint.hit
  sleep 600
fi

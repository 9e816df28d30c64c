#!/usr/bin/env bash
# trace-signals.sh start FILE | stop — records every signal sent on this machine (the test hosts share its kernel), for
# finding what ended a step's SSH session (issue 54): the kernel's signal_generate event, all signals but the routine
# ones (SIGCHLD, SIGALRM, SIGPROF, SIGURG, SIGVTALRM, SIGWINCH), appended to FILE by a reader in the background.
# FILE's first line maps the trace's clock (seconds since boot) to the wall clock:
#   start wall=<epoch seconds> uptime=<seconds since boot>
# Each event line names the sender (task-pid), then sig=, comm= and pid= of the receiver; a program's start is a line too
# (sched_process_exec: filename=, pid=), so a pid in a signal line can be named after it ended, and so is each new
# process or thread (sched_process_fork: pid= of the parent, child_pid=), so whether a signal went to a descendant of
# its sender or to an unrelated process can be told (unrelated-signals.py). The sender's name is
# the kernel's record of that pid's name, kept for 32768 pids (saved_cmdlines_size; the default 128 gives stale names
# or <...> on a busy machine). `stop` turns the events off and ends the reader (checked to be it: a pid in a file may
# have gone to another process since). Root only; tracefs is mounted when it is not. Changes nothing else on the
# machine.
set -euo pipefail
tracing=/sys/kernel/tracing
event=$tracing/events/signal/signal_generate
exec_event=$tracing/events/sched/sched_process_exec
fork_event=$tracing/events/sched/sched_process_fork
pidfile=/run/lacchain-trace-signals.pid
usage='usage: trace-signals.sh start FILE | stop'

case "${1:-}" in
  -h | --help)
    echo "$usage"
    exit 0
    ;;
  start | stop) ;;
  *)
    echo "trace-signals.sh: unknown command '${1:-}': use start FILE or stop ($usage)" >&2
    exit 2
    ;;
esac
if [ "$(id -u)" != 0 ]; then
  echo "trace-signals.sh: must run as root (the kernel's trace is root's; you are $(id -un)): sudo bash $0 $*" >&2
  exit 2
fi

case "$1" in
  start)
    file=${2:-}
    if [ -z "$file" ]; then
      echo "trace-signals.sh: start needs the FILE to append the trace to, e.g. start /var/tmp/signals.trace ($usage)" >&2
      exit 2
    fi
    mountpoint -q "$tracing" || mount -t tracefs nodev "$tracing"
    echo 'sig != 17 && sig != 14 && sig != 27 && sig != 23 && sig != 26 && sig != 28' >"$event/filter"
    echo 8192 >"$tracing/buffer_size_kb"
    echo 32768 >"$tracing/saved_cmdlines_size"
    echo "start wall=$(date +%s.%N) uptime=$(cut -d' ' -f1 /proc/uptime)" >>"$file"
    echo 1 >"$event/enable"
    echo 1 >"$exec_event/enable"
    echo 1 >"$fork_event/enable"
    echo 1 >"$tracing/tracing_on"
    setsid cat "$tracing/trace_pipe" >>"$file" </dev/null 2>/dev/null &
    echo $! >"$pidfile"
    ;;
  stop)
    echo 0 >"$event/enable"
    echo 0 >"$exec_event/enable"
    echo 0 >"$fork_event/enable"
    if [ -f "$pidfile" ]; then
      reader=$(cat "$pidfile")
      if [ "$(tr '\0' ' ' <"/proc/$reader/cmdline" 2>/dev/null)" = "cat $tracing/trace_pipe " ]; then
        kill "$reader" 2>/dev/null || true
      fi
      rm -f "$pidfile"
    fi
    ;;
esac

#!/usr/bin/env python3
"""unrelated-signals.py TRACE [--each] — the signals that end a process (SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGTERM) sent
to a process that is neither the sender nor one of its descendants, from a trace of trace-signals.sh (issue 54).

A process signals its own children as a rule (a shell its job, a service manager its service, a timeout its command);
a signal to an unrelated process is a cut's or a stop's own kill (stop-host.sh's kill of nspawn, crash-host.sh's of
everything inside a host), or a pid kept after its process ended and used once the pid went to another process: what
would end a step's SSH session with nothing said. Printed grouped by the sender's and receiver's names and their nearest
common ancestor (`?`: born before the trace; `-`: none recorded), most frequent first; with --each, every such signal
too (trace time, signal, sender, receiver, the receiver's age in seconds). Processes born before the trace started are
not judged (their parents are unknown). Exit 0; 2 on a wrong call.
"""
import collections
import re
import signal
import sys

ENDING_SIGNALS = {1, 2, 3, 9, 15}
EVENT = re.compile(r"^\s*(.+?)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def ancestry(pid, parent):
    """pid, its parent, its parent's parent... up to the first one born before the trace."""
    chain, seen = [pid], {pid}
    while pid in parent and parent[pid] not in seen:
        pid = parent[pid]
        chain.append(pid)
        seen.add(pid)
    return chain


def unrelated(lines):
    """(time, sig, sender name, sender pid, receiver name, receiver pid, receiver's age, common ancestor's name)."""
    parent, name, born, found = {}, {}, {}, []
    for line in lines:
        match = EVENT.match(line)
        if not match:
            continue
        sender_comm, sender, time, event, rest = match.groups()
        sender, time, fields = int(sender), float(time), dict(FIELD.findall(rest))
        if event == "sched_process_fork":
            child = int(fields["child_pid"])
            parent[child], name[child], born[child] = int(fields["pid"]), fields["child_comm"], time
        elif event == "sched_process_exec":
            name[int(fields["pid"])] = fields["filename"].rsplit("/", 1)[-1]
        elif event == "signal_generate":
            sig, receiver = int(fields["sig"]), int(fields["pid"])
            if sig not in ENDING_SIGNALS or receiver == sender or receiver not in born or sender not in born:
                continue
            receivers = ancestry(receiver, parent)
            if sender in receivers:
                continue
            senders = set(ancestry(sender, parent))
            common = next((pid for pid in receivers if pid in senders), None)
            common_name = "-" if common is None else name.get(common, "?")
            found.append(
                (time, sig, name.get(sender, sender_comm), sender, name.get(receiver, fields["comm"]), receiver,
                 time - born[receiver], common_name)
            )
    return found


def main(argv):
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    options = [a for a in argv if a.startswith("-")]
    files = [a for a in argv if not a.startswith("-")]
    if len(files) != 1 or set(options) - {"--each"}:
        print(f"unrelated-signals.py: give one TRACE file and at most --each (given: {' '.join(argv) or 'nothing'}); "
              "e.g. python3 testing/host/unrelated-signals.py /var/tmp/signals.trace", file=sys.stderr)
        return 2
    try:
        with open(files[0], errors="replace") as trace:
            found = unrelated(trace)
    except OSError as error:
        print(f"unrelated-signals.py: cannot read {files[0]}: {error.strerror}; give the FILE trace-signals.sh "
              "start wrote to", file=sys.stderr)
        return 2
    groups = collections.Counter((sig, sender, receiver, common) for _, sig, sender, _, receiver, _, _, common in found)
    for (sig, sender, receiver, common), count in groups.most_common():
        print(f"{count:6d}  sig={sig:<2} {sender} -> {receiver}   (nearest common ancestor: {common})")
    if "--each" in options:
        for time, sig, sender, sender_pid, receiver, receiver_pid, age, _ in found:
            print(f"{time:.6f} sig={sig} {sender}-{sender_pid} -> {receiver}-{receiver_pid} (born {age:.3f} s before)")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when read through head
    sys.exit(main(sys.argv[1:]))

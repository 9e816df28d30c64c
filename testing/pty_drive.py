"""Drives a program in a real pseudo-terminal, as a person at a keyboard would: waits for each expected prompt,
types the answer, and prints the whole transcript. Used by the tests of the interactive `npm run init`.

Usage: python3 pty_drive.py PLAN_JSON
PLAN_JSON: {"cmd": [...], "cwd": "...", "env": {...}, "steps": [{"expect": "<regex>", "send": "<text>"}], "timeout": 60}
Exit code: the program's; 97 when an expected prompt did not come in time (the transcript says which).
"""
import json
import os
import pty
import re
import select
import sys
import time

plan = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.chdir(plan["cwd"])
    env = dict(os.environ)
    env.update(plan.get("env", {}))
    os.execvpe(plan["cmd"][0], plan["cmd"], env)

transcript = b""
deadline_per_step = plan.get("timeout", 60)


def read_some(timeout):
    global transcript
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return False
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        return None
    if not chunk:
        return None
    transcript += chunk
    return True


position = 0
for step in plan["steps"]:
    pattern = re.compile(step["expect"].encode())
    deadline = time.time() + deadline_per_step
    while True:
        match = pattern.search(transcript, position)
        if match:
            position = match.end()
            break
        if time.time() > deadline or read_some(1) is None:
            sys.stdout.write(transcript.decode(errors="replace"))
            sys.stdout.write(f"\n[pty_drive] expected {step['expect']!r} did not come\n")
            os.kill(pid, 9)
            sys.exit(97)
    os.write(fd, (step["send"] + "\r").encode())

while read_some(deadline_per_step):
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write(transcript.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))

/**
 * This machine's kernel log since a moment, for a test session that ended in a way its own output does not explain (a
 * process that crashed, `segfault at …` or `traps: …`, or one the OOM killer ended, is named there and nowhere else:
 * the test hosts share this kernel, and their journals do not get its messages).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';

/** Seconds since this machine booted: the clock of the kernel log's lines. */
export function secondsSinceBoot(): number {
  return Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
}

/** The kernel log's lines stamped at `since` (seconds since boot) or later, or why they cannot be read. */
export function kernelLinesSince(since: number): string[] {
  const dmesg = spawnSync('dmesg', [], { encoding: 'utf8', timeout: 10_000 });
  if (dmesg.status !== 0) return [`(dmesg: ${(dmesg.stderr || dmesg.error?.message || 'failed').trim()})`];
  return dmesg.stdout.split('\n').filter((line) => {
    const stamp = /^\[\s*(\d+\.\d+)\]/.exec(line);
    return stamp !== null && Number(stamp[1]) >= since;
  });
}

/**
 * The cuts themselves: a remote step's SSH connection dropped part-way, or the machine stopped hard part-way.
 */
import * as fs from 'fs';
import * as path from 'path';
import { shellQuote } from '../../core/remote/shell';
import type { TestHost } from '../host/testHost';
import { runRemoteStep, type RemoteStep } from '../replay';

/**
 * How a change is cut: its SSH connection dropped, the machine itself stopped hard (and booted again), or the disk it
 * writes to filling up while it writes (the step then fails by itself).
 */
export type CutKind = 'ssh' | 'machine' | 'disk';

/** What happened to the step: cut part-way, or it ended (with its exit status) before the moment came. */
export type CutOutcome = { cut: true } | { cut: false; code: number };

/**
 * When a step is cut: `seconds` into it, or as soon as the shell condition `when` holds on the machine (polled as root,
 * e.g. `pgrep -x dpkg` to cut while dpkg works), whichever is given.
 */
export type CutMoment = { seconds: number } | { when: string; what: string; failpoint?: string } | DiskFull;

/**
 * A disk that fills up: the folder `folder` put on a small file system of its own (a tmpfs, as a small disk) with
 * `freeKib` left free, less than the step writes there; `what` says what fills it.
 */
export interface DiskFull {
  folder: string;
  freeKib: number;
  what: string;
}

/**
 * The failpoint a cut may arm on the machine (testing/cuts/failpoint.sh as /usr/local/sbin/mv): the mv arguments it
 * waits after, and the file it says so in.
 */
export const FAILPOINT = { armed: '/run/lacchain-failpoint', hit: '/run/lacchain-failpoint.hit' } as const;

/** The commands a failpoint may stand in front of (testing/cuts/failpoint.sh). */
export type FailpointCommand = 'mv' | 'systemctl';

/**
 * Installs the failpoint in front of `command` on the machine (/usr/local/sbin/<command>) and arms it: a run of it as
 * root with exactly the arguments `args` waits right after it, saying so in FAILPOINT.hit.
 */
export async function armFailpoint(host: TestHost, command: FailpointCommand, args: string): Promise<void> {
  const installed = await host.ssh(
    `install -m 0755 /dev/stdin /usr/local/sbin/${command} && rm -f ${FAILPOINT.hit} && ` +
      `printf '%s' ${shellQuote(args)} > ${FAILPOINT.armed}`,
    { input: fs.readFileSync(path.join(__dirname, 'failpoint.sh'), 'utf8') },
  );
  if (installed.code !== 0) throw new Error(`cannot arm the failpoint: ${installed.stderr}`);
}

/** Removes the failpoint in front of `command` from the machine, disarmed (the command itself again). */
export async function removeFailpoint(host: TestHost, command: FailpointCommand): Promise<void> {
  const removed = await host.ssh(`rm -f /usr/local/sbin/${command} ${FAILPOINT.armed} ${FAILPOINT.hit}`);
  if (removed.code !== 0) throw new Error(`cannot remove the failpoint: ${removed.stderr}`);
}

/** A cut right after the rename `mv <args>` (exactly those arguments) of a command run as root. */
export function afterRename(args: string, what: string): CutMoment {
  return { when: `[ -f ${FAILPOINT.hit} ]`, what, failpoint: args };
}

/** Waits for the moment: `seconds`, or until `when` holds on the machine; earlier when `ended()` says the run ended. */
export async function untilMoment(
  host: TestHost,
  moment: Exclude<CutMoment, DiskFull>,
  ended: () => boolean,
): Promise<void> {
  if ('seconds' in moment) {
    const deadline = Date.now() + moment.seconds * 1000;
    while (!ended() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(20, Math.max(0, deadline - Date.now()))));
    }
    return;
  }
  await untilHolds(host, moment.when, ended);
}

/** How often the machine itself checks whether a cut's moment has come (seconds). */
const MOMENT_CHECK_SECONDS = 0.02;
/** How many checks one session makes before this side looks again whether the run ended. */
const MOMENT_CHECKS_PER_SESSION = 100;

/**
 * Waits until the shell condition `when` holds on the machine: true then, false when `ended()` says the run ended
 * first. The machine checks it itself every 20 ms: a check per SSH round trip missed moments shorter than the round
 * trips of a busy machine (a restart's stop, which `! systemctl is-active` sees for 0.3 to 1.3 s on an idle one, in a
 * fresh clone's run of e2cae74).
 */
export async function untilHolds(host: TestHost, when: string, ended: () => boolean): Promise<boolean> {
  const checks =
    `for _ in $(seq ${MOMENT_CHECKS_PER_SESSION}); do if { ${when}\n}; then exit 0; fi; ` +
    `sleep ${MOMENT_CHECK_SECONDS}; done; exit 1`;
  while (!ended()) {
    if ((await host.ssh(checks, { timeoutMs: 30_000 })).code === 0) return !ended();
  }
  return false;
}

/**
 * Runs `step` as the command provider does and cuts it at `moment`. An SSH cut kills this side's ssh client and every
 * process of the step user's SSH sessions on the machine at once (what a dropped connection leaves running varies; the
 * harshest case, the step stopping right there, is the one taken). A machine cut stops the whole machine hard and
 * boots it again (crash-host.sh): services the step had already started come back as systemd starts them at boot.
 */
export async function cutStep(
  host: TestHost,
  step: RemoteStep,
  moment: Exclude<CutMoment, DiskFull>,
  kind: Exclude<CutKind, 'disk'>,
): Promise<CutOutcome> {
  let ended: number | undefined;
  const running = host
    .ssh(step.create, { user: step.user, input: step.stdin, timeoutMs: 24 * 3600_000 })
    .then((result) => (ended = result.code));
  await untilMoment(host, moment, () => ended !== undefined);
  if (ended !== undefined) return { cut: false, code: ended };
  if (kind === 'machine') {
    await host.crash();
  } else {
    await killSessionsOf(host, step.user);
  }
  await running;
  return { cut: true };
}

/**
 * Kills, at once, every process of `user`'s SSH sessions on the machine (logind's sessions: the step's shell, sudo and
 * everything they started in the session), but not this command's own session. The ssh client then ends too. A session
 * that ends by itself between its listing and its kill is not an error.
 */
export async function killSessionsOf(host: TestHost, user: string): Promise<void> {
  const result = await host.ssh(
    `for s in $(loginctl list-sessions --no-legend | awk -v u='${user}' -v me="$XDG_SESSION_ID" '$1 != me && $3 == u {print $1}'); ` +
      // A session that ended meanwhile (its connection just dropped) is no failure: only one still there is.
      'do loginctl kill-session "$s" --signal=KILL 2>/dev/null || ! loginctl show-session "$s" >/dev/null 2>&1 || exit 1; done',
    { timeoutMs: 30_000 },
  );
  if (result.code !== 0) throw new Error(`cannot kill ${user}'s sessions on ${host.name}: ${result.stderr}`);
}

/** Runs steps in order as `pulumi up` runs them again; the first failure throws with its output. */
export async function rerun(host: TestHost, steps: RemoteStep[]): Promise<void> {
  for (const step of steps) {
    const result = await runRemoteStep(host, step);
    if (result.code !== 0) {
      throw new Error(`re-run of ${step.name} failed (${result.code}): ${(result.stderr || result.stdout).trim()}`);
    }
  }
}

/** K moments evenly spread inside a step of `seconds`: i/(K+1) of it, for i = 1..K. */
export function cutMoments(seconds: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => (seconds * (i + 1)) / (count + 1));
}

/**
 * Puts `disk.folder` on a tmpfs of its own holding what it held, sized to leave `disk.freeKib` free (its owner and mode
 * kept); returns the names the folder held (what a failed step must leave there again).
 */
export async function fillDisk(host: TestHost, disk: DiskFull): Promise<string[]> {
  const dir = disk.folder;
  const aside = `${dir}.lacchain-cut-aside`;
  const result = await host.ssh(
    [
      'set -euo pipefail',
      `mode=$(stat -c %a ${dir}); uid=$(stat -c %u ${dir}); gid=$(stat -c %g ${dir})`,
      `used=$(du -sk ${dir} | cut -f1)`,
      `mv -T ${dir} ${aside}`,
      `mkdir ${dir}`,
      `mount -t tmpfs -o "size=$((used * 2 + 1024))k,mode=$mode,uid=$uid,gid=$gid" lacchain-cut-disk ${dir}`,
      `cp -a ${aside}/. ${dir}/`,
      `rm -rf ${aside}`,
      `used=$(df -k --output=used ${dir} | tail -n 1)`,
      `mount -o remount,size=$((used + ${disk.freeKib}))k ${dir}`,
      `ls -A ${dir}`,
    ].join('\n'),
    { timeoutMs: 60_000 },
  );
  if (result.code !== 0) throw new Error(`cannot fill the disk of ${dir} on ${host.name}: ${result.stderr.trim()}`);
  return result.stdout.split('\n').filter(Boolean);
}

/** What the operator does about a full disk: makes room (here: the folder's small file system grown by 1 GiB). */
export async function makeRoom(host: TestHost, disk: DiskFull): Promise<void> {
  const result = await host.ssh(
    `size=$(df -k --output=size ${disk.folder} | tail -n 1) && mount -o remount,size=$((size + 1048576))k ${disk.folder}`,
    { timeoutMs: 60_000 },
  );
  if (result.code !== 0) throw new Error(`cannot make room on ${disk.folder}: ${result.stderr.trim()}`);
}

/** What a failed step left in the full folder that was not there before it (names, without the folder). */
export async function leftOnFullDisk(host: TestHost, disk: DiskFull, before: string[]): Promise<string[]> {
  const result = await host.ssh(`ls -A ${disk.folder}`, { timeoutMs: 60_000 });
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .filter((name) => !before.includes(name));
}

/**
 * Every command a root operation starts on a test host, as the kernel saw it start: `strace -f` of execve and execveat
 * with each command's arguments and whole environment (-v), and of the forks and user switches between them (so each
 * command's user is known), for the hostile-user suite's check that no secret reaches a process it does not belong
 * to. A process's environment is what it was started with: any process of the same user can read it
 * (/proc/PID/environ) for as long as it runs, so a secret there is a secret shared with that user. What systemd starts
 * (the node, its companions) is no child of the operation: exposureScript reads those processes, and every unit's
 * environment, after it.
 */
import * as path from 'path';
import { shellQuote } from '../core/remote/shell';

/** The commands that may hold a secret in their environment when root runs them, and the variables they read it from. */
const SECRET_READERS: Record<string, readonly string[]> = {
  // restic reads the repository's password and S3 keys only from its environment (scripts/remote/node-backup.sh).
  restic: ['RESTIC_PASSWORD', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'],
};

/** The system calls traced: the starts of commands, the forks that make their processes, the switches of user. */
const TRACED = 'execve,execveat,clone,clone3,fork,vfork,setuid,setreuid,setresuid';

/** `commandLine` run under strace, every command it starts (and theirs) written to `traceFile`. */
export function tracedCommand(commandLine: string, traceFile: string): string {
  return `strace -f -qq -v -s 65536 -e trace=${TRACED} -e signal=none -o ${shellQuote(traceFile)} -- bash -c ${shellQuote(commandLine)}`;
}

/** One command a trace saw start. */
export interface StartedCommand {
  program: string;
  args: string;
  environment: string;
  /** The effective user id of the process that started it (0 for the traced command's own), when the trace tells. */
  uid?: number;
}

/** The effective uid a successful set*uid call with `args` leaves, or undefined when it leaves it as it was. */
function uidSet(call: string, args: string): number | undefined {
  const values = args.split(',').map((value) => Number(value.trim()));
  const effective = call === 'setuid' ? values[0] : values[1];
  return Number.isInteger(effective) && effective >= 0 ? effective : undefined;
}

/**
 * The commands a trace saw start (each execve and execveat, whether it found its program or not), with the user
 * each ran as: the traced command's own process is root's, a fork's is its parent's, a set*uid changes it.
 */
export function startedCommands(trace: string): StartedCommand[] {
  const lines = trace.split('\n').flatMap((line) => {
    const at = /^(\d+) +(.*)$/.exec(line);
    return at ? [{ pid: Number(at[1]), text: at[2] }] : [];
  });
  // Each fork's parent, first: a child's own lines may come before the line where its parent's fork returns.
  const parents = new Map<number, number>();
  for (const { pid, text } of lines) {
    const forked = /^(?:(?:clone3?|v?fork)\(.*|<\.\.\. (?:clone3?|v?fork) resumed>.*) = (\d+)$/.exec(text);
    if (forked) parents.set(Number(forked[1]), pid);
  }
  const uids = new Map<number, number>();
  /** The set*uid call a process began and has not finished (strace splits a call another process interrupts). */
  const pending = new Map<number, { call: string; args: string }>();
  const started: StartedCommand[] = [];
  for (const { pid, text } of lines) {
    if (uids.size === 0) uids.set(pid, 0);
    const parent = parents.get(pid);
    if (!uids.has(pid) && parent !== undefined && uids.has(parent)) uids.set(pid, uids.get(parent)!);
    const exec = /^execve\("([^"]*)", \[(.*)\], \[(.*)\]/.exec(text);
    const execAt = /^execveat\([^,]*, "([^"]*)", \[(.*)\], \[(.*)\], [^\]]*$/.exec(text);
    const found = exec ?? execAt;
    if (found) {
      started.push({ program: found[1], args: found[2], environment: found[3], uid: uids.get(pid) });
      continue;
    }
    const setting = /^(setuid|setreuid|setresuid)\(([^)<]*)/.exec(text);
    if (setting) pending.set(pid, { call: setting[1], args: setting[2] });
    const call = setting
      ? pending.get(pid)
      : /^<\.\.\. set(?:res|re)?uid resumed>/.test(text)
        ? pending.get(pid)
        : undefined;
    if (call && /\) = 0$/.test(text)) {
      const uid = uidSet(call.call, call.args);
      if (uid !== undefined) uids.set(pid, uid);
      pending.delete(pid);
    }
  }
  return started;
}

/**
 * Where a trace shows one of `secrets`: in any command's arguments (which every user of the machine can read), or in
 * its environment, except a secret reader's own variables when root runs it; one line each, naming the command and
 * where.
 */
export function secretsShown(trace: string, secrets: readonly string[]): string[] {
  return startedCommands(trace).flatMap((command) => {
    const readerVariables = command.uid === 0 ? (SECRET_READERS[path.basename(command.program)] ?? []) : [];
    const variables = command.environment.split('", "').map((entry) => entry.replace(/^"|"$/g, ''));
    return secrets.flatMap((secret) => [
      ...(command.args.includes(secret) ? [`${command.program}: a secret in its arguments`] : []),
      ...variables
        .filter((variable) => variable.includes(secret))
        .filter((variable) => !readerVariables.includes(variable.split('=')[0]))
        .map((variable) => `${command.program}: a secret in its environment (${variable.split('=')[0]})`),
    ]);
  });
}

/** The programs (their file names) a trace saw started: proof that it followed the operation's children. */
export function programsStarted(trace: string): string[] {
  return [...new Set(startedCommands(trace).map((command) => path.basename(command.program)))];
}

/**
 * A root shell script printing what systemd's side shows that a trace of an operation cannot: the environment and
 * command line of every process of `users` (`== PID <pid>` before each), and every loaded unit's Environment= and
 * EnvironmentFiles= (`== UNIT <name>`), and systemd's own environment for the units it starts.
 */
export function exposureScript(users: readonly string[]): string {
  return [
    `for user in ${users.map(shellQuote).join(' ')}; do`,
    '  for pid in $(pgrep -u "$user" || true); do',
    '    echo "== PID $pid"',
    `    tr '\\0' '\\n' <"/proc/$pid/environ" 2>/dev/null || true`,
    `    tr '\\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true`,
    '    echo',
    '  done',
    'done',
    "systemctl list-units --all --no-legend --plain --full | awk '{print $1}' | while read -r unit; do",
    '  echo "== UNIT $unit"',
    '  systemctl show --property=Environment,EnvironmentFiles -- "$unit" 2>/dev/null || true',
    'done',
    'echo "== SYSTEMD"',
    'systemctl show-environment',
  ].join('\n');
}

/** Where exposureScript's output shows one of `secrets`: the process or unit of each, one line each. */
export function secretsExposed(output: string, secrets: readonly string[]): string[] {
  let where = '';
  const found: string[] = [];
  for (const line of output.split('\n')) {
    if (line.startsWith('== ')) {
      where = line.slice(3);
      continue;
    }
    for (const secret of secrets) if (line.includes(secret)) found.push(`${where}: a secret (${line.split('=')[0]})`);
  }
  return [...new Set(found)];
}

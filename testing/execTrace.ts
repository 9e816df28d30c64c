/**
 * Every command a root operation starts on a test host, as the kernel saw it start: `strace -f -e trace=execve` with
 * each command's arguments and whole environment (-v), for the hostile-user suite's check that no secret reaches a
 * process it does not belong to. A process's environment is what it was started with: any process of the same user
 * can read it (/proc/PID/environ) for as long as it runs, so a secret there is a secret shared with that user.
 */
import * as path from 'path';
import { shellQuote } from '../core/remote/shell';

/** The commands that may hold a secret in their environment, and the variables they read it from. */
const SECRET_READERS: Record<string, readonly string[]> = {
  // restic reads the repository's password and S3 keys only from its environment (scripts/remote/node-backup.sh).
  restic: ['RESTIC_PASSWORD', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'],
};

/** `commandLine` run under strace, every command it starts (and theirs) written to `traceFile`. */
export function tracedCommand(commandLine: string, traceFile: string): string {
  return `strace -f -qq -v -s 65536 -e trace=execve -e signal=none -o ${shellQuote(traceFile)} -- bash -c ${shellQuote(commandLine)}`;
}

/** One command a trace saw start. */
export interface StartedCommand {
  program: string;
  args: string;
  environment: string;
}

/** The commands a trace saw start (each execve, whether it found its program or not). */
export function startedCommands(trace: string): StartedCommand[] {
  return trace.split('\n').flatMap((line) => {
    const match = /execve\("([^"]*)", \[(.*)\], \[(.*)\]/.exec(line);
    return match ? [{ program: match[1], args: match[2], environment: match[3] }] : [];
  });
}

/**
 * Where a trace shows one of `secrets`: in any command's arguments (which every user of the machine can read), or in
 * its environment, except a secret reader's own variables; one line each, naming the command and where.
 */
export function secretsShown(trace: string, secrets: readonly string[]): string[] {
  return startedCommands(trace).flatMap((command) => {
    const readerVariables = SECRET_READERS[path.basename(command.program)] ?? [];
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

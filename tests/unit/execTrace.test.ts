/**
 * The reading of an strace trace of execve calls (testing/execTrace.ts), by which the hostile-user suite finds a
 * secret in a command's arguments or environment: made sure to find what it looks for, on lines as strace writes them.
 */
import { programsStarted, secretsExposed, secretsShown, startedCommands } from '../../testing/execTrace';

const SECRET = 'a1b2c3d4e5f6';
const line = (program: string, args: string[], env: string[]) =>
  `4242 execve("${program}", [${args.map((a) => `"${a}"`).join(', ')}], [${env.map((e) => `"${e}"`).join(', ')}]) = 0`;

describe('the secrets a trace of the commands started shows', () => {
  it('reads each command, its arguments and its environment, finished or not', () => {
    const unfinished = `${line('/usr/sbin/runuser', ['runuser', '-u', 'besu'], ['PATH=/usr/bin'])} <unfinished ...>`;
    expect(startedCommands(`${unfinished}\n4242 <... execve resumed>) = 0\n4243 +++ exited with 0 +++`)).toEqual([
      { program: '/usr/sbin/runuser', args: '"runuser", "-u", "besu"', environment: '"PATH=/usr/bin"', uid: 0 },
    ]);
  });

  it('finds a secret in any environment, or any arguments, naming the command and the variable', () => {
    const trace = [
      line('/usr/bin/dd', ['dd', 'if=/opt/lacchain/data/key'], ['PATH=/usr/bin', `BACKUP_PASSWORD=${SECRET}`]),
      line('/usr/bin/curl', ['curl', `--data=${SECRET}`], ['PATH=/usr/bin']),
      line('/usr/bin/restic', ['restic', 'backup'], [`RESTIC_PASSWORD=${SECRET}`, `NODE_KEY=${SECRET}`]),
    ].join('\n');
    expect(secretsShown(trace, [SECRET])).toEqual([
      '/usr/bin/dd: a secret in its environment (BACKUP_PASSWORD)',
      '/usr/bin/curl: a secret in its arguments',
      '/usr/bin/restic: a secret in its environment (NODE_KEY)',
    ]);
  });

  it("lets restic have the repository's password and keys in its own environment, and nothing else", () => {
    const trace = line('/usr/bin/restic', ['restic', 'snapshots'], [`RESTIC_PASSWORD=${SECRET}`, 'A=b']);
    expect(secretsShown(trace, [SECRET])).toEqual([]);
    expect(secretsShown(line('/usr/bin/env', ['env'], [`RESTIC_PASSWORD=${SECRET}`]), [SECRET])).toEqual([
      '/usr/bin/env: a secret in its environment (RESTIC_PASSWORD)',
    ]);
  });
});

describe('the user each command of a trace runs as', () => {
  const exec = (pid: number, program: string, env: string[] = []) =>
    `${pid} execve("${program}", ["${program}"], [${env.map((e) => `"${e}"`).join(', ')}]) = 0`;

  it("follows forks (even when the child's lines come first) and user switches, and reads execveat", () => {
    const trace = [
      exec(100, '/usr/bin/bash'),
      '100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD <unfinished ...>',
      exec(101, '/usr/sbin/runuser'),
      '100 <... clone resumed>, child_tidptr=0x7f) = 101',
      '101 clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x7f, stack_size=0x9000}, 88) = 102',
      '102 setuid(1000 <unfinished ...>',
      '101 wait4(102,  <unfinished ...>',
      '102 <... setuid resumed>) = 0',
      exec(102, '/usr/bin/restic', [`RESTIC_PASSWORD=${SECRET}`]),
      `101 execveat(3, "", ["fexecve"], ["A=${SECRET}"], AT_EMPTY_PATH) = 0`,
      '100 vfork() = 103',
      exec(103, '/usr/bin/restic', [`RESTIC_PASSWORD=${SECRET}`]),
    ].join('\n');
    expect(startedCommands(trace).map((c) => [c.program, c.uid])).toEqual([
      ['/usr/bin/bash', 0],
      ['/usr/sbin/runuser', 0],
      ['/usr/bin/restic', 1000],
      ['', 0],
      ['/usr/bin/restic', 0],
    ]);
    // restic may hold the repository's password only when root runs it; an execveat is read as an execve.
    expect(secretsShown(trace, [SECRET])).toEqual([
      '/usr/bin/restic: a secret in its environment (RESTIC_PASSWORD)',
      ': a secret in its environment (A)',
    ]);
    expect(programsStarted(trace)).toEqual(['bash', 'runuser', 'restic', '']);
  });
});

describe("what systemd's side shows (exposureScript's output)", () => {
  it('names the process or unit where a secret is, and finds none where there is none', () => {
    const output = [
      '== PID 4242',
      'PATH=/usr/bin',
      `BACKUP_PASSWORD=${SECRET}`,
      '/usr/bin/python3 /opt/lacchain/bin/rpc-standin.py ',
      '== UNIT besu.service',
      `Environment=A=b TOKEN=${SECRET}`,
      'EnvironmentFiles=',
      '== UNIT ssh.service',
      'Environment=',
      '== SYSTEMD',
      'LANG=C.UTF-8',
    ].join('\n');
    expect(secretsExposed(output, [SECRET])).toEqual([
      'PID 4242: a secret (BACKUP_PASSWORD)',
      'UNIT besu.service: a secret (Environment)',
    ]);
    expect(secretsExposed(output, ['nothing-like-it'])).toEqual([]);
  });
});

/**
 * The reading of an strace trace of execve calls (testing/execTrace.ts), by which the hostile-user suite finds a
 * secret in a command's arguments or environment: made sure to find what it looks for, on lines as strace writes them.
 */
import { secretsShown, startedCommands } from '../../testing/execTrace';

const SECRET = 'a1b2c3d4e5f6';
const line = (program: string, args: string[], env: string[]) =>
  `4242 execve("${program}", [${args.map((a) => `"${a}"`).join(', ')}], [${env.map((e) => `"${e}"`).join(', ')}]) = 0`;

describe('the secrets a trace of the commands started shows', () => {
  it('reads each command, its arguments and its environment, finished or not', () => {
    const unfinished = `${line('/usr/sbin/runuser', ['runuser', '-u', 'besu'], ['PATH=/usr/bin'])} <unfinished ...>`;
    expect(startedCommands(`${unfinished}\n4242 <... execve resumed>) = 0\n4243 +++ exited with 0 +++`)).toEqual([
      { program: '/usr/sbin/runuser', args: '"runuser", "-u", "besu"', environment: '"PATH=/usr/bin"' },
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

/**
 * A new system user with a fresh home folder, as a newcomer's machine has one (tests/cli: the README's set-up and the
 * newcomer's walk run as such a user). Needs root.
 */
import { spawnSync } from 'child_process';

/** A new user named `<prefix><digits>`, removed with its home folder by `remove`. */
export function newUser(prefix: string): { name: string; home: string; remove(): void } {
  const name = `${prefix}${process.pid % 10000}${Math.floor(Math.random() * 1000)}`;
  const made = spawnSync('useradd', ['--create-home', '--shell', '/bin/bash', name], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`useradd failed: ${made.stderr}`);
  const home = spawnSync('getent', ['passwd', name], { encoding: 'utf8' }).stdout.split(':')[5];
  return { name, home, remove: () => spawnSync('userdel', ['--remove', name]) };
}

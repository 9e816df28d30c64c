/**
 * The node's backup command (scripts/remote/node-backup.sh as the backups step installs it), run here as root against
 * throwaway folders: systemd, restic and the node's RPC are stand-ins (a PATH of small scripts), everything else is the
 * real command. The end-to-end suites run it on real hosts with the real restic.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { backupCommandText, nodeBackupSettings } from '../../core/remote/backups';
import { layoutNode } from '../../testing/nodeLayout';
import { workFolder } from '../../testing/workFolder';

const work = workFolder('lacchain-node-backup-');
const asRoot = process.getuid?.() === 0;
const maybe = asRoot || process.env.CI === 'true' ? it : it.skip;
if (!asRoot && process.env.CI !== 'true')
  console.log('node-backup tests skipped: they run as root (the command refuses otherwise)');

let machines = 0;

/**
 * A machine's folders for one node, its backup command and the stand-ins: systemctl records its calls (a file `down`
 * says the service is stopped; STOP_FAILS makes `stop` fail), restic records its calls, curl answers as the node does
 * while it runs (the head and the enode; ANSWER replaces the whole answer).
 */
function machine() {
  const root = path.join(work, `m${++machines}`);
  const bin = path.join(root, 'bin');
  const runDir = path.join(root, 'run');
  const releases = path.join(root, 'releases');
  const data = path.join(root, 'data');
  const repository = path.join(root, 'repository');
  for (const dir of [bin, releases, path.join(releases, 'besu-25.1.0'), data, repository]) {
    fs.mkdirSync(dir, { recursive: true });
  }
  fs.symlinkSync(path.join(releases, 'besu-25.1.0'), path.join(releases, 'current'));
  fs.writeFileSync(path.join(repository, 'config'), 'x');
  const envFile = path.join(root, 'backup.env');
  fs.writeFileSync(envFile, `RESTIC_REPOSITORY=${repository}\nRESTIC_PASSWORD=test-password\n`, { mode: 0o600 });
  const script = (name: string, lines: string[]) =>
    fs.writeFileSync(path.join(bin, name), ['#!/usr/bin/env bash', ...lines, ''].join('\n'), { mode: 0o755 });
  script('systemctl', [
    `echo "$*" >>"${root}/systemctl.log"`,
    'case "$1" in',
    `  stop) [ -z "\${STOP_FAILS:-}" ] || { echo "Failed to stop besu.service: Access denied" >&2; exit 1; }; touch "${root}/down" ;;`,
    `  start) rm -f "${root}/down" ;;`,
    `  is-active) [ ! -e "${root}/down" ] || exit 3 ;;`,
    '  is-failed) exit 1 ;;',
    '  show) echo active ;;',
    'esac',
    'exit 0',
  ]);
  script('restic', [`echo "$*" >>"${root}/restic.log"`, 'exit 0']);
  script('journalctl', ['exit 0']);
  script('curl', [
    `[ ! -e "${root}/down" ] || exit 7`,
    'if [ -n "${ANSWER:-}" ]; then printf "%s" "$ANSWER"; exit 0; fi',
    'case "$*" in',
    '  *eth_blockNumber*) echo \'{"jsonrpc":"2.0","id":1,"result":"0x10"}\' ;;',
    '  *) echo \'{"jsonrpc":"2.0","id":1,"result":"enode://ab@190.113.0.1:60606"}\' ;;',
    'esac',
  ]);
  const settings = {
    ...nodeBackupSettings(layoutNode()),
    SERVICE_NAME: 'besu',
    DATA_DIR: data,
    RELEASES_DIR: releases,
    ENV_FILE: envFile,
    RUN_DIR: runDir,
    LOCK_FILE: path.join(runDir, 'besu-backup.lock'),
    STOPPED_FILE: path.join(runDir, 'besu-backup.node-stopped'),
    START_TIMEOUT: '5',
  };
  const command = path.join(root, 'node-backup');
  fs.writeFileSync(command, backupCommandText('n', settings), { mode: 0o700 });
  const run = (args: string[], env: Record<string, string> = {}) => {
    const result = spawnSync(command, args, {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ...env },
      timeout: 60_000,
    });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const read = (name: string) => {
    const file = path.join(root, name);
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  };
  return { root, run, read, marker: settings.STOPPED_FILE, runDir, repository };
}

describe("a backup's stopped-node marker", () => {
  maybe('is gone after a backup that stopped the node and started it again', () => {
    const m = machine();
    const result = m.run(['backup', 'manual']);
    expect(result.stderr).toContain('started besu again');
    expect(result.code).toBe(0);
    expect(m.read('systemctl.log')).toMatch(/stop besu[\s\S]*start besu/);
    expect(fs.existsSync(m.marker)).toBe(false);
  });

  maybe('is not left when systemd refuses the stop: the backup says so and a later backup starts nothing', () => {
    const m = machine();
    const result = m.run(['backup', 'manual'], { STOP_FAILS: '1' });
    expect(result.code).not.toBe(0);
    const last = result.stderr.trim().split('\n').pop();
    expect(last).toMatch(/^node-backup: systemd could not stop besu .*no backup was taken/);
    expect(fs.existsSync(m.marker)).toBe(false);
    expect(m.read('restic.log')).not.toContain('backup');
  });

  maybe('is not made when the temporary file cannot be, and the node is not stopped', () => {
    const m = machine();
    const result = m.run(['backup', 'manual'], { TMPDIR: path.join(m.root, 'no-such-folder') });
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split('\n').pop()).toMatch(
      /^node-backup: cannot make a temporary file.*besu was not stopped, no backup was taken/,
    );
    expect(fs.existsSync(m.marker)).toBe(false);
    expect(m.read('systemctl.log')).not.toContain('stop besu');
  });

  maybe(
    "an earlier cut backup's marker stays when this one's stop fails (the node it stopped is still to start)",
    () => {
      const m = machine();
      fs.mkdirSync(m.runDir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(m.marker, '');
      fs.writeFileSync(path.join(m.root, 'down'), '');
      const result = m.run(['backup', 'manual'], { STOP_FAILS: '1' });
      expect(result.code).not.toBe(0);
      expect(fs.existsSync(m.marker)).toBe(true);
    },
  );
});

describe("a repository's stale locks", () => {
  maybe(
    'on this machine: restic unlock runs only when a lock file is there (each restic opening costs a key derivation)',
    () => {
      const m = machine();
      expect(m.run(['backup', 'manual']).code).toBe(0);
      expect(m.read('restic.log')).not.toMatch(/^unlock/m);
      // A lock a killed restic left (restic keeps its locks in the repository's locks folder).
      fs.mkdirSync(path.join(m.repository, 'locks'), { recursive: true });
      fs.writeFileSync(path.join(m.repository, 'locks', 'a'.repeat(64)), 'x');
      expect(m.run(['backup', 'manual']).code).toBe(0);
      expect(m.read('restic.log')).toMatch(/^unlock\n(.*\n)*backup /m);
    },
  );
});

/**
 * The remote scripts' own safety rules, run here with bash against throwaway folders (the end-to-end suite runs them
 * on a real host): a cut-off step runs nothing, the release step checks the archive's digest before unpacking and
 * fetches over https or file: only, and the start step switches from its record and never goes back once the new
 * release has written to the data folder. systemctl and the node's RPC are stand-ins here (a PATH of small scripts);
 * everything else is the real script.
 */
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { MISSING_KEY_EXIT_CODE, MISSING_KEY_EXIT_VARIABLE } from '../../core/catalog/remote';
import { stepCommand, stepInput } from '../../core/remote/shell';
import { remoteStepInput } from '../../testing/remoteStep';
import { PROJECT_DIR } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

const work = workFolder('lacchain-scripts-');

let folders = 0;
const folder = (name: string) => {
  const dir = path.join(work, `${name}-${++folders}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
};

/** Runs a step as the command provider does: the step's command (as root), its input on stdin. */
function runStep(input: string, env: Record<string, string> = {}) {
  const result = spawnSync('sh', ['-c', stepCommand('root')], {
    input,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('a step whose input is cut off', () => {
  const marker = path.join(work, 'ran');
  const body = `#!/usr/bin/env bash
set -euo pipefail
echo first >>"$MARKER"
for i in 1 2 3; do
  echo "line $i" >>"$MARKER"
done
echo last >>"$MARKER"
`;
  const input = stepInput('lacchain-besu-node: step 1/1 (test) of node n', { MARKER: marker }, body);

  beforeEach(() => fs.rmSync(marker, { force: true }));

  it('runs whole when its input arrives whole', () => {
    expect(runStep(input).code).toBe(0);
    expect(fs.readFileSync(marker, 'utf8')).toBe('first\nline 1\nline 2\nline 3\nlast\n');
  });

  it.each([0, 0.1, 0.2, 0.5, 0.8, 0.95, 0.99])('runs nothing when only %p of its input arrives', (share) => {
    const result = runStep(input.slice(0, Math.floor(input.length * share)));
    expect(result.code).toBe(75);
    expect(result.stderr).toContain('the step arrived cut off: nothing was run');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('runs nothing of a cut-off group even when bash reads it directly', () => {
    const cut = input.slice(0, input.lastIndexOf('}'));
    const result = spawnSync('bash', ['-s'], { input: cut, encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

/** A tar.gz holding besu-<version>/bin/besu. */
function releaseArchive(version: string): { file: string; sha256: string } {
  const dir = folder('archive');
  fs.mkdirSync(path.join(dir, `besu-${version}`, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(dir, `besu-${version}`, 'bin', 'besu'), '#!/bin/sh\necho besu\n', { mode: 0o755 });
  const file = path.join(dir, `besu-${version}.tar.gz`);
  const tar = spawnSync('tar', ['-czf', file, '-C', dir, `besu-${version}`]);
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return { file, sha256: createHash('sha256').update(fs.readFileSync(file)).digest('hex') };
}

const asRoot = process.getuid?.() === 0;
if (!asRoot) console.warn('release step tests skipped: they need root (the step hands the release to root)');
(asRoot ? describe : describe.skip)('the release step', () => {
  const release = (env: Record<string, string>) => runStep(remoteStepInput('release', env));

  it('unpacks an archive whose SHA-256 is the pinned one', () => {
    const { file, sha256 } = releaseArchive('9.9.1');
    const releases = path.join(folder('home'), 'releases');
    const result = release({
      BESU_VERSION: '9.9.1',
      RELEASE_URL: `file://${file}`,
      RELEASE_SHA256: sha256,
      RELEASES_DIR: releases,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(fs.existsSync(path.join(releases, 'besu-9.9.1', 'bin', 'besu'))).toBe(true);
    expect(fs.readdirSync(releases)).toEqual(['besu-9.9.1']);
  });

  it('refuses an archive with another digest, shows both, and leaves the machine as it was', () => {
    const { file, sha256 } = releaseArchive('9.9.2');
    const home = folder('home');
    const releases = path.join(home, 'releases');
    const pinned = 'ab'.repeat(32);
    const result = release({
      BESU_VERSION: '9.9.2',
      RELEASE_URL: `file://${file}`,
      RELEASE_SHA256: pinned,
      RELEASES_DIR: releases,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`has sha256 ${sha256}, but Besu 9.9.2 must have ${pinned}`);
    expect(result.stderr).toContain('nothing changed');
    expect(fs.readdirSync(home)).toEqual([]);
  });

  it('refuses a plain http URL before downloading anything', () => {
    const releases = path.join(folder('home'), 'releases');
    const result = release({
      BESU_VERSION: '9.9.3',
      RELEASE_URL: 'http://127.0.0.1:9/besu-9.9.3.tar.gz',
      RELEASE_SHA256: 'ab'.repeat(32),
      RELEASES_DIR: releases,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /refusing http:\/\/127\.0\.0\.1:9\/besu-9\.9\.3\.tar\.gz: Besu 9\.9\.3 comes over https:/,
    );
    expect(fs.existsSync(releases)).toBe(false);
  });

  it("tries a release's sources in order: the pinned digest decides, and it says which served it", () => {
    const { file, sha256 } = releaseArchive('9.9.4');
    const other = releaseArchive('9.9.4-other');
    const releases = path.join(folder('home'), 'releases');
    const result = release({
      BESU_VERSION: '9.9.4',
      RELEASE_URL: `file://${other.file}`,
      RELEASE_FALLBACK_URLS: `file://${path.join(work, 'no-such-archive.tar.gz')} file://${file}`,
      RELEASE_SHA256: sha256,
      RELEASES_DIR: releases,
    });
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toContain(
      `release: Besu 9.9.4 served by file://${file} (sha256 ${sha256}, the pinned digest)`,
    );
    expect(result.stdout).toContain(`(sha256 ${sha256}, from file://${file}) unpacked in ${releases}/besu-9.9.4`);
    expect(fs.existsSync(path.join(releases, 'besu-9.9.4', 'bin', 'besu'))).toBe(true);
  });

  it('stops when no source serves the pinned digest, naming what each gave, and leaves the machine as it was', () => {
    const other = releaseArchive('9.9.5');
    const home = folder('home');
    const missing = `file://${path.join(work, 'no-such-archive.tar.gz')}`;
    const pinned = 'cd'.repeat(32);
    const result = release({
      BESU_VERSION: '9.9.5',
      RELEASE_URL: `file://${other.file}`,
      RELEASE_FALLBACK_URLS: `${missing} http://127.0.0.1:9/besu-9.9.5.tar.gz`,
      RELEASE_SHA256: pinned,
      RELEASES_DIR: path.join(home, 'releases'),
    });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^release: no source served Besu 9\\.9\\.5 with sha256 ${pinned} \\(file://\\S+/besu-9\\.9\\.5\\.tar\\.gz: sha256 ${other.sha256}; ` +
          `file://\\S+/no-such-archive\\.tar\\.gz: not downloaded \\(curl: .+\\); ` +
          `http://127\\.0\\.0\\.1:9/besu-9\\.9\\.5\\.tar\\.gz: refused \\(https: or a local file: path only\\)\\): not unpacked, nothing changed$`,
      ),
    );
    expect(fs.readdirSync(home)).toEqual([]);
  });
});

/**
 * The start step against stand-ins: `systemctl` records what it is asked and, on start, lets the release that
 * `current` points at write to the data folder when WRITES_DATA names it; the node answers `net_enode` (curl) only
 * when the release in use is one of GOOD.
 */
function startStage() {
  const root = folder('start');
  const releases = path.join(root, 'releases');
  const data = path.join(root, 'data');
  const bin = path.join(root, 'bin');
  for (const version of ['1.0.0', '2.0.0']) {
    fs.mkdirSync(path.join(releases, `besu-${version}`, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(releases, `besu-${version}`, 'bin', 'besu'), '', { mode: 0o755 });
  }
  fs.mkdirSync(data);
  fs.mkdirSync(bin);
  const inUse = `basename "$(readlink "${releases}/current")" | sed 's/^besu-//'`;
  fs.writeFileSync(
    path.join(bin, 'systemctl'),
    [
      '#!/usr/bin/env bash',
      `echo "$*" >>"${root}/systemctl.log"`,
      'case "$1" in',
      `  start) v=$(${inUse}); case " $WRITES_DATA " in *" $v "*) sleep 1; echo "$v" >"${data}/database" ;; esac ;;`,
      `  is-failed) v=$(${inUse}); case " $GOOD " in *" $v "*) exit 1 ;; *) exit 0 ;; esac ;;`,
      `  is-active) [ ! -e "${root}/stopped" ] || exit 3 ;;`,
      'esac',
      'exit 0',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  fs.writeFileSync(
    path.join(bin, 'curl'),
    [
      '#!/usr/bin/env bash',
      `v=$(${inUse})`,
      'case " $GOOD " in *" $v "*) echo "{\\"result\\":\\"$EXPECTED_ENODE\\"}" ;; esac',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  fs.writeFileSync(path.join(bin, 'journalctl'), '#!/bin/sh\n', { mode: 0o755 });
  // The node's backup command: records what it backs up (the release in use then), and fails with BACKUP_FAILS.
  const backupCommand = path.join(bin, 'node-backup');
  fs.writeFileSync(
    backupCommand,
    [
      '#!/usr/bin/env bash',
      `echo "$* $(${inUse})" >>"${root}/backups.log"`,
      // With BACKUP_FAILS=stopped, it fails as a backup whose node did not come back after the copy: stopped.
      `[ "\${BACKUP_FAILS:-}" != stopped ] || { touch "${root}/stopped"; echo "node-backup: besu did not answer" >&2; exit 1; }`,
      '[ -z "${BACKUP_FAILS:-}" ] || { echo "restic: repository unreachable" >&2; exit 1; }',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const link = (name: string, version: string) =>
    fs.symlinkSync(path.join(releases, `besu-${version}`), path.join(releases, name));
  const current = () => path.basename(fs.readlinkSync(path.join(releases, 'current')));
  const start = (
    version: string,
    stand: { good: string; writesData?: string; backup?: boolean; backupFails?: boolean | 'stopped' },
  ) =>
    runStep(
      remoteStepInput('start', {
        SERVICE_NAME: 'besu',
        BESU_VERSION: version,
        RELEASES_DIR: releases,
        DATA_DIR: data,
        EXPECTED_ENODE: 'enode://ab@190.113.0.1:60606',
        RPC_PORT: '4545',
        START_TIMEOUT: '30',
        CONFIG_DIGEST: 'x',
        BACKUP_BEFORE_CHANGE: String(stand.backup ?? true),
        BACKUP_COMMAND_FILE: backupCommand,
        BACKUP_REASON: 'before-release-change',
        MOVE_RECORD_FILE: path.join(root, 'moved-in'),
      }),
      {
        PATH: `${bin}:${process.env.PATH}`,
        GOOD: stand.good,
        WRITES_DATA: stand.writesData ?? '',
        BACKUP_FAILS: stand.backupFails === 'stopped' ? 'stopped' : stand.backupFails ? 'yes' : '',
      },
    );
  const systemctl = () => fs.readFileSync(path.join(root, 'systemctl.log'), 'utf8');
  const backups = () =>
    fs.existsSync(path.join(root, 'backups.log')) ? fs.readFileSync(path.join(root, 'backups.log'), 'utf8') : '';
  return {
    releases,
    data,
    link,
    current,
    start,
    systemctl,
    backups,
    record: path.join(releases, 'switch-record'),
    movedIn: path.join(root, 'moved-in'),
  };
}

describe('the start step', () => {
  it('moves to a new release that comes back, keeps the previous one and clears its record', () => {
    const stage = startStage();
    stage.link('current', '1.0.0');
    const result = stage.start('2.0.0', { good: '1.0.0 2.0.0', writesData: '2.0.0' });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(stage.current()).toBe('besu-2.0.0');
    expect(path.basename(fs.readlinkSync(path.join(stage.releases, 'previous')))).toBe('besu-1.0.0');
    expect(fs.existsSync(stage.record)).toBe(false);
  });

  it('switches back when the new release never touched the data folder', () => {
    const stage = startStage();
    stage.link('current', '1.0.0');
    const result = stage.start('2.0.0', { good: '1.0.0' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/did not answer net_enode within 30 s; switched back to Besu 1\.0\.0/);
    expect(stage.current()).toBe('besu-1.0.0');
    expect(fs.existsSync(stage.record)).toBe(false);
  });

  it('stops instead of going back once the new release has written to the data folder', () => {
    const stage = startStage();
    stage.link('current', '1.0.0');
    const result = stage.start('2.0.0', { good: '1.0.0', writesData: '2.0.0' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /Besu 2\.0\.0 has already written to .*data, so going back to Besu 1\.0\.0 could corrupt the database: the node is stopped on Besu 2\.0\.0/,
    );
    expect(stage.current()).toBe('besu-2.0.0');
    expect(stage.systemctl().trim().split('\n').pop()).toBe('stop besu');
  });

  it('backs the data up on the release in use before it switches, and not on a first install', () => {
    const first = startStage();
    expect(first.start('1.0.0', { good: '1.0.0', writesData: '1.0.0' }).code).toBe(0);
    expect(first.backups()).toBe('');
    const stage = startStage();
    stage.link('current', '1.0.0');
    fs.writeFileSync(path.join(stage.data, 'database'), '1.0.0');
    const result = stage.start('2.0.0', { good: '1.0.0 2.0.0', writesData: '2.0.0' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('start: backing up the data of Besu 1.0.0 before switching to 2.0.0');
    expect(stage.backups()).toBe('backup before-release-change 1.0.0\n');
    // The same release again: no switch, no backup.
    expect(stage.start('2.0.0', { good: '2.0.0' }).code).toBe(0);
    expect(stage.backups()).toBe('backup before-release-change 1.0.0\n');
  });

  it("restores a moved node's backup (take-in) before its first start there, and never starts it when that fails", () => {
    const stage = startStage();
    fs.writeFileSync(stage.movedIn, 'backup=0123abcd\n');
    const result = stage.start('1.0.0', { good: '1.0.0' });
    expect(result.code).toBe(0);
    expect(stage.backups()).toBe(`take-in ${stage.movedIn} 1.0.0\n`);
    expect(stage.systemctl()).toContain('start besu');
    const failing = startStage();
    fs.writeFileSync(failing.movedIn, 'backup=0123abcd\n');
    const failed = failing.start('1.0.0', { good: '1.0.0', backupFails: true });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('the data of the node moved here could not be restored');
    // systemd was not even asked (no log): nothing started.
    expect(fs.existsSync(path.join(path.dirname(failing.movedIn), 'systemctl.log'))).toBe(false);
  });

  it('stays on the release in use when the backup before a change fails', () => {
    const stage = startStage();
    stage.link('current', '1.0.0');
    fs.writeFileSync(path.join(stage.data, 'database'), '1.0.0');
    const result = stage.start('2.0.0', { good: '1.0.0 2.0.0', backupFails: true });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/the backup before the release change failed: the node runs Besu 1\.0\.0 as before/);
    expect(stage.current()).toBe('besu-1.0.0');
    expect(fs.existsSync(stage.record)).toBe(false);
  });

  it('says the node is stopped, not running as before, when the failed backup left it stopped', () => {
    const stage = startStage();
    stage.link('current', '1.0.0');
    fs.writeFileSync(path.join(stage.data, 'database'), '1.0.0');
    const result = stage.start('2.0.0', { good: '1.0.0 2.0.0', backupFails: 'stopped' });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('as before');
    expect(result.stderr).toContain(
      'start: the backup before the release change failed, and the node is stopped on Besu 1.0.0: it did not come back after the backup',
    );
    expect(stage.current()).toBe('besu-1.0.0');
  });

  it('switches without a backup when beforeReleaseChange is false', () => {
    const stage = startStage();
    stage.link('current', '1.0.0');
    fs.writeFileSync(path.join(stage.data, 'database'), '1.0.0');
    expect(stage.start('2.0.0', { good: '1.0.0 2.0.0', backup: false }).code).toBe(0);
    expect(stage.backups()).toBe('');
  });

  it('finishes a switch an earlier, cut-off run began, from its record', () => {
    const stage = startStage();
    // The earlier run recorded 1.0.0, switched to 2.0.0 and was cut off before it could check the node.
    stage.link('current', '2.0.0');
    fs.writeFileSync(
      stage.record,
      `previous=${path.join(stage.releases, 'besu-1.0.0')}\ntarget=${path.join(stage.releases, 'besu-2.0.0')}\n`,
    );
    const result = stage.start('2.0.0', { good: '1.0.0' });
    expect(result.stdout).toContain('finishing the switch an earlier run began (from Besu 1.0.0)');
    expect(result.stderr).toMatch(/switched back to Besu 1\.0\.0/);
    expect(stage.current()).toBe('besu-1.0.0');
    // The new release may have opened the data already: no backup is labelled with the old one.
    expect(stage.backups()).toBe('');
  });
});

describe("a companion's launcher (scripts/start-companion.sh)", () => {
  const launcher = path.join(PROJECT_DIR, 'scripts', 'start-companion.sh');
  const stage = folder('companion');
  const program = path.join(stage, 'show-env');
  fs.writeFileSync(program, '#!/bin/sh\nprintf "%s|%s" "${WRITER_KEY:-unset}" "$*"\n', { mode: 0o755 });
  const key = path.join(stage, 'key');
  fs.writeFileSync(key, `0x${'ab'.repeat(32)}`);
  // As the companion's systemd unit gives it.
  const exitCode = { [MISSING_KEY_EXIT_VARIABLE]: String(MISSING_KEY_EXIT_CODE) };

  it('runs the executable with the node key in the named variable, not on its command line', () => {
    const result = spawnSync('sh', [launcher, program, 'WRITER_KEY', key], {
      encoding: 'utf8',
      env: { ...process.env, ...exitCode },
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`0x${'ab'.repeat(32)}|`);
  });

  it('runs it without the key when the companion reads it from its file', () => {
    const result = spawnSync('sh', [launcher, program], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...exitCode },
    });
    expect(result.stdout).toBe('unset|');
  });

  it("refuses to start without the key (the catalog's exit code, which its service does not restart on)", () => {
    const result = spawnSync('sh', [launcher, program, 'WRITER_KEY', path.join(stage, 'missing')], {
      encoding: 'utf8',
      env: { ...process.env, ...exitCode },
    });
    expect(result.status).toBe(MISSING_KEY_EXIT_CODE);
    expect(result.stderr).toMatch(/node key .*missing is missing or empty/);
  });
});

describe('a file written by a step whose run was cut between writing it and renaming it into place', () => {
  it('leaves no copy behind once the next run has written it (a cut left one more each time)', () => {
    const dir = folder('sibling-temp');
    const file = path.join(dir, 'lacchain-besu');
    const owner = `${process.getuid!()}:${process.getgid!()}`;
    const lib = fs.readFileSync(path.join(PROJECT_DIR, 'scripts/remote/lib.sh'), 'utf8');
    const write = (content: string) => `write_file ${file} 0644 ${owner} ${content}`;
    // The first run dies right before its rename (its mv kills it), as a cut there leaves it; the second runs whole.
    const script = `${lib}\nSTEP_NAME=test\n( mv() { kill -KILL "$BASHPID"; }; ${write('first')} ) || true\n${write('second')}\n`;
    const result = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
    expect([result.status, result.stderr.includes('Killed')]).toEqual([0, true]);
    expect(fs.readdirSync(dir)).toEqual(['lacchain-besu']);
    expect(fs.readFileSync(file, 'utf8')).toBe('second\n');
  });
});

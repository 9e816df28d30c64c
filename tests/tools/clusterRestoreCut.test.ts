/**
 * A cluster node's restore Job cut while it replaces the data volume's contents (issue: cut anywhere). The API server
 * of the cluster tier (kwok) runs no container, so the Job's script (scripts/kubernetes/restic-restore.sh) and the
 * pod's first init container (backup-before-release-change.sh) run here with sh against a throwaway folder as the
 * volume; restic is a stand-in (a PATH script that "restores" a fixed backup), and the cut is a PATH `mv` that kills
 * the whole Job (its process group) right after its first move.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { readScript } from '../../core/scripts';
import { BACKUP_TAGS, RESTORE_UNFINISHED_MARKER } from '../../core/catalog/backups';
import { RELEASE_MARKER } from '../../core/kubernetes/backups';
import { workFolder } from '../../testing/workFolder';

const work = workFolder('lacchain-cluster-restore-');

const NODE = 'writer';
const RELEASE = '24.1.0';
const data = path.join(work, 'data');
const bin = path.join(work, 'bin');
/** Armed: the stand-in mv kills the Job after its first move. */
const cutArmed = path.join(work, 'cut-armed');

/** What the stand-in restic restores: the backup's files. */
const BACKUP_FILES: Record<string, string> = {
  'database/blocks': 'restored blocks',
  'DATABASE_METADATA.json': 'restored',
};
/** What the volume held before the restore. */
const OLD_FILES: Record<string, string> = {
  'database/blocks': 'old blocks',
  'database/old-only': 'old',
  'DATABASE_METADATA.json': 'old',
  [RELEASE_MARKER]: `${RELEASE}\n`,
};

function write(dir: string, files: Record<string, string>) {
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
}

/** Every file under dir with its content, by relative path. */
function contents(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else found[path.relative(dir, full)] = fs.readFileSync(full, 'utf8');
    }
  };
  walk(dir);
  return found;
}

const ENV = {
  RESTIC_REPOSITORY: '/backups',
  RESTIC_PASSWORD: 'x',
  RESTIC_CACHE_DIR: path.join(work, 'cache'),
  DATA_DIR: data,
  NODE_NAME: NODE,
  TAG_NODE: BACKUP_TAGS.node,
  TAG_RELEASE: BACKUP_TAGS.release,
  RESTORE_MARKER: RESTORE_UNFINISHED_MARKER,
};

function run(script: string, env: Record<string, string>) {
  // A process group of its own (setsid): the cut kills all of it at once, as a pod killed on its worker ends.
  const result = spawnSync('setsid', ['--wait', 'sh', '-c', readScript(script)], {
    encoding: 'utf8',
    env: { ...process.env, ...ENV, ...env, PATH: `${bin}:${process.env.PATH}` },
    timeout: 60_000,
  });
  return {
    code: result.status,
    killed: result.signal === 'SIGKILL' || result.status === 128 + 9,
    stderr: result.stderr,
  };
}

const restore = () => run('kubernetes/restic-restore.sh', { SNAPSHOT: 'abc123', RELEASE });
const initContainer = () =>
  run('kubernetes/backup-before-release-change.sh', {
    RELEASE,
    MARKER: RELEASE_MARKER,
    BEFORE_CHANGE: 'true',
    TAG_REASON: BACKUP_TAGS.reason,
    REASON: 'before-release-change',
    MARK: 'lacchain',
    BACKUP_SCRIPT: '/nonexistent',
  });

beforeAll(() => {
  fs.mkdirSync(bin, { recursive: true });
  const restored = Object.entries(BACKUP_FILES)
    .map(([name, content]) => `mkdir -p "$target/$(dirname '${name}')" && printf '%s' '${content}' > "$target/${name}"`)
    .join('\n');
  fs.writeFileSync(
    path.join(bin, 'restic'),
    [
      '#!/bin/sh',
      '# restic stand-in: one backup of node writer taken on the release under test',
      'case "$1" in',
      `  snapshots) echo '[{"id":"abc123","tags":["lacchain","${BACKUP_TAGS.node}=${NODE}","${BACKUP_TAGS.release}=${RELEASE}"]}]' ;;`,
      `  stats) echo '{"total_size":42}' ;;`,
      '  restore)',
      '    while [ "$#" -gt 0 ]; do [ "$1" = --target ] && target=$2; shift; done',
      `    ${restored}`,
      '    ;;',
      'esac',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  fs.writeFileSync(
    path.join(bin, 'mv'),
    ['#!/bin/sh', '/bin/mv "$@"', `if [ -e '${cutArmed}' ]; then kill -KILL 0; fi`, ''].join('\n'),
    { mode: 0o755 },
  );
});

describe('a restore Job cut while it replaces the data volume', () => {
  it('leaves a marker that keeps Besu off the mix, and converges to the backup when run again', () => {
    write(data, OLD_FILES);
    fs.writeFileSync(cutArmed, '');
    const cut = restore();
    fs.rmSync(cutArmed);
    expect(cut.killed).toBe(true);
    const left = contents(data);
    // Cut: the old data removed, part of the backup's moved in, the marker there.
    expect(left[RESTORE_UNFINISHED_MARKER]).toBe('');
    expect(left['database/old-only']).toBeUndefined();

    // The node's pod: its first init container refuses before Besu (or a backup) opens the volume.
    const refused = initContainer();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('run npm run node -- restore again');
    expect(contents(data)).toEqual(left);

    // The restore run again from the start: exactly the backup's files, no marker, no work folder.
    const again = restore();
    expect([again.code, again.stderr]).toEqual([
      0,
      expect.stringContaining(`restored backup abc123 (Besu ${RELEASE})`),
    ]);
    expect(contents(data)).toEqual(BACKUP_FILES);
    expect(fs.existsSync(path.join(data, '.restore'))).toBe(false);
    // And the pod starts: the init container records the release and lets Besu open the restored data.
    expect(initContainer().code).toBe(0);
  });
});

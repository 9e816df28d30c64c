/**
 * Backups as the operations see them: restic's list read into backups, the backup a rollback restores, the table and
 * the progress lines; and the backup settings with their defaults on each path.
 */
import {
  backupsTable,
  olderRelease,
  parseResticSnapshots,
  progressText,
  rollbackBackup,
  transferStatus,
  transferSummary,
} from '../../core/operations/backups';
import { bytesText, durationText } from '../../core/operations/units';
import { snapshotBackups } from '../../cli/operations/clusterBackups';
import { loadStack } from '../../core/settings/load';
import { SettingsError } from '../../core/settings/problems';
import { loadTestnetStack, memoryFiles, rawConfig, validTestnetConfig } from '../../testing/fixtures';

const snapshot = (id: string, time: string, tags: string[]) => ({ short_id: id, id: `${id}ffff`, time, tags });
const tags = (release: string, reason: string, head?: number) => [
  'lacchain',
  'node=writer',
  `release=${release}`,
  `reason=${reason}`,
  ...(head !== undefined ? [`head=${head}`] : []),
];

describe("restic's list of a node's backups", () => {
  const json = JSON.stringify([
    snapshot('bbbbbbbb', '2026-11-20T10:00:00.5Z', tags('24.1.0', 'before-release-change', 1180)),
    snapshot('aaaaaaaa', '2026-11-02T09:00:00Z', tags('23.4.1', 'before-release-change', 1010)),
    snapshot('cccccccc', '2026-11-24T22:40:11.123Z', tags('25.5.0', 'manual')),
    snapshot('dddddddd', '2026-11-24T23:00:00Z', ['someone-elses']),
  ]);

  it("reads the tags, oldest first, and leaves out snapshots that are not the program's", () => {
    const backups = parseResticSnapshots(json);
    expect(backups.map((b) => b.id)).toEqual(['aaaaaaaa', 'bbbbbbbb', 'cccccccc']);
    expect(backups[1]).toEqual({
      id: 'bbbbbbbb',
      time: '2026-11-20T10:00:00.5Z',
      node: 'writer',
      release: '24.1.0',
      head: 1180,
      reason: 'before-release-change',
    });
    expect(backups[2].head).toBeUndefined();
  });

  it('refuses an answer that is not a JSON list, saying what came', () => {
    expect(() => parseResticSnapshots('Fatal: wrong password')).toThrow(/not JSON: Fatal: wrong password/);
    expect(() => parseResticSnapshots('{}')).toThrow(/not a list/);
  });

  it('prints them newest first, one aligned line each', () => {
    expect(backupsTable(parseResticSnapshots(json))).toEqual([
      'ID        TAKEN (UTC)          NODE    RELEASE  HEAD  REASON',
      'cccccccc  2026-11-24 22:40:11  writer  25.5.0   ?     manual',
      'bbbbbbbb  2026-11-20 10:00:00  writer  24.1.0   1180  before-release-change',
      'aaaaaaaa  2026-11-02 09:00:00  writer  23.4.1   1010  before-release-change',
    ]);
  });

  it('rolls back to the newest backup taken before a change, on an older release than the one in use', () => {
    const backups = parseResticSnapshots(json);
    expect(rollbackBackup(backups, '25.5.0')?.id).toBe('bbbbbbbb');
    expect(rollbackBackup(backups, '24.1.0')?.id).toBe('aaaaaaaa');
    expect(rollbackBackup(backups, '23.4.1')).toBeUndefined();
    // A manual backup is never a rollback's, even on an older release.
    expect(
      rollbackBackup(parseResticSnapshots(JSON.stringify([snapshot('m', 't', tags('1.0.0', 'manual'))])), '2.0.0'),
    ).toBeUndefined();
  });

  it('compares releases part by part as numbers', () => {
    expect(olderRelease('23.10.3', '24.1.0')).toBe(true);
    expect(olderRelease('23.4.1', '23.10.3')).toBe(true);
    expect(olderRelease('24.1.0', '24.1.0')).toBe(false);
    expect(olderRelease('25.5.0', '24.12.0')).toBe(false);
  });
});

describe('the VolumeSnapshots of a cluster node', () => {
  it('reads what each holds from its annotations', () => {
    const json = JSON.stringify({
      items: [
        {
          metadata: {
            name: 'besu-node-writer-backup-20261124230000',
            creationTimestamp: '2026-11-24T23:00:00Z',
            annotations: {
              'lacchain.net/backup-release': '24.1.0',
              'lacchain.net/backup-head': '77',
              'lacchain.net/backup-reason': 'manual',
            },
          },
        },
        { metadata: { name: 'besu-node-writer-backup-1', creationTimestamp: '2026-11-01T00:00:00Z' } },
      ],
    });
    expect(snapshotBackups('writer', json)).toEqual([
      {
        id: 'besu-node-writer-backup-1',
        time: '2026-11-01T00:00:00Z',
        node: 'writer',
        release: 'unknown',
        reason: 'manual',
      },
      {
        id: 'besu-node-writer-backup-20261124230000',
        time: '2026-11-24T23:00:00Z',
        node: 'writer',
        release: '24.1.0',
        head: 77,
        reason: 'manual',
      },
    ]);
  });
});

describe('the progress of a transfer', () => {
  it("reads restic's status lines and nothing else", () => {
    expect(transferStatus('{"message_type":"status","percent_done":0.5,"total_bytes":10,"bytes_done":5}')).toEqual({
      message_type: 'status',
      percent_done: 0.5,
      total_bytes: 10,
      bytes_done: 5,
    });
    expect(transferStatus('{"message_type":"summary","snapshot_id":"x"}')).toBeUndefined();
    expect(transferStatus('node-backup: stopping besu')).toBeUndefined();
    expect(transferStatus('{not json')).toBeUndefined();
  });

  it('says bytes done of the total, the rate and the time left', () => {
    const mib = 1024 * 1024;
    expect(progressText('backup', { total_bytes: 400 * mib, bytes_done: 100 * mib, seconds_elapsed: 10 }, 99)).toBe(
      'backup: 100.0 MiB of 400.0 MiB (25 %), 10.0 MiB/s, about 30 s left',
    );
    // restic's own estimate wins; a restore's bytes_restored counts; the operator's clock when the status has none.
    expect(progressText('backup', { total_bytes: 2048, bytes_done: 1024, seconds_remaining: 125 }, 1)).toBe(
      'backup: 1.0 KiB of 2.0 KiB (50 %), 1.0 KiB/s, about 2 min 5 s left',
    );
    expect(progressText('restore', { total_bytes: 0, bytes_restored: 0 }, 0)).toBe('restore: 0 B of 0 B, 0 B/s');
  });

  it("ends a backup's progress with restic's summary: every byte, in its total time", () => {
    const summary = transferSummary(
      '{"message_type":"summary","files_new":1,"total_bytes_processed":2097152,"total_duration":2.0,"snapshot_id":"325a607b"}',
    );
    expect(progressText('backup', summary!, 9)).toBe('backup: 2.0 MiB of 2.0 MiB (100 %), 1.0 MiB/s, done');
    expect(transferSummary('{"message_type":"status"}')).toBeUndefined();
  });

  it('words sizes and durations', () => {
    expect(bytesText(512)).toBe('512 B');
    expect(bytesText(3 * 1024 ** 3)).toBe('3.0 GiB');
    expect(durationText(59.6)).toBe('1 min 0 s');
    expect(durationText(7260)).toBe('2 h 1 min');
  });
});

describe('the backup settings', () => {
  it('back up before every release change, schedule nothing and keep 7 by default, each node in its own place', () => {
    const { settings } = loadTestnetStack(validTestnetConfig());
    for (const node of settings.nodes) {
      expect(node.backups).toEqual({
        beforeReleaseChange: true,
        schedule: 'off',
        keep: 7,
        repository: node.target === 'ssh' ? `/var/backups/lacchain/${node.serviceName}` : '/backups',
      });
    }
  });

  it('refuses a bad schedule, a count out of range and a repository restic would not take, naming each', () => {
    const config = validTestnetConfig();
    config['lacchain:backups'] = { schedule: 'nightly', keep: 0, repository: 'relative/folder' };
    let error: SettingsError | undefined;
    try {
      loadTestnetStack(config);
    } catch (e) {
      error = e as SettingsError;
    }
    expect(error).toBeInstanceOf(SettingsError);
    expect(error!.message).toMatch(/lacchain:backups\.schedule.*one of off, hourly, daily, weekly/);
    expect(error!.message).toMatch(/lacchain:backups\.keep.*a whole number from 1 to 1000/);
    expect(error!.message).toMatch(/lacchain:backups\.repository.*a restic repository/);
  });
});

describe('an S3 repository', () => {
  const sshOnly = (extra: Record<string, unknown>) => {
    const config = validTestnetConfig();
    config['lacchain:nodes'] = (config['lacchain:nodes'] as { target: string }[]).filter((n) => n.target === 'ssh');
    return { ...config, ...extra };
  };
  const problemsOf = (config: Record<string, unknown>) => {
    try {
      loadTestnetStack(config);
      return '';
    } catch (error) {
      return (error as SettingsError).message;
    }
  };

  it('is taken with its keys, as restic names it', () => {
    const { settings, secrets } = loadTestnetStack(
      sshOnly({
        'lacchain:backups': { repository: 's3:https://s3.example.org/lacchain-backups/validator' },
        'lacchain:backupS3Keys': { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'a-secret-key' },
      }),
    );
    expect(settings.nodes[0].backups.repository).toBe('s3:https://s3.example.org/lacchain-backups/validator');
    expect(secrets.backupS3Keys).toEqual({ accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'a-secret-key' });
  });

  it('needs its keys, and keys need it', () => {
    expect(problemsOf(sshOnly({ 'lacchain:backups': { repository: 's3:s3.amazonaws.com/lacchain-backups' } }))).toMatch(
      /lacchain:backupS3Keys.*missing.*the keys of the S3 repository of node/,
    );
    expect(problemsOf(sshOnly({ 'lacchain:backupS3Keys': { accessKeyId: 'a', secretAccessKey: 'b' } }))).toMatch(
      /lacchain:backupS3Keys.*no S3 keys unless lacchain:backups\.repository is an s3: repository/,
    );
    expect(problemsOf(sshOnly({ 'lacchain:backups': { repository: 's3:not a bucket' } }))).toMatch(
      /lacchain:backups\.repository.*a restic repository/,
    );
  });
});

describe('a repository on the machine', () => {
  const STACK_FILE = 'Pulumi.testnet.yaml';
  /** The stack of one SSH validator (its node home `home`, or the default) backing up to `repository`. */
  const stackWith = (repository: string, home?: string) => {
    const config = validTestnetConfig();
    config['lacchain:nodes'] = (config['lacchain:nodes'] as { target: string; inventory?: object }[])
      .filter((n) => n.target === 'ssh')
      .map((n) => ({ ...n, inventory: { ...n.inventory, ...(home ? { node_home: home } : {}) } }));
    return { ...config, 'lacchain:backups': { repository } };
  };
  /** The problems loading the stack reports (before anything is deployed), or '' when it loads. */
  const problemsOf = (repository: string, home?: string) => {
    try {
      loadStack('testnet', rawConfig(stackWith(repository, home), STACK_FILE), memoryFiles({}));
      return '';
    } catch (error) {
      expect(error).toBeInstanceOf(SettingsError);
      return (error as SettingsError).message;
    }
  };
  /** The start of the one line that names the file, the key and the value given. */
  const named = (repository: string) =>
    `${STACK_FILE}: lacchain:backups.repository: given ${JSON.stringify(repository)}`;

  it.each([
    '/',
    '/etc',
    '/etc/lacchain-backups',
    '/tmp',
    '/tmp/backups',
    '/usr',
    '/usr/local/backups',
    '/var',
    '/var/tmp/backups',
    '/var/cache/restic',
    '/var/lib',
    '/var/log',
    '/var/backups',
    '/bin',
    '/boot/backups',
    '/dev/shm/backups',
    '/proc/1',
    '/sys/fs',
    '/run/backups',
    '/root',
    '/home',
    '/opt',
    '/srv',
    '/mnt',
    '/./etc//backups',
  ])('refuses %s, a system folder, naming the file, the key, the value and what is allowed', (repository) => {
    const problems = problemsOf(repository);
    expect(problems).toContain(named(repository));
    expect(problems).toMatch(
      /allowed: on the machine, a folder of the backups' own such as \/var\/backups\/lacchain\/besu \(the backups step makes it root's only, mode 0700\): not \/, .*\/home, .*\/opt, .* themselves, nor \/bin, .*\/etc, .*\/tmp, .*\/usr, .* or a folder inside them/,
    );
  });

  it.each([
    ['/opt/lacchain', 'the default', "is node validator's home /opt/lacchain"],
    ['/opt/lacchain/backups', 'the default', "is inside node validator's home /opt/lacchain"],
    ['/opt/lacchain/data', 'the default', "is node validator's data folder /opt/lacchain/data"],
    ['/opt/lacchain/data/backups', 'the default', "is inside node validator's data folder /opt/lacchain/data"],
    ['/srv/chain', '/srv/chain/validator', "holds node validator's home /srv/chain/validator"],
    [
      '/srv/chain/validator/data/restic',
      '/srv/chain/validator',
      "is inside node validator's data folder /srv/chain/validator/data",
    ],
  ])('refuses %s with the node home %s: it %s', (repository, home, relation) => {
    const problems = problemsOf(repository, home === 'the default' ? undefined : home);
    expect(problems).toContain(
      `${named(repository)}, which ${relation}; allowed: a folder outside node validator's home`,
    );
    expect(problems).toMatch(
      /such as the default \/var\/backups\/lacchain\/besu: the backups step makes the repository root's only \(mode 0700\), so Besu could not start/,
    );
  });

  it.each([
    '/var/backups/lacchain/besu',
    '/var/backups/other',
    '/mnt/backup-disk/lacchain',
    '/home/backup/lacchain',
    '/srv/backups',
    '/root/backups',
    '/var/lib/lacchain-backups',
    '/opt/lacchain-backups',
    'sftp:backup@190.51.100.9:/srv/backups/validator',
  ])('takes %s', (repository) => {
    expect(problemsOf(repository)).toBe('');
  });
});

/**
 * The machine restore's copy of the node key (`node-backup restore`, scripts/remote/node-backup.sh) on a real Debian
 * host: the real backup command as the backups step installs it (nodeBackupCommand), run as root, restic from Debian
 * 12, a real service user owning the data folder as the node-files step leaves it. The service user can change what
 * `data/key` is at any time; whatever it makes of it (a symlink from the start, a symlink swapped in just before root
 * opens the key, a hard link to a root-only file), the restore must not copy a root-only file to it: it fails and
 * copies nothing (the data folder, the key and the secret as they were). A key that is the service user's own is
 * copied and the restore goes through. Lighter than sshNode.test.ts: no provisioning, only the layout the backup
 * command reads, and a small JSON-RPC stand-in as the node's service (it answers the recorded enode).
 */
import { randomBytes } from 'crypto';
import { BEFORE_RESTORE_SUFFIX } from '../../core/catalog/backups';
import { shellQuote } from '../../core/remote/shell';
import { KEY_ONE } from '../../testing/fixtures';
import { asRoot, layOutNode, layoutNode, layoutPaths, SERVICE_USER, writeAsUser } from '../../testing/nodeLayout';
import { startTestHost, TestHost } from '../../testing/host/testHost';
import { packagesInstalledDisk } from '../../testing/host/packagesDisk';
import { hostSuite } from '../../testing/hostSuite';
import { requireTestHosts } from '../../testing/releaseHost';
import { outcome } from '../../testing/run';

const suite = hostSuite("the machine restore's key copy");
jest.setTimeout(10 * 60 * 1000);

const RELEASE = '24.1.0';
const USER = SERVICE_USER;
/** A root-only file the service user must never get: its content is unique to this run. */
const SECRET_FILE = '/root/secret-of-root';
const SECRET = `root-only secret ${randomBytes(8).toString('hex')}`;
/** The live data after the backup: a restore replaces it with the backup's (`v1`). */
const LIVE_DATA = 'chain data v2, after the backup';
const BACKED_UP_DATA = 'chain data v1, in the backup';
/** Where the test's stand-ins for `cp` and `runuser` are: first on the PATH of one restore. */
const SWAP_DIR = '/usr/local/lib/keyswap';

suite('the machine restore copies the node key as the service user reads it, never a linked root-only file', () => {
  const node = layoutNode();
  const { paths, command, enode, dbFile } = layoutPaths(node);
  let host: TestHost | undefined;
  let backupId = '';

  /** Runs a root shell script on the host, failing the test with its output when it fails. */
  const root = (script: string) => asRoot(host!, script);

  beforeAll(async () => {
    await requireTestHosts();
    host = await startTestHost('keycopy', 46, { base: await packagesInstalledDisk() });
    await layOutNode(host, node, { release: RELEASE, key: KEY_ONE, enode, data: BACKED_UP_DATA });
    await root(`(umask 077 && printf %s ${shellQuote(SECRET)} >${SECRET_FILE})`);
    // The service user winning the race: just before root opens the key (cp for the copy of old, runuser for the
    // read as the service user), the key becomes a symlink to the root-only file; once, then the real command runs.
    const swapper = (real: string) =>
      [
        '#!/bin/sh',
        `case " $* " in *" ${paths.key} "* | *" if=${paths.key} "*)`,
        '  if [ ! -e /run/keyswap.done ]; then',
        '    touch /run/keyswap.done',
        `    /usr/sbin/runuser -u ${USER} -- sh -c 'ln -s "$1" "$2.swap" && mv -T "$2.swap" "$2"' sh ${SECRET_FILE} ${paths.key}`,
        '  fi',
        '  ;;',
        'esac',
        `exec ${real} "$@"`,
        '',
      ].join('\n');
    await root(`install -d -m 0755 ${SWAP_DIR}`);
    await host.ssh(`cat >${SWAP_DIR}/cp && chmod 0755 ${SWAP_DIR}/cp`, { input: swapper('/usr/bin/cp') });
    await host.ssh(`cat >${SWAP_DIR}/runuser && chmod 0755 ${SWAP_DIR}/runuser`, {
      input: swapper('/usr/sbin/runuser'),
    });
    // One backup, then the live data moves on: a restore that went through would bring v1 back.
    await root(`${command} backup manual >/dev/null`);
    const list = JSON.parse(await root(`${command} list`)) as { short_id: string }[];
    expect(list).toHaveLength(1);
    backupId = list[0].short_id;
  });

  afterAll(async () => {
    await host?.stop();
  });

  beforeEach(async () => {
    // The node as before every case: its own key in place, the live data, no leftovers of an earlier restore.
    await root(`
rm -f /run/keyswap.done ${paths.key}
${writeAsUser(paths.key, KEY_ONE)}
${writeAsUser(dbFile, LIVE_DATA)}
rm -rf ${paths.dataDir}${BEFORE_RESTORE_SUFFIX}
systemctl start ${node.serviceName}
`);
  });

  /** Runs the restore of the backup as npm run node does (as root), with the test's swapping cp and runuser or not. */
  const restore = (options: { swap?: boolean } = {}) =>
    host!.ssh(
      `${options.swap ? `PATH=${SWAP_DIR}:$PATH ` : ''}env KEY_FROM_STDIN=false ${command} restore ${backupId} ${RELEASE} ''`,
    );

  /** What the restore left: each file that holds the secret, the key's kind and inode, the data, leftovers. */
  const aftermath = async () => {
    const out = await root(`
echo "holders: $(grep -rlF ${shellQuote(SECRET)} ${paths.home} ${node.backups.repository} /tmp /var/tmp 2>/dev/null | sort | tr '\\n' ' ')"
echo "key: $(stat -c '%F %i %U' ${paths.key})"
echo "secret: $(stat -c '%F %i %U' ${SECRET_FILE})"
echo "data: $(cat ${dbFile})"
echo "leftovers: $(ls -A ${paths.home} | grep -E '^\\.restore-|${BEFORE_RESTORE_SUFFIX.replace('.', '\\.')}$' | tr '\\n' ' ')"
`);
    const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(out)?.[1].trim() ?? '';
    return {
      holders: field('holders'),
      key: field('key'),
      secret: field('secret'),
      data: field('data'),
      leftovers: field('leftovers'),
    };
  };

  /** What a refused restore leaves when the key is the service user's symlink: nothing copied, nothing changed. */
  const UNTOUCHED_BESIDE_A_LINK = {
    holders: '',
    key: expect.stringMatching(new RegExp(`^symbolic link \\d+ ${USER}$`)),
    secret: expect.stringMatching(/^regular file \d+ root$/),
    data: LIVE_DATA,
    leftovers: '',
  };

  it('refuses a symlink to a root-only file and copies nothing', async () => {
    await root(`rm -f ${paths.key} && runuser -u ${USER} -- ln -s ${SECRET_FILE} ${paths.key}`);
    const result = await restore();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`node-backup: the node key ${paths.key}`);
    expect(await aftermath()).toEqual(UNTOUCHED_BESIDE_A_LINK);
  });

  it('refuses a symlink swapped in just before root opens the key, and copies nothing', async () => {
    const result = await restore({ swap: true });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `node-backup: the node key ${paths.key} cannot be read as ${USER} (a link, or not that user's file): nothing was changed`,
    );
    expect(await aftermath()).toEqual(UNTOUCHED_BESIDE_A_LINK);
  });

  it('refuses a hard link to a root-only file (no race needed) and copies nothing', async () => {
    // Where fs.protected_hardlinks is 0 the service user makes this link itself; root makes it here.
    await root(`rm -f ${paths.key} && ln ${SECRET_FILE} ${paths.key}`);
    const result = await restore();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `node-backup: the node key ${paths.key} cannot be read as ${USER} (a link, or not that user's file): nothing was changed`,
    );
    const after = await aftermath();
    // The only file that holds the secret is the secret itself, under its two names (the same inode).
    expect(after.holders).toBe(paths.key);
    expect(after.key).toBe(after.secret);
    expect(after.data).toBe(LIVE_DATA);
    expect(after.leftovers).toBe('');
  });

  it("copies the service user's own key and restores the backup", async () => {
    const result = await restore();
    expect(result.stderr).not.toContain('cannot be read');
    expect(result.stdout).toContain(`node-backup: restored: ${node.serviceName} runs Besu ${RELEASE} as ${enode}`);
    expect(outcome(result)).toBe('exit 0');
    const out = await root(`stat -c '%F %U %a' ${paths.key}; cat ${paths.key}; echo; cat ${dbFile}`);
    expect(out.split('\n').slice(0, 3)).toEqual([`regular file ${USER} 600`, KEY_ONE, BACKED_UP_DATA]);
  });
});

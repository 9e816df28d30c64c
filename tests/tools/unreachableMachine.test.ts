/**
 * `npm run node` on an SSH node that cannot be acted on: a machine that does not answer, and a machine where the node
 * was never deployed (a stand-in ssh on PATH answers as such a machine would). Every operation says so in one line and
 * exits 1, and `status --all` shows a short state in the node's row with the reason below the table, never inside it.
 * The same for a cluster node is in tests/cluster/unreachableNodes.test.ts, with the real kubectl.
 */
import { sshValidatorEntry, TEST_COMPANIONS } from '../../testing/fixtures';
import { freePort } from '../../testing/ports';
import { projectFolder } from '../../testing/projects';
import { runNpmAsync } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';
import { standinSsh } from '../../testing/standinSsh';

jest.setTimeout(180_000);

const work = workFolder('lacchain-unreachable-machine-');

/** A stand-in ssh: a machine without the node's service (never deployed); it answers nothing else. */
const standinDir = standinSsh(work, ['*"systemctl cat"*) echo missing ;;', '*) echo "unexpected: $*" >&2; exit 1 ;;']);

const stack = (inventory: Record<string, unknown>) =>
  projectFolder(work, {
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [sshValidatorEntry(inventory)],
    'lacchain:companions': structuredClone(TEST_COMPANIONS),
  });

/** Runs `npm run node`; stderr's lines, without the launcher's note on a stale build. */
async function node(config: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = await runNpmAsync('node', [...args, '--stack', 'testnet', '--config', config], { env });
  const errors = result.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('the build in bin/'));
  return { ...result, errors };
}

const OPERATIONS = ['status', 'check', 'logs', 'start', 'restart', 'backup', 'backups', 'restore', 'rollback'];
const NOT_DEPLOYED =
  'node validator is not deployed on root@190.51.100.7:22 (no service besu there): run pulumi up --stack testnet';

describe('a machine where the node is not deployed', () => {
  const config = stack({});
  const env = { PATH: `${standinDir}:${process.env.PATH}` };

  it.each(OPERATIONS)('%s: one line, run pulumi up; exit 1', async (operation) => {
    const result = await node(config, [operation], env);
    expect(result.errors).toEqual([`error: ${NOT_DEPLOYED}`]);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(1);
  });

  it('status --all: "not deployed" in the row, the reason below the table', async () => {
    const result = await node(config, ['status', '--all'], env);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^NODE +TYPE +PATH +RELEASE +SERVICE +PEERS +HEAD +BEHIND +PERMISSIONED +COMPANIONS$/),
      expect.stringMatching(/^validator +validator +ssh +- +not deployed +- +- +- +- +-$/),
      NOT_DEPLOYED,
    ]);
    expect(result.errors).toEqual([]);
    expect(result.code).toBe(1);
    const [row] = JSON.parse((await node(config, ['status', '--all', '--json'], env)).stdout);
    expect(row).toMatchObject({ node: 'validator', service: 'not deployed', running: false, problem: NOT_DEPLOYED });
  });
});

describe('a machine that does not answer', () => {
  it('status --all: "unreachable" in the row, what ssh said below the table, one line', async () => {
    const port = await freePort(); // nothing listens there
    const result = await node(stack({ host: '127.0.0.1', port }), ['status', '--all']);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^NODE +TYPE/),
      expect.stringMatching(/^validator +validator +ssh +- +unreachable +- +- +- +- +-$/),
      `node validator: cannot reach root@127.0.0.1:${port} over SSH: ssh: connect to host 127.0.0.1 port ${port}: Connection refused`,
    ]);
    expect(result.code).toBe(1);
  });
});

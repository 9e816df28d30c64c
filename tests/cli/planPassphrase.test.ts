/**
 * `npm run plan` shows the enode of a node whose key the stack file holds encrypted by the real Pulumi CLI (issue 53,
 * friction 9): with PULUMI_CONFIG_PASSPHRASE, the stack's passphrase, the plan decrypts it as Pulumi's passphrase
 * secrets manager does; without it, or with another passphrase, the enode stays known after pulumi up, with one line
 * saying why.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { deriveIdentity, parsePrivateKey } from '../../core/identity/nodeKey';
import { FAKE_HOST_KEY } from '../../testing/fixtures';
import { ensureBuilt, PROJECT_DIR } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';
import { CLI_ENV, cliSuite, fileBackendUrl, findPulumiCli, projectCopy } from './pulumiCli';

jest.setTimeout(180_000);

const HOST = '190.51.100.7';
const KNOWN_AFTER_UP = '[known after pulumi up]';

cliSuite('the plan of a stack whose node key the Pulumi CLI encrypted')('npm run plan and the stack passphrase', () => {
  const work = workFolder('lacchain-plan-passphrase-');
  let dir: string;
  let keyFile: string;
  /** The environment of every command: the CLI on PATH, a file backend of the test's own; no passphrase. */
  let base: NodeJS.ProcessEnv;
  let remove = () => {};
  afterAll(() => remove());

  /** Runs a command in the project copy; `passphrase` sets PULUMI_CONFIG_PASSPHRASE (else it is unset). */
  const run = (command: string, args: string[], passphrase?: string, cwd = dir) => {
    const env = { ...base, ...(passphrase !== undefined ? { PULUMI_CONFIG_PASSPHRASE: passphrase } : {}) };
    const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 120_000 });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const plan = (passphrase?: string) =>
    run(
      'npm',
      ['run', '--silent', 'plan', '--', '--stack', 'testnet', '--config', path.join(dir, 'Pulumi.testnet.yaml')].concat(
        ['--out', path.join(work, 'plan')],
      ),
      passphrase,
      PROJECT_DIR,
    );
  const enodeOf = (stdout: string) =>
    (JSON.parse(stdout) as { nodes: Record<string, { enode: string }> }).nodes.writer.enode;

  beforeAll(() => {
    ensureBuilt();
    const copy = projectCopy();
    dir = copy.dir;
    remove = copy.remove;
    const cli = findPulumiCli().cli!;
    const recorded = (tool: string) => path.join(PROJECT_DIR, 'tests/fixtures', tool);
    base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PULUMI_CONFIG_PASS')));
    Object.assign(base, {
      PULUMI_SKIP_UPDATE_CHECK: CLI_ENV.PULUMI_SKIP_UPDATE_CHECK,
      PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: CLI_ENV.PULUMI_DIY_BACKEND_NO_LEGACY_WARNING,
      PULUMI_BACKEND_URL: fileBackendUrl(path.join(work, 'state')),
      PATH: [path.dirname(cli.binary), recorded('recorded-ssh'), recorded('recorded-containers'), base.PATH].join(':'),
    });
    fs.mkdirSync(path.join(work, 'state'));
    const created = run('pulumi', ['stack', 'init', 'testnet'], CLI_ENV.PULUMI_CONFIG_PASSPHRASE);
    expect(created.code).toBe(0);
    // The README's SSH path: init writes the node and stores its key as a secret of the stack (pulumi config set).
    const keys = path.join(work, 'keys');
    const init = spawnSync(
      'npm',
      [
        ...['run', '--silent', 'init', '--', '--stack', 'testnet', '--dir', dir, '--key-dir', keys],
        ...['--typenode', 'writer', '--target', 'ssh', '--host', HOST, '--node-name', 'org-writer'],
        ...['--node-email', 'ops@example.org', '--os', 'debian 12', '--host-key', FAKE_HOST_KEY],
        ...['--keygen', 'yes', '--store-secret', 'yes'],
      ],
      {
        cwd: PROJECT_DIR,
        env: { ...base, PULUMI_CONFIG_PASSPHRASE: CLI_ENV.PULUMI_CONFIG_PASSPHRASE },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(init.stderr).toBe('');
    expect(init.status).toBe(0);
    keyFile = path.join(keys, 'testnet-writer.key');
  });

  it('the stack file holds the key as the CLI encrypted it, under its passphrase salt', () => {
    const stackFile = yaml.load(fs.readFileSync(path.join(dir, 'Pulumi.testnet.yaml'), 'utf8')) as {
      encryptionsalt: string;
      config: Record<string, { writer: { secure: string } }>;
    };
    expect(stackFile.encryptionsalt).toMatch(/^v1:[A-Za-z0-9+/=]+:v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(stackFile.config['lacchain:nodeKeys'].writer.secure).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
  });

  it("with the stack's passphrase, shows the enode of the key the stack holds", () => {
    const planned = plan(CLI_ENV.PULUMI_CONFIG_PASSPHRASE);
    expect(planned.stderr).not.toContain('policy violation');
    expect(planned.code).toBe(0);
    const expected = deriveIdentity(parsePrivateKey(fs.readFileSync(keyFile, 'utf8')), HOST, 60606).enode;
    expect(enodeOf(planned.stdout)).toBe(expected);
    expect(planned.stderr).not.toContain('lacchain:nodeKeys');
  });

  it('without the passphrase, keeps it known after pulumi up and says why in one line', () => {
    const planned = plan();
    expect(planned.code).toBe(0);
    expect(enodeOf(planned.stdout)).toBe(KNOWN_AFTER_UP);
    const lines = planned.stderr.split('\n').filter((line) => line.includes('lacchain:nodeKeys'));
    expect(lines).toEqual([
      `note: lacchain:nodeKeys.writer encrypted in ${path.join(dir, 'Pulumi.testnet.yaml')}: planned as known after pulumi up (set PULUMI_CONFIG_PASSPHRASE, the stack's passphrase, and the plan reads it and shows the enode)`,
    ]);
  });

  it("with another passphrase, says it is not the stack's: the salt's check value does not decrypt", () => {
    const planned = plan('not the passphrase of this stack');
    expect(planned.code).toBe(0);
    expect(enodeOf(planned.stdout)).toBe(KNOWN_AFTER_UP);
    expect(planned.stderr).toContain(
      "planned as known after pulumi up (PULUMI_CONFIG_PASSPHRASE is not its passphrase: the salt's check value does not decrypt)",
    );
  });
});

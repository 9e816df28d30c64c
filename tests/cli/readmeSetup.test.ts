/**
 * The README's set-up, run by the real Pulumi CLI as a newcomer runs it: a new system user with a fresh home folder,
 * the README's main command up to `pulumi up` (which needs the providers, not to be had here), then the `config set`
 * forms the README documents (plain, `--secret`, `--secret --path`). What they wrote is then read back by the engine
 * itself (an Automation API inline program) and by the offline reader, and both load into the same settings.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadPulumiStack } from '../../components/pulumiSettings';
import { loadStack } from '../../core/settings/load';
import { completedExample } from '../../testing/examples';
import { readFileFromDisk, readStackConfigFile } from '../../core/settings/settingsFiles';
import { FAKE_SSH_KEY, KEY_ONE } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';
import { newUser } from '../../testing/systemUser';
import { CLI_ENV, asNewUserSuite, findPulumiCli, inlineStack, projectCopy, readingBack } from './pulumiCli';

jest.setTimeout(10 * 60 * 1000);
const suite = asNewUserSuite('README set-up with the real Pulumi CLI');

const README = fs.readFileSync(path.join(PROJECT_DIR, 'README.md'), 'utf8');
/** The README's deploy command, the one line after "Deploy the nodes of a stack". */
const MAIN_COMMAND = /Deploy the nodes of a stack[^`]*```sh\n([^\n]+)\n```/.exec(README)?.[1] ?? '';
/** The README's "create the stack once" command, which comes before the first steps of either path. */
const CREATE_STACK = /create the stack once[^\n]*\n\n```sh\n([^\n]+)\n```/.exec(README)?.[1] ?? '';
const DEPLOY = 'pulumi up --stack testnet';
/** The README's shell commands, one line each. */
const README_LINES = [...README.matchAll(/```sh\n([^`]*)```/g)].flatMap((m) => m[1].split('\n')).map((l) => l.trim());

suite('the README set-up, as a new user with a fresh home folder', () => {
  let user: ReturnType<typeof newUser>;
  let project: ReturnType<typeof projectCopy>;
  let binDir: string;
  const passphrase = CLI_ENV.PULUMI_CONFIG_PASSPHRASE;

  /** Runs a shell command line as the new user, in the project copy, with the CLI on PATH. */
  const asUser = (line: string, input?: string) => {
    const env = `export PATH=${binDir}:$PATH PULUMI_SKIP_UPDATE_CHECK=true PULUMI_CONFIG_PASSPHRASE='${passphrase}'`;
    const result = spawnSync('su', ['-', user.name, '-c', `${env}; cd ${project.dir} && ${line}`], {
      encoding: 'utf8',
      input,
      timeout: 120_000,
    });
    return { code: result.status, out: `${result.stdout}${result.stderr}` };
  };

  beforeAll(() => {
    const { cli } = findPulumiCli();
    user = newUser('lcnew');
    // The README's first step, npm run init, adds the node: here the Kubernetes writer the stock file shows, its
    // values completed.
    project = projectCopy(completedExample('testnet', { pin: false }));
    // The CLI's cache may sit in a home folder the new user cannot enter: give it a copy it can run.
    binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-cli-bin-'));
    fs.chmodSync(binDir, 0o755);
    fs.copyFileSync(cli!.binary, path.join(binDir, 'pulumi'));
    fs.chmodSync(path.join(binDir, 'pulumi'), 0o755);
    fs.chmodSync(project.dir, 0o755);
    spawnSync('chown', ['-R', `${user.name}:`, project.dir]);
  });
  afterAll(() => {
    user?.remove();
    project?.remove();
    if (binDir) fs.rmSync(binDir, { recursive: true, force: true });
  });

  it('the README deploys with pulumi up alone, after installing and creating the stack, each said once', () => {
    expect(MAIN_COMMAND).toBe(DEPLOY);
    expect(README_LINES.filter((line) => line.includes('npm install') && /pulumi|mkdir/.test(line))).toEqual([]);
    expect(README_LINES.filter((line) => line.includes('mkdir -p ~/.pulumi-lacchain'))).toEqual([CREATE_STACK]);
    expect(README_LINES.filter((line) => line.includes('pulumi stack select'))).toEqual([CREATE_STACK]);
    expect(README_LINES.indexOf(CREATE_STACK)).toBeLessThan(README_LINES.indexOf(DEPLOY));
  });

  it('without the backend folder Pulumi refuses to create the stack (why the README creates it)', () => {
    const other = newUser('lcnew');
    try {
      const result = spawnSync(
        'su',
        ['-', other.name, '-c', `cd ${project.dir} && PULUMI_CONFIG_PASSPHRASE=x ${binDir}/pulumi stack ls`],
        { encoding: 'utf8' },
      );
      expect(result.stderr).toContain(`unable to open bucket file://${other.home}/.pulumi-lacchain`);
    } finally {
      other.remove();
    }
  });

  it("runs the README's stack creation as written", () => {
    const result = asUser(CREATE_STACK.replace("'<a long passphrase of your own>'", `'${passphrase}'`));
    expect([result.code, result.out]).toEqual([0, expect.stringContaining("Created stack 'testnet'")]);
    expect(fs.existsSync(path.join(user.home, '.pulumi-lacchain', '.pulumi', 'stacks'))).toBe(true);
    // Pulumi.yaml's backend keeps no side file of attributes beside the state (metadata=skip): a pulumi up killed
    // while writing one would leave it empty and the stack unreadable ("failed to load checkpoint: EOF").
    const written = fs.readdirSync(path.join(user.home, '.pulumi-lacchain', '.pulumi'), { recursive: true });
    expect(written.map(String).filter((f) => f.endsWith('.json'))).toEqual([expect.stringContaining('testnet.json')]);
    expect(written.map(String).filter((f) => f.endsWith('.attrs'))).toEqual([]);
  });

  it("creates the stack as the README's first command says, before any first step stores a secret in it", () => {
    const other = newUser('lcnew');
    const copy = projectCopy();
    fs.chmodSync(copy.dir, 0o755);
    spawnSync('chown', ['-R', `${other.name}:`, copy.dir]);
    try {
      // A new user in the README's order: the stack first (with a passphrase of its own), then a secret of step 2.
      const line = CREATE_STACK.replace("'<a long passphrase of your own>'", "'a new user passphrase'");
      expect(line).toMatch(
        /^export PULUMI_CONFIG_PASSPHRASE=.* && mkdir -p ~\/\.pulumi-lacchain && pulumi stack select --create testnet$/,
      );
      const run = (command: string, input?: string) =>
        spawnSync(
          'su',
          [
            '-',
            other.name,
            '-c',
            `export PATH=${binDir}:$PATH PULUMI_SKIP_UPDATE_CHECK=true; cd ${copy.dir} && ${command}`,
          ],
          {
            encoding: 'utf8',
            input,
            timeout: 120_000,
          },
        );
      const secret = run(`${line} && pulumi config set --secret lacchain:sshPrivateKey`, FAKE_SSH_KEY);
      expect(secret.status).toBe(0);
      expect(`${secret.stdout}${secret.stderr}`).toContain("Created stack 'testnet'");
      expect(fs.readFileSync(path.join(copy.dir, 'Pulumi.testnet.yaml'), 'utf8')).toMatch(
        /lacchain:sshPrivateKey:\n\s+secure: /,
      );
    } finally {
      other.remove();
      copy.remove();
    }
  });

  it('takes the documented config set forms, plain, --secret and --secret --path', () => {
    const keyFile = path.join(project.dir, 'writer.key');
    fs.writeFileSync(keyFile, `${KEY_ONE.slice(2)}\n`, { mode: 0o600 });
    spawnSync('chown', [`${user.name}:`, keyFile]);
    for (const [line, input] of [
      ['pulumi config set lacchain:allowKeyDeletion true', undefined],
      ['pulumi config set --secret lacchain:sshPrivateKey', FAKE_SSH_KEY],
      [`pulumi config set --secret --path 'lacchain:nodeKeys.writer' "$(cat writer.key)"`, undefined],
      [`pulumi config set --path 'lacchain:rpc.exposure' tls-only`, undefined],
      [`pulumi config set --path 'lacchain:rpc.proxy.burst' 80`, undefined],
    ] as const) {
      expect([line, asUser(line, input)]).toEqual([line, { code: 0, out: '' }]);
    }
  });

  it('the engine reads what they wrote, and the settings load as the offline reader loads them', async () => {
    const stack = await inlineStack('testnet', project.dir, `${user.home}/.pulumi-lacchain`, async () => {
      const { settings, secrets } = loadPulumiStack(project.dir);
      return { settings, secretNames: Object.keys(secrets.nodeKeys), sshKey: secrets.sshPrivateKey };
    });
    const { outputs } = await readingBack(stack, { outputs: 'values', summary: false }).up();
    const settings = outputs.settings.value;
    expect(settings.allowKeyDeletion).toBe(true);
    expect(settings.nodes[0].rpc).toMatchObject({ exposure: 'tls-only', proxy: { burst: 80 } });
    expect(outputs.secretNames.value).toEqual(['writer']);
    expect(outputs.sshKey.value).toBe(FAKE_SSH_KEY.trim());
    const offline = loadStack(
      'testnet',
      readStackConfigFile(path.join(project.dir, 'Pulumi.testnet.yaml')),
      readFileFromDisk,
    );
    expect(settings).toEqual(JSON.parse(JSON.stringify({ ...offline.settings, configFile: 'Pulumi.testnet.yaml' })));
  });
});

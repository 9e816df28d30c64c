/**
 * The newcomer's walk (issue 53): from a fresh clone to a stack `pulumi up` accepts, in at most ten commands, on each
 * path, as the README lists them. Each walk is one shell session of a new system user with a fresh home folder (no
 * npm cache of its own but a copy of this machine's, no stack, no backend), who clones the repository, runs the
 * README's commands in order and ends with `npm run plan`, which runs the policy rules `pulumi up` runs: it must pass
 * with no violation. Where a machine or a cluster is needed, ssh, ssh-keyscan and kubectl are the recorded ones of
 * tests/fixtures (the machine's host key, its os-release, the cluster's workers); podman and docker are recorded as
 * not installed. `pulumi up` itself, the last command, needs the machine: it is counted, not run.
 *
 * What it does not show: a newcomer typing answers. The walk has no terminal, so init takes its answers from the flags
 * of the README's examples (and more flags where the README leaves a question to the terminal), never from a prompt;
 * the questions asked at a terminal are driven in a pseudo-terminal by tests/tools/init.test.ts and
 * tests/tools/initImageDigest.test.ts (testing/pty_drive.py).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { deriveIdentity, parsePrivateKey } from '../../core/identity/nodeKey';
import { hostKeyFingerprint } from '../../cli/init/hostKeyScan';
import { FAKE_HOST_KEY } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';
import { newUser } from '../../testing/systemUser';
import { CLI_ENV, asNewUserSuite, findPulumiCli } from './pulumiCli';

jest.setTimeout(15 * 60 * 1000);
const suite = asNewUserSuite("the newcomer's walk with the real Pulumi CLI");

const README = fs.readFileSync(path.join(PROJECT_DIR, 'README.md'), 'utf8');
/** A command of the README: the shell block after the text `after`. */
const readmeBlock = (after: RegExp) => {
  const at = README.search(after);
  const block = /```sh\n([\s\S]*?)\n\s*```/.exec(README.slice(at));
  if (at < 0 || !block) throw new Error(`README.md has no shell block after ${after}`);
  return block[1]
    .split('\n')
    .map((line) => line.trim())
    .join('\n');
};
/** An inline command of the README (`npm run plan -- …`). */
const readmeInline = (starts: string) => {
  const found = new RegExp('`(' + starts.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '[^`]*)`').exec(README);
  if (!found) throw new Error(`README.md names no command starting ${starts}`);
  return found[1];
};
const CREATE_STACK = readmeBlock(/create the stack once/);
const INSTALL = readmeBlock(/First, in the clone, install the packages/);
const SSH_INIT = readmeBlock(/## First steps on a machine \(SSH\)/);
const KUBERNETES_INIT = readmeBlock(/## First steps on Kubernetes/);
const PLAN = readmeInline('npm run plan -- --stack testnet');
const AGENT = readmeInline('ssh-add ');
const DEPLOY = 'pulumi up --stack testnet';
const PASSPHRASE = CLI_ENV.PULUMI_CONFIG_PASSPHRASE;
/** The machine's address in place of the README's documentation address, which every network refuses. */
const MACHINE = '190.51.100.7';
const WORKERS = [
  'NAME       STATUS   ROLES           AGE   VERSION   INTERNAL-IP   EXTERNAL-IP     OS-IMAGE             KERNEL-VERSION',
  'worker-a   Ready    <none>          10d   v1.30.2   10.0.0.11     190.113.0.61    Ubuntu 22.04.4 LTS   5.15.0',
].join('\n');

/** The simple commands of a command line (`a && b && c` is three). */
const simpleCommands = (line: string) => line.split(/&&|;/).filter((part) => part.trim() !== '');

/** What a walk's session did: each command with its exit status and output. */
interface Step {
  command: string;
  status: number;
  output: string;
}

/**
 * Runs `commands` in one bash session of a new user (a command's `cd` and `export` hold for the next), after the
 * machine's own set-up: the Pulumi CLI and the recorded tools on PATH, an ssh agent running
 * with the user's key, this machine's npm cache copied for the user. Returns each command's exit and output.
 */
function walk(user: { name: string; home: string }, commands: string[], answers: Record<string, string>): Step[] {
  const { cli } = findPulumiCli();
  const bin = path.join(user.home, '.local', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.copyFileSync(cli!.binary, path.join(bin, 'pulumi'));
  fs.chmodSync(path.join(bin, 'pulumi'), 0o755);
  const answersDir = path.join(user.home, '.walk-answers');
  fs.mkdirSync(answersDir);
  for (const [file, text] of Object.entries(answers)) fs.writeFileSync(path.join(answersDir, file), text);
  const npmCache = path.join(user.home, '.npm');
  const cache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();
  if (fs.existsSync(cache)) fs.cpSync(cache, npmCache, { recursive: true });
  spawnSync('chown', ['-R', `${user.name}:`, user.home]);
  const fixtures = path.join(user.home, 'lacchain-besu-node', 'tests', 'fixtures');
  const session = [
    // The machine as the newcomer has it: the CLI and the tools, an ssh agent, npm's cache, no terminal.
    `export PATH=${bin}:${['recorded-ssh', 'recorded-kubectl', 'recorded-containers'].map((d) => path.join(fixtures, d)).join(':')}:$PATH`,
    `export PULUMI_SKIP_UPDATE_CHECK=true SSH_ANSWERS=${answersDir} KUBECTL_ANSWERS=${answersDir} KUBECTL_RECORD=${answersDir}/kubectl-calls`,
    'export npm_config_prefer_offline=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false',
    'ssh-keygen -q -t ed25519 -N \'\' -f ~/.ssh/id_ed25519 && eval "$(ssh-agent -s)" >/dev/null',
    'cd ~',
    // One stream, as on a terminal: each command's errors beside its output.
    'exec 2>&1',
    'step() { printf "\\n>>>STEP %s\\n" "$1"; eval "$1"; printf "\\n<<<EXIT %s\\n" "$?"; }',
    ...commands.map((command) => `step ${shellQuote(command)}`),
    'ssh-agent -k >/dev/null',
  ].join('\n');
  const result = spawnSync('su', ['-', user.name, '-c', 'bash -s'], {
    input: session,
    encoding: 'utf8',
    timeout: 12 * 60 * 1000,
  });
  const output = `${result.stdout}${result.stderr}`;
  return commands.map((command, i) => {
    const start = output.indexOf(`>>>STEP ${command}`);
    const end = output.indexOf('<<<EXIT ', start);
    if (start < 0 || end < 0) return { command, status: -1, output: output.slice(-4000) };
    const status = Number(/^<<<EXIT (\d+)/.exec(output.slice(end))![1]);
    return { command: commands[i], status, output: output.slice(start + command.length + 9, end) };
  });
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** What every walk asserts: each command passed, at most ten commands, and the plan's verdict. */
function expectDeployable(steps: Step[], listed: string[]) {
  for (const step of steps)
    expect({ command: step.command, status: step.status, output: step.output }).toMatchObject({
      status: 0,
    });
  const count = listed.flatMap(simpleCommands).length;
  expect(count).toBeLessThanOrEqual(10);
  const plan = steps[steps.length - 1];
  expect(plan.command).toBe(PLAN);
  expect(plan.output).not.toContain('policy violation');
  return count;
}

suite(
  "the newcomer's walk, init's questions answered by flags (no terminal): clone to a stack pulumi up accepts, in at most ten commands",
  () => {
    let repo: string;
    const users: Array<{ remove(): void }> = [];

    beforeAll(() => {
      // The repository's URL, as the newcomer clones it: a bare copy of this checkout's commit, the user's to read.
      repo = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-walk-repo-')), 'lacchain-besu-node.git');
      const cloned = spawnSync('git', ['clone', '--quiet', '--bare', PROJECT_DIR, repo], { encoding: 'utf8' });
      if (cloned.status !== 0) throw new Error(`git clone --bare failed: ${cloned.stderr}`);
      spawnSync('chmod', ['-R', 'a+rX', path.dirname(repo)]);
    });
    afterAll(() => {
      for (const user of users) user.remove();
      if (repo) fs.rmSync(path.dirname(repo), { recursive: true, force: true });
    });

    /** The clone command; the repository is given to the user first (git refuses a repository another user owns). */
    const clone = (user: { name: string }) => {
      spawnSync('chown', ['-R', `${user.name}:`, path.dirname(repo)]);
      return `git clone ${repo} lacchain-besu-node && cd lacchain-besu-node`;
    };
    const createStack = () => CREATE_STACK.replace("'<a long passphrase of your own>'", `'${PASSPHRASE}'`);

    it("on a machine over SSH: a writer by the README's init flags, its key stored, its host key read by init and checked against the fingerprint flag", () => {
      const user = newUser('lcwalk');
      users.push(user);
      // No terminal here: init's confirmation of the host key is its scripted form, the fingerprint from the console.
      const init = `${SSH_INIT.replace('198.51.100.7', MACHINE)} --host-key-fingerprint ${hostKeyFingerprint(FAKE_HOST_KEY)}`;
      const commands = [clone(user), INSTALL, createStack(), init, AGENT, PLAN];
      const steps = walk(user, commands, {
        'host-key': `${MACHINE} ${FAKE_HOST_KEY}\n`,
        'os-release': 'ID=debian\nVERSION_ID="12"\n',
      });
      const count = expectDeployable(steps, [...commands, DEPLOY]);
      expect(count).toBe(10);
      // Nothing left to do by hand: init ends with pulumi up next.
      expect(steps[3].output).toContain(`next: ${DEPLOY}\n`);
      expect(steps[3].output).not.toContain('Still to do');
      // The plan shows the enode of the key init stored (the session has the passphrase).
      const keyFile = path.join(user.home, '.lacchain-besu-node', 'keys', 'testnet-writer.key');
      const enode = deriveIdentity(parsePrivateKey(fs.readFileSync(keyFile, 'utf8')), MACHINE, 60606).enode;
      expect(steps[3].output).toContain(`enode:   ${enode}\n`);
      expect(steps[5].output).toContain(`"enode": "${enode}"`);
    });

    it("on Kubernetes: a writer pinned to a worker of the cluster by flags for the README's questions, its key stored", () => {
      const user = newUser('lcwalk');
      users.push(user);
      // No terminal here: the answers init would ask for are its flags.
      const init = `${KUBERNETES_INIT} --typenode writer --worker-name worker-a --public-ip 190.113.0.61 --node-name org-writer --node-email ops@example.org --keygen yes --store-secret yes`;
      const commands = [clone(user), INSTALL, createStack(), init, PLAN];
      const steps = walk(user, commands, { nodes: `${WORKERS}\n` });
      const count = expectDeployable(steps, [...commands, DEPLOY]);
      expect(count).toBe(9);
      expect(steps[3].output).toContain(`next: ${DEPLOY}\n`);
      expect(steps[4].output).toMatch(/"enode": "enode:\/\/[0-9a-f]{128}@190\.113\.0\.61:60606"/);
    });
  },
);

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The guided setup: typed for real in a pseudo-terminal (wrong answers asked again), run with flags, and the files it
 * writes planned offline as `pulumi up` would take them: after doing what its still-to-do list says, as printed, the
 * plan (with the policy rules) passes on both paths and both networks.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { parseDocument } from 'yaml';
import { parseWorkers, checkNetworkAnswer, checkNodeType } from '../../core/init/questions';
import { NETWORKS } from '../../core/catalog/networks';
import { parsePrivateKey, deriveIdentity } from '../../core/identity/nodeKey';
import { PROJECT_DIR, runNpmAsync } from '../../testing/run';
import { completedExample, EXAMPLE_NODES, stockStackWithExamples } from '../../testing/examples';
import {
  FAKE_HOST_KEY,
  TEST_BACKUP_IMAGE_DIGESTS,
  TEST_COMPANIONS,
  TEST_KEY_IMAGE_DIGESTS,
} from '../../testing/fixtures';
import { workFolder } from '../../testing/workFolder';
import { INIT_TOOL } from '../../cli/init/spec';
import { sshLoginLine } from '../../core/catalog/sshLogin';
import { hostKeyFingerprint } from '../../cli/init/hostKeyScan';

jest.setTimeout(180_000);

const work = workFolder('lacchain-init-');
/** How the plan says pulumi up logs in to a stack that stores no SSH key (docs/ssh.md#logging-in). */
const AGENT_NOTE = `note: ${sshLoginLine('agent')}`;
/** What init says of it, for an SSH node. */
const AGENT_LOGIN =
  'login: pulumi up logs in to the machines with your ssh agent (lacchain:sshAuthentication agent, the default; the private key stays out of the state): load the key the login user accepts into it first (ssh-add ~/.ssh/id_ed25519); a runner without an agent stores it instead (docs/ssh.md#logging-in)\n';
const kubectlDir = path.join(PROJECT_DIR, 'tests/fixtures/recorded-kubectl');
const sshDir = path.join(PROJECT_DIR, 'tests/fixtures/recorded-ssh');
/** Podman and docker as recorded: not installed unless a test gives their answers (initImageDigest.test.ts). */
const containersDir = path.join(PROJECT_DIR, 'tests/fixtures/recorded-containers');

/** A project folder: empty, or with the shipped stack of `withExample`, its example nodes in, and their values files. */
function project(name: string, withExample?: 'testnet' | 'mainnet', { asShipped = false } = {}): string {
  const dir = path.join(work, name);
  fs.mkdirSync(path.join(dir, 'values'), { recursive: true });
  if (withExample) {
    fs.writeFileSync(path.join(dir, `Pulumi.${withExample}.yaml`), stockStackWithExamples(withExample));
    // Their values as shipped (example addresses, refused) or as an operator completes them.
    const completed = completedExample(withExample, { pin: false });
    for (const file of EXAMPLE_NODES[withExample]) {
      const values = `values/${file}.yml`;
      if (asShipped) fs.copyFileSync(path.join(PROJECT_DIR, values), path.join(dir, values));
      else fs.writeFileSync(path.join(dir, values), completed[values]);
    }
  }
  return dir;
}

/**
 * Kubectl's and ssh's answers: no cluster unless a node table is given, no machine answering over SSH unless its
 * os-release is given.
 */
function kubectlEnv(nodes?: string, osRelease?: string) {
  const answers = fs.mkdtempSync(path.join(work, 'kubectl-'));
  if (nodes) fs.writeFileSync(path.join(answers, 'nodes'), nodes);
  if (osRelease) fs.writeFileSync(path.join(answers, 'os-release'), osRelease);
  return {
    PATH: `${kubectlDir}:${sshDir}:${containersDir}:${process.env.PATH}`,
    KUBECTL_RECORD: path.join(answers, 'calls'),
    KUBECTL_ANSWERS: answers,
    SSH_RECORD: path.join(answers, 'ssh-calls'),
    SSH_ANSWERS: answers,
  };
}

/** `npm run init` without a terminal. */
const init = (args: string[]) => runNpmAsync('init', args, { env: kubectlEnv() });

/** `npm run init` without a terminal, expected to pass: nothing on stderr, exit 0. */
async function initPasses(args: string[]) {
  const result = await init(args);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result;
}

/** Types answers at the prompts in a real pseudo-terminal. */
function typeInTerminal(args: string[], steps: Array<[RegExp, string]>, env: Record<string, string>) {
  const plan = {
    cmd: ['npm', 'run', '--silent', 'init', '--', ...args],
    cwd: PROJECT_DIR,
    env,
    steps: steps.map(([expect, send]) => ({ expect: expect.source, send })),
    timeout: 60,
  };
  return new Promise<{ code: number; transcript: string }>((resolve) => {
    const child = spawn('python3', [path.join(PROJECT_DIR, 'testing/pty_drive.py'), JSON.stringify(plan)]);
    let transcript = '';
    child.stdout.on('data', (d) => (transcript += d));
    child.stderr.on('data', (d) => (transcript += d));
    child.on('close', (code) => resolve({ code: code ?? -1, transcript }));
  });
}

/** The offline plan of the project's stack; `nodeKey` is `NODE=FILE`, the node's key file. */
async function planOffline(dir: string, stack: 'testnet' | 'mainnet', nodeKey?: string) {
  const out = path.join(dir, 'plan');
  const result = await runNpmAsync('plan', [
    '--stack',
    stack,
    '--config',
    path.join(dir, `Pulumi.${stack}.yaml`),
    '--out',
    out,
    ...(nodeKey ? ['--node-key-file', nodeKey] : []),
  ]);
  return { ...result, out };
}

/** One item of the still-to-do list as printed: its title, the lines to copy (indented 7) and the sentences. */
interface Item {
  what: string;
  commands: string[];
  text: string[];
}

/** The numbered still-to-do list of init's output. */
function stillToDo(stdout: string): Item[] {
  const start = stdout.indexOf('\nStill to do before pulumi up');
  if (start < 0) return [];
  const items: Item[] = [];
  for (const line of stdout.slice(start).split('\n').slice(2)) {
    const numbered = /^ {2}(\d+)\. (.*)$/.exec(line);
    if (numbered) {
      expect(Number(numbered[1])).toBe(items.length + 1);
      items.push({ what: numbered[2], commands: [], text: [] });
    } else if (line.startsWith('       ')) items[items.length - 1].commands.push(line.slice(7));
    else if (line.startsWith('     ')) items[items.length - 1].text.push(line.slice(5));
    else break;
  }
  return items;
}

/** Sets a value in a YAML file at a path of keys, keeping the rest. */
function setInFile(file: string, keys: string[], value: unknown) {
  const document = parseDocument(fs.readFileSync(file, 'utf8'));
  document.setIn(keys, value);
  fs.writeFileSync(file, document.toString({ lineWidth: 0 }));
}

/** A made-up digest for each value the list asks for (never a real image's). */
function digestFor(key: string): string {
  if (key.endsWith('.sha256')) return TEST_COMPANIONS[key.split('.')[1] as 'rotationValidator'].sha256;
  if (key.includes('ethstats')) return TEST_COMPANIONS.ethstats.imageDigest;
  if (key.includes('relaySigner')) return TEST_KEY_IMAGE_DIGESTS.relaySigner;
  if (key.includes('rotationValidator')) return TEST_KEY_IMAGE_DIGESTS.rotationValidator;
  if (key === 'deploy.backupImageDigest') return TEST_BACKUP_IMAGE_DIGESTS.backupImageDigest;
  if (key === 'deploy.kubectlImageDigest') return TEST_BACKUP_IMAGE_DIGESTS.kubectlImageDigest;
  return TEST_KEY_IMAGE_DIGESTS.besu;
}

/**
 * Does what each item of the list says, the way its commands would: `pulumi config set` into the stack file (a
 * secret as the encrypted value pulumi leaves), the host key into the inventory (or through the init command the item
 * prints), a digest into the values file it names. Any item not understood fails the test.
 */
async function follow(dir: string, stack: 'testnet' | 'mainnet', items: Item[], hostKeyThroughInit = false) {
  const stackFile = path.join(dir, `Pulumi.${stack}.yaml`);
  for (const item of items) {
    const done: string[] = [];
    for (const command of item.commands) {
      const config = /^pulumi config set --stack (\S+) (--secret )?(?:--path )?'?([^' ]+)'? (.*)$/.exec(command);
      if (config) {
        expect(config[1]).toBe(stack);
        const [top, ...rest] = config[3].split('.');
        const secret = config[2] !== undefined;
        if (secret) expect(config[4]).toMatch(/^< /);
        setInFile(stackFile, ['config', top, ...rest], secret ? { secure: 'v1:x' } : digestFor(config[3]));
        done.push(command);
      } else if (/^ssh-keyscan -t ed25519 \S+$/.test(command) || command.startsWith('docker buildx imagetools')) {
        done.push(command); // reads the value the next line sets
      } else if (command.startsWith('npm run init -- ') && hostKeyThroughInit) {
        const args = command
          .slice('npm run init -- '.length)
          .replace("'<the line ssh-keyscan printed>'", `'190.51.100.7 ${FAKE_HOST_KEY}'`);
        const words = [...args.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
        await initPasses(words);
        done.push(command);
      } else if (/^ {2}(imageDigest|backupImageDigest|kubectlImageDigest): sha256:<digest>$/.test(command)) {
        const file = /then in (\S+), under deploy:/.exec(item.text.join(' '))?.[1];
        const field = command.trim().split(':')[0];
        expect(file).toBeDefined();
        setInFile(path.join(dir, file as string), ['deploy', field], digestFor(`deploy.${field}`));
        done.push(command);
      }
    }
    const hostKey = /inventory of node (\S+) in (\S+),/.exec(item.text.join(' '));
    if (hostKey && !hostKeyThroughInit) {
      const document = parseDocument(fs.readFileSync(stackFile, 'utf8'));
      const nodes = document.getIn(['config', 'lacchain:nodes']) as any;
      const index = nodes.items.findIndex((n: any) => n.get('name') === hostKey[1]);
      setInFile(stackFile, ['config', 'lacchain:nodes', index, 'inventory', 'host_key'], FAKE_HOST_KEY);
    }
    // Every item is one of those: nothing to fix by hand in what init wrote.
    expect({ item: item.what, done: done.length > 0 }).toEqual({ item: item.what, done: true });
  }
}

const WORKERS = [
  'NAME       STATUS   ROLES           AGE   VERSION   INTERNAL-IP   EXTERNAL-IP     OS-IMAGE             KERNEL-VERSION',
  'cp-1       Ready    control-plane   10d   v1.30.2   10.0.0.10     <none>          Ubuntu 22.04.4 LTS   5.15.0',
  'worker-a   Ready    <none>          10d   v1.30.2   10.0.0.11     190.113.0.61    Ubuntu 22.04.4 LTS   5.15.0',
  'worker-b   Ready    <none>          10d   v1.30.2   10.0.0.12     190.113.0.62    Ubuntu 22.04.4 LTS   5.15.0',
].join('\n');

/** A validator over SSH at a made-up public address, by its flags (the node type and the stack aside). */
const SSH_VALIDATOR = [
  ...['--target', 'ssh', '--host', '190.51.100.7'],
  ...['--node-name', 'org-validator', '--node-email', 'ops@example.org'],
];

/**
 * An SSH validator by its flags (the README's example before it showed a writer, whose relay signer the catalog pins),
 * the machine's address in place of an example one, in a project folder and with its own key folder.
 */
const README_EXAMPLE = [
  ...['--typenode', '0', '--network', '1', '--target', 'ssh', '--host', '190.51.100.7'],
  ...['--node-name', 'org-validator', '--node-email', 'ops@example.org', '--user', 'ubuntu'],
  ...['--keygen', 'yes', '--store-secret', 'no'],
];

const read = (file: string) => fs.readFileSync(file, 'utf8');
const stackOf = (dir: string, stack = 'testnet') => yaml.load(read(path.join(dir, `Pulumi.${stack}.yaml`))) as any;

describe('an SSH validator by its flags (the still-to-do list of a validator)', () => {
  const dir = project('readme', 'testnet');
  const keys = `${dir}-keys`;
  const keyFile = path.join(keys, 'testnet-validator.key');
  /** Its command line, into this project folder and key folder. */
  const readmeArgs = ['--stack', 'testnet', '--dir', dir, '--key-dir', keys, ...README_EXAMPLE];
  let first: { code: number; stdout: string; stderr: string };
  beforeAll(async () => {
    first = await init(readmeArgs);
  });

  it('exits 0 with the stack and the key written, the enode and the address printed', () => {
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const identity = deriveIdentity(parsePrivateKey(read(keyFile)), '190.51.100.7', 60606);
    expect(first.stdout).toContain(`enode:   ${identity.enode}\naddress: ${identity.address}\n`);
    expect(first.stdout).toContain(
      '\nnode validator: validator on open-protestnet, ssh (named org-validator on the network)\n',
    );
    // Defaults stay implicit (the SSH port, the release: a later default applies), the host key is still to give.
    expect(stackOf(dir).config['lacchain:nodes'][1]).toEqual({
      name: 'validator',
      typenode: 'validator',
      target: 'ssh',
      inventory: {
        host: '190.51.100.7',
        node_ip: '190.51.100.7',
        node_name: 'org-validator',
        node_email: 'ops@example.org',
        user: 'ubuntu',
      },
    });
    expect(read(path.join(dir, 'Pulumi.testnet.yaml'))).toContain(
      '    # A validator on a remote machine over SSH; its settings are in its inventory.\n    - name: validator\n',
    );
  });

  it('lists what is still to do, each with its command', () => {
    const items = stillToDo(first.stdout);
    const commands = items.flatMap((i) => i.commands);
    expect(commands).toEqual([
      'ssh-keyscan -t ed25519 190.51.100.7',
      `npm run init -- --stack testnet --dir '${dir}' --key-dir '${keys}' --name validator --replace --keygen yes --store-secret no --host-key '<the line ssh-keyscan printed>'`,
      // No digest of the monitoring client's image (on testnet a machine runs its tag, flagged by the plan) nor of the
      // rotation client (the catalog pins the executable its URL names).
      `pulumi config set --stack testnet --secret --path 'lacchain:nodeKeys.validator' < '${keyFile}'`,
    ]);
    expect(items[0].what).toMatch(/the SSH host key of 190\.51\.100\.7 \(host_key of node validator\)/);
    // pulumi up logs in with the agent: no private key to store in the state, only to load into the agent.
    expect(first.stdout).toContain(`\n${AGENT_LOGIN}`);
    expect(items[0].text.join(' ')).toMatch(/as host_key in the inventory of node validator in Pulumi\.testnet\.yaml/);
    expect(first.stdout).toMatch(
      /\nthen: pulumi up --stack testnet\nand get node \S+ permissioned: .*Where: tech\.support@lac-net\.net\..*\n$/,
    );
  });

  it('following the list as printed (the host key through init again) gives a stack whose plan passes', async () => {
    await follow(dir, 'testnet', stillToDo(first.stdout), true);
    const planned = await planOffline(dir, 'testnet', `validator=${keyFile}`);
    expect(planned.stderr).not.toMatch(/policy violation/);
    expect(planned.code).toBe(0);
    const identity = deriveIdentity(parsePrivateKey(read(keyFile)), '190.51.100.7', 60606);
    expect(JSON.parse(planned.stdout).nodes.validator.enode).toBe(identity.enode);
    expect(fs.readdirSync(path.join(planned.out, 'remote', 'validator'))).toContain('10-companions.sh');
    expect(stackOf(dir).config['lacchain:nodes'][1].inventory.host_key).toBe(FAKE_HOST_KEY);
  });

  it('run again, reuses the key and its enode, keeps the values, and says when nothing changed', async () => {
    const before = read(path.join(dir, 'Pulumi.testnet.yaml'));
    const again = await initPasses([...readmeArgs, '--replace']);
    expect(again.stdout).toContain(`using the node key ${keyFile}`);
    expect(again.stdout).toContain(`${path.join(dir, 'Pulumi.testnet.yaml')}: no change`);
    expect(again.stdout).not.toMatch(/^wrote /m);
    expect(read(path.join(dir, 'Pulumi.testnet.yaml'))).toBe(before);
    const identity = deriveIdentity(parsePrivateKey(read(keyFile)), '190.51.100.7', 60606);
    expect(again.stdout).toContain(`enode:   ${identity.enode}`);
    // What was done is no longer on the list: the host key is kept as the node's current value.
    expect(stillToDo(again.stdout).flatMap((i) => i.commands)).toEqual([
      `pulumi config set --stack testnet --secret --path 'lacchain:nodeKeys.validator' < '${keyFile}'`,
    ]);
    // Only what is given changes; the rest is the node's current values.
    const moved = await init([
      '--stack',
      'testnet',
      '--dir',
      dir,
      '--name',
      'validator',
      '--replace',
      '--host',
      '190.51.100.8',
      '--keygen',
      'no',
    ]);
    expect(moved.code).toBe(0);
    expect(stackOf(dir).config['lacchain:nodes'][1].inventory).toEqual({
      host: '190.51.100.8',
      node_ip: '190.51.100.7',
      node_name: 'org-validator',
      node_email: 'ops@example.org',
      user: 'ubuntu',
      host_key: FAKE_HOST_KEY,
    });
    expect(stackOf(dir).config['lacchain:sshPrivateKey']).toBeUndefined();
  });
});

describe('following the list gives a stack whose plan passes', () => {
  /** init's arguments for a mainnet validator on the machine at `host`, into project `dir` and key folder `keys`. */
  const mainnetSshValidator = (dir: string, keys: string, host: string) => [
    ...['--stack', 'mainnet', '--dir', dir, '--key-dir', keys, '--typenode', 'validator', '--target', 'ssh'],
    ...['--host', host, '--node-name', 'org-validator', '--node-email', 'ops@example.org'],
  ];

  it('mainnet, ssh: a public address, the host key written into the inventory', async () => {
    const dir = project('mainnet-ssh');
    const keys = `${dir}-keys`;
    const result = await initPasses([
      ...mainnetSshValidator(dir, keys, '190.0.2.10'),
      ...['--keygen', 'yes', '--store-secret', 'no'],
    ]);
    const items = stillToDo(result.stdout);
    expect(items.map((i) => i.commands[0]).sort()).toEqual([
      "pulumi config set --stack mainnet --path 'lacchain:companions.ethstats.imageDigest' sha256:<digest>",
      `pulumi config set --stack mainnet --secret --path 'lacchain:nodeKeys.validator' < '${path.join(keys, 'mainnet-validator.key')}'`,
      'ssh-keyscan -t ed25519 190.0.2.10',
    ]);
    // No opt-out offered on mainnet.
    expect(result.stdout).not.toContain('--accept-any-host-key');
    await follow(dir, 'mainnet', items);
    const planned = await planOffline(dir, 'mainnet', `validator=${path.join(keys, 'mainnet-validator.key')}`);
    // How pulumi up logs in (the agent), and only the advice to a mainnet validator whose key is in the state (the
    // guided setup's keyCustody: stack).
    expect(planned.stderr.split('\n').filter(Boolean)).toEqual([
      AGENT_NOTE,
      expect.stringMatching(/^policy warning: \[validator-key-custody, advisory\] /),
    ]);
    expect(planned.code).toBe(0);
  });

  it('mainnet, ssh, the key kept on the machine (--key-custody machine): no key made here, no advice in the plan', async () => {
    const dir = project('mainnet-ssh-machine');
    const keys = `${dir}-keys`;
    const result = await initPasses([...mainnetSshValidator(dir, keys, '190.0.2.11'), ...['--key-custody', 'machine']]);
    expect(stackOf(dir, 'mainnet').config['lacchain:nodes'][0]).toMatchObject({
      name: 'validator',
      keyCustody: 'machine',
    });
    expect(fs.existsSync(keys)).toBe(false);
    expect(result.stdout).toContain('the node key is made on the machine by the first pulumi up and never leaves it');
    const items = stillToDo(result.stdout);
    expect(items.map((i) => i.commands[0]).join('\n')).not.toContain('nodeKeys');
    expect(result.stdout).toContain('--key-custody machine --host-key');
    await follow(dir, 'mainnet', items);
    const planned = await planOffline(dir, 'mainnet');
    expect([planned.code, planned.stderr]).toEqual([0, `${AGENT_NOTE}\n`]);
  });

  it('refuses machine custody for a kubernetes node, and a key made here for a machine-custody node', async () => {
    const k8s = await init([
      ...['--stack', 'testnet', '--dir', project('custody-k8s'), '--typenode', 'writer', '--target', 'kubernetes'],
      ...['--key-custody', 'machine'],
    ]);
    expect([k8s.code, k8s.stderr]).toEqual([
      2,
      expect.stringMatching(/--key-custody: given "machine"; allowed: stack for a kubernetes node/),
    ]);
    const keygen = await init([
      ...['--stack', 'testnet', '--dir', project('custody-keygen'), '--typenode', 'validator', '--target', 'ssh'],
      ...['--key-custody', 'machine', '--keygen', 'yes'],
    ]);
    expect([keygen.code, keygen.stderr]).toEqual([
      2,
      expect.stringMatching(/--keygen: a machine-custody node gets its key on the machine/),
    ]);
  });

  it('mainnet, kubernetes: every image digest the policy requires, where it goes', async () => {
    const dir = project('mainnet-kubernetes');
    const result = await initPasses([
      ...['--stack', 'mainnet', '--dir', dir, '--typenode', 'writer', '--target', 'kubernetes'],
      ...['--worker-name', 'worker-1', '--public-ip', '190.0.2.20', '--node-name', 'org-writer'],
      ...['--node-email', 'ops@example.org', '--keygen', 'no'],
    ]);
    expect(result.stdout).toContain('no node key yet: pulumi up makes one');
    const items = stillToDo(result.stdout);
    expect(items.map((i) => i.commands)).toEqual([
      ['docker buildx imagetools inspect hyperledger/besu:23.4.1', '  imageDigest: sha256:<digest>'],
      [
        'docker buildx imagetools inspect lacnetnetworks/relay-signer-lacchain:1.0.2',
        "pulumi config set --stack mainnet --path 'lacchain:companions.relaySigner.imageDigest' sha256:<digest>",
      ],
      ['docker buildx imagetools inspect restic/restic:0.18.1', '  backupImageDigest: sha256:<digest>'],
    ]);
    expect(items[0].text).toEqual(['then in values/writer.yml, under deploy:']);
    expect(items[0].what).toMatch(/container writer-besu receives the node key: node-key-images-pinned/);
    // restic's image opens the node's data (the pod's backup before a release change): pinned in the same file.
    expect(items[2].text).toEqual(['then in values/writer.yml, under deploy:']);
    expect(items[2].what).toMatch(
      /container backup-before-release-change touches the node's data \(it mounts the data volume\): node-key-images-pinned/,
    );
    // Before: the plan fails the policy, as pulumi up would.
    expect((await planOffline(dir, 'mainnet')).code).not.toBe(0);
    await follow(dir, 'mainnet', items);
    const planned = await planOffline(dir, 'mainnet');
    expect(planned.stderr).not.toMatch(/policy violation/);
    expect(planned.code).toBe(0);
    // The defaults the operator took stay implicit.
    expect((yaml.load(read(path.join(dir, 'values/writer.yml'))) as any).deploy).toEqual({
      network: 'main-net',
      typenode: 'writer',
      workerName: 'worker-1',
      publicIP: '190.0.2.20',
      p2p: { host: '190.0.2.20' },
      nodeName: 'org-writer',
      nodeEmail: 'ops@example.org',
      imageDigest: TEST_KEY_IMAGE_DIGESTS.besu,
      backupImageDigest: TEST_BACKUP_IMAGE_DIGESTS.backupImageDigest,
    });
  });

  it('testnet, kubernetes: a second writer beside the shipped one, with its own values file', async () => {
    const dir = project('testnet-kubernetes', 'testnet');
    const writerValues = read(path.join(dir, 'values/writer.yml'));
    const result = await initPasses([
      ...['--stack', 'testnet', '--dir', dir, '--typenode', 'writer', '--target', 'kubernetes', '--name', 'w2'],
      ...['--worker-name', 'worker-3', '--public-ip', '190.113.0.40', '--node-name', 'org-w2'],
      ...['--node-email', 'ops@example.org', '--keygen', 'no'],
    ]);
    expect(result.stdout).toContain(`wrote ${path.join(dir, 'values/w2.yml')}`);
    expect(read(path.join(dir, 'values/writer.yml'))).toBe(writerValues);
    expect(stackOf(dir).config['lacchain:nodes'][1]).toEqual({
      name: 'w2',
      typenode: 'writer',
      target: 'kubernetes',
      values: 'values/w2.yml',
    });
    const items = stillToDo(result.stdout);
    expect(items).toEqual([]);
    expect(result.stdout).toMatch(/\nnext: pulumi up --stack testnet\nand get node \S+ permissioned: .*\n$/);
    const planned = await planOffline(dir, 'testnet');
    expect(planned.stderr).not.toMatch(/policy violation/);
    expect(planned.code).toBe(0);
    expect(Object.keys(JSON.parse(planned.stdout).nodes)).toEqual(['writer', 'w2']);
  });
});

describe('--remove, and the nodes this run did not add', () => {
  it('says the stack holds a writer this run did not add, and --remove takes it out of the stack file only', async () => {
    const dir = project('remove', 'testnet');
    const added = await init([
      ...['--stack', 'testnet', '--dir', dir, '--typenode', '0', '--network', '1', '--target', 'ssh'],
      ...['--host', '190.51.100.7', '--node-name', 'org-validator'],
      ...['--node-email', 'ops@example.org', '--keygen', 'no'],
    ]);
    expect(added.code).toBe(0);
    expect(added.stdout).toContain(
      'the stack also holds nodes this run did not add, which pulumi up deploys too; to remove one:\n' +
        '  writer (a writer on kubernetes): npm run init -- --stack testnet --remove writer\n',
    );
    const writerValues = read(path.join(dir, 'values/writer.yml'));
    const removed = await init(['--stack', 'testnet', '--dir', dir, '--remove', 'writer']);
    expect([removed.code, removed.stderr]).toEqual([0, '']);
    expect(removed.stdout).toContain(
      `removed node writer (a writer on kubernetes) from ${path.join(dir, 'Pulumi.testnet.yaml')}`,
    );
    expect(stackOf(dir).config['lacchain:nodes'].map((n: { name: string }) => n.name)).toEqual(['validator']);
    expect(read(path.join(dir, 'values/writer.yml'))).toBe(writerValues);
    const wrong = await init(['--stack', 'testnet', '--dir', dir, '--remove', 'validtor']);
    expect([wrong.code, wrong.stderr.trim()]).toEqual([
      2,
      'error: --remove: given "validtor" (did you mean validator?); allowed: a node of Pulumi.testnet.yaml (validator)',
    ]);
  });
});

describe('--context', () => {
  it('is written as lacchain:kubeContext: pulumi up deploys to the cluster whose workers were listed, not the current one', async () => {
    const dir = project('context', 'testnet');
    const env = kubectlEnv();
    const result = await runNpmAsync(
      'init',
      [
        ...['--stack', 'testnet', '--dir', dir, '--typenode', 'writer', '--target', 'kubernetes', '--name', 'w2'],
        ...['--context', 'my-cluster', '--worker-name', 'worker-3', '--public-ip', '190.113.0.40'],
        ...['--node-name', 'org-w2', '--node-email', 'ops@example.org', '--keygen', 'no'],
      ],
      { env },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(stackOf(dir).config['lacchain:kubeContext']).toBe('my-cluster');
    // The key will be the stack's: losing the state loses it.
    expect(result.stdout).toContain(
      'the node key lives in the stack state: back up ~/.pulumi-lacchain and PULUMI_CONFIG_PASSPHRASE together',
    );
    expect(read(env.KUBECTL_RECORD)).toContain('--context my-cluster get nodes');
    const planned = await planOffline(dir, 'testnet');
    expect(planned.code).toBe(0);
    expect(planned.stderr).toContain('note: writer, w2 deploy to kubectl context my-cluster (lacchain:kubeContext)');
  });
});

describe('a node already in the stack', () => {
  it('is never replaced without a terminal unless --replace; replaced, its comment says what it now is', async () => {
    const dir = project('replace', 'testnet');
    const stackText = read(path.join(dir, 'Pulumi.testnet.yaml'));
    const args = [
      ...['--stack', 'testnet', '--dir', dir, '--typenode', 'writer', '--target', 'ssh', '--host', '190.51.100.9'],
      ...['--node-email', 'ops@example.org', '--keygen', 'no'],
    ];
    const refused = await init(args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /--name: node writer is already in Pulumi\.testnet\.yaml \(a writer on Kubernetes\); --replace replaces it/,
    );
    expect(read(path.join(dir, 'Pulumi.testnet.yaml'))).toBe(stackText);

    const replaced = await initPasses([...args, '--replace']);
    const text = read(path.join(dir, 'Pulumi.testnet.yaml'));
    expect(text).toContain(
      '    # A writer on a remote machine over SSH; its settings are in its inventory.\n    - name: writer\n',
    );
    expect(text).not.toContain('A writer on your Kubernetes cluster');
    // The writer's values (its name and e-mail on the network) are the defaults of its new inventory.
    expect(stackOf(dir).config['lacchain:nodes']).toEqual([
      {
        name: 'writer',
        typenode: 'writer',
        target: 'ssh',
        inventory: {
          host: '190.51.100.9',
          node_ip: '190.51.100.9',
          node_name: 'my-org-writer',
          node_email: 'ops@example.org',
          user: 'ubuntu',
        },
      },
    ]);
    expect(replaced.stdout).toContain('values/writer.yml is no longer read by any node');
  });

  it("a second node of a type on mainnet leaves the first one's values file as it was", async () => {
    const dir = project('mainnet-second', 'mainnet');
    const validatorValues = read(path.join(dir, 'values/validator.yml'));
    const result = await init([
      ...['--stack', 'mainnet', '--dir', dir, '--typenode', '0', '--network', '0', '--target', 'kubernetes'],
      ...['--name', 'v2', '--worker-name', 'worker-9', '--public-ip', '190.0.2.30', '--node-name', 'org-v2'],
      ...['--node-email', 'ops@example.org', '--keygen', 'no'],
    ]);
    expect(result.code).toBe(0);
    expect(read(path.join(dir, 'values/validator.yml'))).toBe(validatorValues);
    expect((yaml.load(read(path.join(dir, 'values/v2.yml'))) as any).deploy.p2p.host).toBe('190.0.2.30');
    expect(stackOf(dir, 'mainnet').config['lacchain:nodes'].map((n: any) => [n.name, n.values])).toEqual([
      ['validator', undefined],
      ['bootnode', undefined],
      ['v2', 'values/v2.yml'],
    ]);
  });
});

describe('the host key read by init itself (ssh-keyscan to --host only), written once its fingerprint is confirmed (#53)', () => {
  const FINGERPRINT = hostKeyFingerprint(FAKE_HOST_KEY);
  /** Another machine's key: what answers when it is not the operator's machine. */
  const OTHER_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG90aGVyLW1hY2hpbmUtaG9zdC1rZXktMDEyMzQ1Njc4OQ';
  /** The environment where the machine answers ssh-keyscan with `key` (none: it does not answer). */
  const answering = (key?: string) => {
    const env = kubectlEnv();
    if (key) fs.writeFileSync(path.join(env.SSH_ANSWERS, 'host-key'), `190.0.2.40 ${key}\n`);
    return env;
  };
  const keyscanCalls = (env: Record<string, string>) => read(`${env.SSH_RECORD}-keyscan`).trim().split('\n');
  const validator = (dir: string, extra: string[]) => [
    ...['--stack', 'mainnet', '--dir', dir, '--typenode', 'validator', '--target', 'ssh', '--host', '190.0.2.40'],
    ...['--node-name', 'org-validator', '--node-email', 'ops@example.org', '--keygen', 'no', '--os', 'debian 13'],
    ...extra,
  ];

  it('is the fingerprint ssh-keygen -l prints', () => {
    expect(FINGERPRINT).toBe('SHA256:P/KkvX2yUj14jrZeTlNQ1wzaNA1etLSZ8leMOlhTsTM');
  });

  it('--host-key-fingerprint: the key the machine answers with is written when it matches, on mainnet too', async () => {
    const dir = project('fingerprint-match');
    const env = answering(FAKE_HOST_KEY);
    const result = await runNpmAsync('init', validator(dir, ['--host-key-fingerprint', FINGERPRINT]), { env });
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(stackOf(dir, 'mainnet').config['lacchain:nodes'][0].inventory.host_key).toBe(FAKE_HOST_KEY);
    expect(keyscanCalls(env)).toEqual(['-T 10 -p 22 -t ed25519 190.0.2.40']);
    expect(stillToDo(result.stdout).map((i) => i.commands[0])).not.toContain('ssh-keyscan -t ed25519 190.0.2.40');
  });

  it('--host-key-fingerprint: refused, nothing written, when the machine answers with another key or none', async () => {
    const other = project('fingerprint-other');
    const differs = await runNpmAsync('init', validator(other, ['--host-key-fingerprint', FINGERPRINT]), {
      env: answering(OTHER_KEY),
    });
    expect([differs.code, differs.stderr.trim()]).toEqual([
      2,
      `error: --host-key-fingerprint: given ${FINGERPRINT}, but 190.0.2.40 answers with ${hostKeyFingerprint(OTHER_KEY)}: refused, nothing written (not the machine you know, or its key changed); allowed: the fingerprint of the key 190.0.2.40 answers with, checked on a channel you trust`,
    ]);
    expect(fs.existsSync(path.join(other, 'Pulumi.mainnet.yaml'))).toBe(false);
    const silent = await runNpmAsync(
      'init',
      validator(project('fingerprint-none'), ['--host-key-fingerprint', FINGERPRINT]),
      {
        env: answering(),
      },
    );
    expect([silent.code, silent.stderr.trim()]).toEqual([
      2,
      'error: --host-key-fingerprint: ssh-keyscan -t ed25519 190.0.2.40 read no host key; allowed: a machine that answers SSH at 190.0.2.40:22, or --host-key',
    ]);
    const malformed = await runNpmAsync(
      'init',
      validator(project('fingerprint-bad'), ['--host-key-fingerprint', 'abc']),
      {
        env: answering(FAKE_HOST_KEY),
      },
    );
    expect([malformed.code, malformed.stderr.trim()]).toEqual([
      2,
      'error: --host-key-fingerprint: given a value that is not a fingerprint; allowed: SHA256: and 43 base64 characters, as ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub prints it on the machine',
    ]);
  });

  it('without a fingerprint and no terminal, trusts nothing: the host key stays on the list', async () => {
    const dir = project('fingerprint-absent');
    const env = answering(FAKE_HOST_KEY);
    const result = await runNpmAsync('init', validator(dir, []), { env });
    expect(result.code).toBe(0);
    expect(stackOf(dir, 'mainnet').config['lacchain:nodes'][0].inventory.host_key).toBeUndefined();
    expect(stillToDo(result.stdout).map((i) => i.commands[0])).toContain('ssh-keyscan -t ed25519 190.0.2.40');
    expect(fs.existsSync(`${env.SSH_RECORD}-keyscan`)).toBe(false);
  });

  it('in a terminal: shows the fingerprint, writes the key once confirmed, asks for it as before when not', async () => {
    const confirmedDir = project('typed-fingerprint');
    const steps = (answer: string): Array<[RegExp, string]> => [
      [/name — .*\[validator\]:/, ''],
      [/Where the node key lives: stack .* or machine .*\[stack\]:/, ''],
      [/host — /, '190.0.2.40'],
      [/node_ip — .*\[190\.0\.2\.40\]:/, ''],
      [/node_name/, 'org-validator'],
      [/node_email/, 'ops@example.org'],
      [/user — .*\[ubuntu\]:/, ''],
      [/port — .*\[22\]:/, ''],
      [
        new RegExp(
          `host_key — 190\\.0\\.2\\.40 answers \\(ssh-keyscan -t ed25519 190\\.0\\.2\\.40\\) with the key ${FINGERPRINT.replace(/[+/]/g, '\\$&')}: is it your machine's, .*\\[y/N\\]`,
        ),
        answer,
      ],
      [/node_release_version — .*\[/, ''],
      [/dns_name — .*\[none\]:/, ''],
    ];
    const args = (dir: string) => [
      ...['--stack', 'mainnet', '--dir', dir, '--typenode', 'validator', '--target', 'ssh', '--keygen', 'no'],
      ...['--os', 'debian 13'],
    ];
    const confirmed = await typeInTerminal(args(confirmedDir), steps('y'), answering(FAKE_HOST_KEY));
    expect([confirmed.code, confirmed.transcript]).toEqual([0, expect.stringContaining('node validator: validator')]);
    expect(stackOf(confirmedDir, 'mainnet').config['lacchain:nodes'][0].inventory.host_key).toBe(FAKE_HOST_KEY);
    // Not confirmed: the question of before, where "later" puts the key on the list.
    const declinedDir = project('typed-fingerprint-declined');
    const declined = await typeInTerminal(
      args(declinedDir),
      [
        ...steps('n').slice(0, -2),
        [/host_key — .*\(required; "later" to add it after init\):/, 'later'],
        [/node_release_version — .*\[/, ''],
        [/dns_name — .*\[none\]:/, ''],
      ],
      answering(FAKE_HOST_KEY),
    );
    expect(declined.code).toBe(0);
    expect(stackOf(declinedDir, 'mainnet').config['lacchain:nodes'][0].inventory.host_key).toBeUndefined();
    expect(declined.transcript).toContain('ssh-keyscan -t ed25519 190.0.2.40');
  });
});

describe("the machine's system, read over SSH with the pinned host key (cat /etc/os-release)", () => {
  const DEBIAN_13 = 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nNAME="Debian GNU/Linux"\nVERSION_ID="13"\nID=debian\n';
  const UBUNTU_14 =
    'NAME="Ubuntu"\nVERSION="14.04.6 LTS, Trusty Tahr"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="14.04"\n';
  const writer = (dir: string, extra: string[] = []) => [
    ...['--stack', 'testnet', '--dir', dir, '--typenode', 'writer', '--target', 'ssh', '--host', '190.51.100.7'],
    ...['--node-name', 'org-writer', '--node-email', 'ops@example.org', '--keygen', 'no', ...extra],
  ];
  const withHostKey = ['--host-key', FAKE_HOST_KEY];
  const run = (args: string[], osRelease?: string) => {
    const env = kubectlEnv(undefined, osRelease);
    return runNpmAsync('init', args, { env }).then((result) => ({
      ...result,
      calls: fs.existsSync(env.SSH_RECORD) ? read(env.SSH_RECORD).trim().split('\n') : [],
    }));
  };

  it('is written as the inventory os, the pinned key the only one trusted', async () => {
    const dir = project('os-read');
    const result = await run(writer(dir, withHostKey), DEBIAN_13);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toContain("os: debian 13 (read from 190.51.100.7's /etc/os-release over SSH)");
    expect(stackOf(dir).config['lacchain:nodes'][0].inventory.os).toBe('debian 13');
    expect(result.calls).toHaveLength(1);
    expect(result.calls[0]).toMatch(
      /^-o BatchMode=yes .*-o UserKnownHostsFile=\S+known_hosts -o GlobalKnownHostsFile=\/dev\/null -o KnownHostsCommand=none -o StrictHostKeyChecking=yes -o ControlMaster=no -o ControlPath=none -p 22 ubuntu@190\.51\.100\.7 cat \/etc\/os-release$/,
    );
  });

  it('refuses a system the preflight step would refuse, naming the machine, nothing written', async () => {
    const dir = project('os-refused');
    const result = await run(writer(dir, withHostKey), UBUNTU_14);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error: the machine 190\.51\.100\.7 runs ubuntu 14\.04 \(its \/etc\/os-release\): given "ubuntu 14\.04"; allowed: the machine's system/,
    );
    expect(fs.existsSync(path.join(dir, 'Pulumi.testnet.yaml'))).toBe(false);
  });

  it('goes on without it when the machine does not answer, saying the preflight step checks it', async () => {
    const dir = project('os-unreachable');
    const result = await run(writer(dir, withHostKey));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'os: not read from 190.51.100.7 (ssh: connect to host 190.51.100.7: Connection refused): the preflight step checks the system at pulumi up (--os gives it now)',
    );
    expect(stackOf(dir).config['lacchain:nodes'][0].inventory.os).toBeUndefined();
  });

  it('is not read without a pinned host key, nor when --os gives it', async () => {
    const unpinned = await run(writer(project('os-unpinned')), DEBIAN_13);
    const given = await run(writer(project('os-given'), [...withHostKey, '--os', 'ubuntu 24.04']), DEBIAN_13);
    expect([unpinned.code, unpinned.calls, given.code, given.calls]).toEqual([0, [], 0, []]);
    expect(stackOf(path.join(work, 'os-given')).config['lacchain:nodes'][0].inventory.os).toBe('ubuntu 24.04');
  });
});

describe('the host key', () => {
  const ssh = SSH_VALIDATOR;

  /** A testnet validator over SSH, no key made, with the flags given. */
  const validator = (dir: string, ...extra: string[]) =>
    init(['--stack', 'testnet', '--dir', dir, '--typenode', 'validator', ...ssh, ...extra, '--keygen', 'no']);

  it('--accept-any-host-key opts a test network out of pinning it', async () => {
    const dir = project('any-key');
    const result = await validator(dir, '--accept-any-host-key');
    expect(result.code).toBe(0);
    expect(stackOf(dir).config['lacchain:nodes'][0].inventory.accept_any_host_key).toBe(true);
    expect(stillToDo(result.stdout).map((i) => i.commands[0])).not.toContain('ssh-keyscan -t ed25519 190.51.100.7');
  });

  it('takes the line ssh-keyscan prints', async () => {
    const dir = project('keyscan-line');
    const result = await validator(dir, '--host-key', `190.51.100.7 ${FAKE_HOST_KEY}`);
    expect(result.code).toBe(0);
    expect(stackOf(dir).config['lacchain:nodes'][0].inventory.host_key).toBe(FAKE_HOST_KEY);
  });

  it.each([
    [
      ['--accept-any-host-key'],
      /--accept-any-host-key: given, on mainnet-omega, which refuses it \(test networks only\); allowed: --host-key with the machine's SSH host key/,
    ],
    [['--accept-any-host-key', '--host-key', FAKE_HOST_KEY], /--accept-any-host-key: not with --host-key/],
  ])('on mainnet, %j is refused naming the flag, nothing written', async (args, message) => {
    const dir = project(`any-key-mainnet-${Math.random()}`);
    const result = await init([
      ...['--stack', 'mainnet', '--dir', dir, '--typenode', 'validator', '--target', 'ssh', '--host', '190.0.2.10'],
      ...['--node-name', 'org-validator', '--node-email', 'ops@example.org', '--keygen', 'no', ...args],
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(fs.existsSync(path.join(dir, 'Pulumi.mainnet.yaml'))).toBe(false);
  });
});

describe('mainnet refuses an address peers cannot reach, with the settings rule, naming the flag', () => {
  it.each([
    [
      ['--target', 'kubernetes', '--worker-name', 'w1', '--public-ip', '10.0.0.5'],
      '--public-ip',
      /a private address \(10\.0\.0\.0\/8\)/,
    ],
    [
      ['--target', 'kubernetes', '--worker-name', 'w1', '--public-ip', '190.0.2.10', '--p2p-host', '203.0.113.9'],
      '--p2p-host',
      /a documentation address \(203\.0\.113\.0\/24\)/,
    ],
    [
      ['--target', 'ssh', '--host', '190.0.2.10', '--node-ip', '192.168.1.5'],
      '--node-ip',
      /a private address \(192\.168\.0\.0\/16\)/,
    ],
    // No --node-ip: the host is its default, and the message says the value was not given.
    [
      ['--target', 'ssh', '--host', '198.51.100.7'],
      '--node-ip \\(not given: its default\\)',
      /a documentation address \(198\.51\.100\.0\/24\)/,
    ],
  ])('%j', async (args, flag, why) => {
    const dir = project(`address-${Math.random()}`);
    const result = await init([
      ...['--stack', 'mainnet', '--dir', dir, '--typenode', 'validator', ...args],
      ...['--node-name', 'org-validator', '--node-email', 'ops@example.org', '--keygen', 'no'],
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^error: ${flag}: given "[0-9.]+", ${why.source}; allowed: on mainnet-omega, a public IPv4`, 'm'),
    );
    expect(fs.existsSync(path.join(dir, 'Pulumi.mainnet.yaml'))).toBe(false);
  });
});

describe('npm run init in a terminal', () => {
  it('asks the installer questions, asks again after wrong answers, asks before replacing a node, offers the workers', async () => {
    const dir = project('typed', 'testnet', { asShipped: true });
    const keys = `${dir}-keys`;
    const result = await typeInTerminal(
      ['--stack', 'testnet', '--dir', dir, '--key-dir', keys],
      [
        [/Node type \[0\] validator \[1\] bootnode \[2\] writer:/, '7'],
        [/allowed: a name or the index of one of/, 'writer'],
        [/Target \(kubernetes or ssh\):/, 'docker'],
        [/allowed: kubernetes or ssh/, 'kubernetes'],
        [/name — .*\[writer\]:/, ''],
        [/Node writer is already in Pulumi\.testnet\.yaml \(a writer on Kubernetes\): replace it\? \[y\/N\]/, 'n'],
        [/name — .*\[writer\]:/, 'writer'],
        [/replace it\? \[y\/N\]/, 'y'],
        // Its current values are the defaults.
        [/\[1\] worker-a \(190\.113\.0\.61\)[\s\S]*workerName — .*\(index or name\):/, '1'],
        // The stock file's documentation address is no default: Enter would keep an address nobody reaches.
        [/publicIP — [^[\n]*:/, '300.1.1.1'],
        [/allowed: an IPv4 address/, '190.113.0.61'],
        [/p2p\.host — .*\[190\.113\.0\.61\]:/, ''],
        [/p2p\.port — .*\[60606\]:/, ''],
        [/nodeName — .*\[my-org-writer\]:/, 'my org writer'],
        [/allowed: a node name/, 'my-org-writer'],
        [/nodeEmail — .*\[ops@example\.org\]:/, ''],
        [/dnsName — .*\[none\]:/, ''],
        [/namespace — .*\[lacchain\]:/, ''],
        [/releaseVersion — .*\[23\.4\.1\]:/, '25.6.0'],
        [/not including, 25\.6\.0/, ''],
        [/Create the node key now\? \[Y\/n\]/, 'y'],
        [/Store it as a secret of the stack now/, 'n'],
      ],
      kubectlEnv(WORKERS),
    );
    expect(result.transcript).not.toMatch(/Network \[0\]/);
    expect(result.transcript).toMatch(/then: pulumi up --stack testnet/);
    expect(result.code).toBe(0);
    const values = yaml.load(read(path.join(dir, 'values/writer.yml'))) as any;
    expect(values.deploy).toEqual({
      network: 'open-protest-net',
      typenode: 'writer',
      workerName: 'worker-a',
      publicIP: '190.113.0.61',
      p2p: { host: '190.113.0.61', port: 60606 },
      nodeName: 'my-org-writer',
      nodeEmail: 'ops@example.org',
    });
    // Comments of the example files are kept.
    expect(read(path.join(dir, 'values/writer.yml'))).toContain('# static IP of the LoadBalancer Service');
    expect(read(path.join(dir, 'Pulumi.testnet.yaml'))).toContain('# A node on a remote machine over SSH');
    // The key is written outside the project, never beside the settings; the plan computes the enode printed.
    const keyFile = path.join(keys, 'testnet-writer.key');
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.key'))).toEqual([]);
    expect(result.transcript).toContain(
      `pulumi config set --stack testnet --secret --path 'lacchain:nodeKeys.writer' < '${keyFile}'`,
    );
    const identity = deriveIdentity(parsePrivateKey(read(keyFile)), '190.113.0.61', 60606);
    expect(result.transcript).toContain(`enode:   ${identity.enode}`);
    const planned = await planOffline(dir, 'testnet', `writer=${keyFile}`);
    expect(planned.code).toBe(0);
    expect(JSON.parse(planned.stdout).nodes.writer.enode).toBe(identity.enode);
  });

  it('asks for the host key as required, with the command that reads it; "later" puts it on the list', async () => {
    const dir = project('typed-ssh');
    const result = await typeInTerminal(
      ['--stack', 'mainnet', '--dir', dir, '--typenode', 'boot', '--target', 'ssh', '--keygen', 'no'],
      [
        [/name — .*\[bootnode\]:/, ''],
        // Where the key lives: the default, the stack's.
        [/Where the node key lives: stack .* or machine .*\[stack\]:/, ''],
        [/host — /, '190.0.2.40'],
        [/node_ip — .*\[190\.0\.2\.40\]:/, '10.1.2.3'],
        [/node_name/, 'org-boot'],
        [/node_email/, 'ops@example.org'],
        // The login user offered is not root, and it is written.
        [/user — .*\[ubuntu\]:/, ''],
        [/port — .*\[22\]:/, '2222'],
        [/host_key — .*ssh-keyscan -p 2222 -t ed25519 190\.0\.2\.40 .*\(required; "later" to add it after init\):/, ''],
        [/an answer is required: the key ssh-keyscan -p 2222 -t ed25519 190\.0\.2\.40 prints, or "later"/, 'later'],
        [/node_release_version — .*\[/, ''],
        [/dns_name — .*\[none\]:/, ''],
        [/os — .*\[none\]:/, 'debian 13'],
        // The loader's rule for mainnet, asked again.
        [/inventory\.node_ip: given "10\.1\.2\.3", a private address[\s\S]*node_ip — .*:/, '190.0.2.40'],
      ],
      kubectlEnv(),
    );
    expect(result.code).toBe(0);
    expect(result.transcript).toMatch(
      /node bootnode: bootnode on mainnet-omega, ssh \(named org-boot on the network\)/,
    );
    expect(result.transcript).toContain('ssh-keyscan -p 2222 -t ed25519 190.0.2.40');
    expect(stackOf(dir, 'mainnet').config['lacchain:nodes'][0].inventory).toEqual({
      host: '190.0.2.40',
      node_ip: '190.0.2.40',
      node_name: 'org-boot',
      node_email: 'ops@example.org',
      user: 'ubuntu',
      port: 2222,
      os: 'debian 13',
    });
  });
});

describe('npm run init with flags', () => {
  it('takes the node type by name, boot for bootnode, and --network only as a check', async () => {
    const dir = project('by-name');
    const result = await init([
      ...['--stack', 'testnet', '--dir', dir, '--typenode', 'boot', '--network', 'open-protestnet'],
      ...['--target', 'ssh', '--host', '190.51.100.7', '--node-name', 'org-boot', '--node-email', 'ops@example.org'],
      ...['--keygen', 'no'],
    ]);
    expect(result.code).toBe(0);
    expect(stackOf(dir).config['lacchain:nodes'][0]).toMatchObject({ name: 'bootnode', typenode: 'bootnode' });
  });

  it.each([
    [
      ['--typenode', '5'],
      /--typenode: given "5"; allowed: a name or the index of one of \[0\] validator \[1\] bootnode \[2\] writer/,
    ],
    [['--typenode', 'miner'], /--typenode: given "miner"; allowed: a name or the index of one of/],
    [
      ['--typenode', 'validtor'],
      /--typenode: given "validtor" \(did you mean validator\?\); allowed: a name or the index/,
    ],
    [['--typenode', '0', '--network', '2'], /--network: legacy-protestnet .* is deprecated/],
    [['--typenode', '0', '--network', '0'], /--network: this stack deploys to open-protestnet/],
    [['--typenode', '0', '--network', '1', '--target', 'vm'], /--target: given "vm"; allowed: kubernetes or ssh/],
    [
      ['--typenode', '0', '--network', '1', '--target', 'ssh'],
      /--host: not given, and without a terminal it cannot be asked; allowed: an IPv4 address or a DNS name/,
    ],
    [
      ['--typenode', '0', '--network', '1', '--target', 'ssh', '--host', '190.51.100.7', '--node-ip', '127.0.0.1'],
      /--node-ip: given "127.0.0.1"; allowed: an IPv4 address/,
    ],
    [['--typenode', '0', ...SSH_VALIDATOR, '--keygen', 'maybe'], /--keygen: given "maybe"; allowed: yes or no/],
    [['--typenode'], /--typenode needs a value/],
    [
      ['--typenode', '0', '--target', 'kubernetes', '--host', '190.51.100.7'],
      /--host is for ssh nodes, not kubernetes ones/,
    ],
    [
      ['--typenode', '0', '--target', 'ssh', '--public-ip', '190.51.100.7'],
      /--public-ip is for kubernetes nodes, not ssh ones/,
    ],
  ])('refuses %j with the allowed values, nothing written', async (args, message) => {
    const dir = project(`bad-${Math.random()}`);
    const result = await init(['--stack', 'testnet', '--dir', dir, ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(fs.existsSync(path.join(dir, 'Pulumi.testnet.yaml'))).toBe(false);
  });
});

describe("the newcomer's frictions (#53)", () => {
  it('runs the examples of init --help as printed, in their order: none uses an address init refuses', async () => {
    const dir = project('help-examples');
    fs.copyFileSync(path.join(PROJECT_DIR, 'Pulumi.testnet.yaml'), path.join(dir, 'Pulumi.testnet.yaml'));
    // ssh-keyscan, as the machine of the examples answers it.
    const bin = fs.mkdtempSync(path.join(work, 'keyscan-'));
    fs.writeFileSync(path.join(bin, 'ssh-keyscan'), `#!/bin/sh\necho "$3 ${FAKE_HOST_KEY}"\n`, { mode: 0o755 });
    const env = { ...kubectlEnv(), PATH: `${bin}:${kubectlEnv().PATH}` };
    const own = `--dir ${dir} --key-dir ${path.join(work, 'help-keys')}`;
    const examples = INIT_TOOL.examples.filter(([args]) => args !== '--stack testnet');
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const [args] of examples) {
      const result = spawnSync('bash', ['-c', `npm run --silent init -- ${args} ${own}`], {
        cwd: PROJECT_DIR,
        env: { ...process.env, ...env },
        encoding: 'utf8',
      });
      expect({ args, code: result.status, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
    }
  });

  it('refuses a node name the network will not register at the question, as the settings do, naming the flag', async () => {
    const dir = project('dotted-name');
    const result = await init([
      ...['--stack', 'testnet', '--dir', dir, '--typenode', 'validator', '--target', 'ssh', '--host', '190.51.100.7'],
      ...['--node-name', 'a.b', '--node-email', 'ops@example.org', '--keygen', 'no'],
    ]);
    expect([result.code, result.stdout]).toEqual([2, '']);
    expect(result.stderr.trimEnd()).toBe(
      `error: --node-name: given "a.b", a name the network's ethstats server does not register; allowed: node names of 3 to 64 letters, digits, hyphens and underscores (the ethstats server's rule), or enabled: false`,
    );
    expect(fs.existsSync(path.join(dir, 'Pulumi.testnet.yaml'))).toBe(false);
  });

  it('says what was given and what is allowed: a flag without its value, a required flag left out, a test-network opt-out on mainnet', async () => {
    const dir = project('messages');
    const base = ['--dir', dir, '--typenode', 'validator', '--target', 'ssh', '--keygen', 'no'];
    const noValue = await init(['--stack', 'testnet', ...base, '--host', '--node-name', 'org-v']);
    expect(noValue.stderr.trimEnd()).toBe(
      'error: --host needs a value: given the option "--node-name" after it; allowed: host: The address this machine uses to reach the remote one (a value that starts with a dash: --host=VALUE) (npm run --silent init -- --help shows the usage)',
    );
    const noEmail = await init(['--stack', 'testnet', ...base, '--host', '190.51.100.7', '--node-name', 'org-v']);
    expect(noEmail.stderr.trimEnd()).toBe(
      'error: --node-email: not given, and without a terminal it cannot be asked; allowed: an e-mail address such as ops@example.org (node_email: Your contact e-mail)',
    );
    const anyKey = await init([
      ...['--stack', 'mainnet', ...base, '--host', '190.0.2.40', '--node-name', 'org-v'],
      ...['--node-email', 'ops@example.org', '--accept-any-host-key'],
    ]);
    expect(anyKey.stderr.trimEnd()).toMatch(
      /^error: --accept-any-host-key: given, on mainnet-omega, which refuses it \(test networks only\); allowed: --host-key with the machine's SSH host key, e\.g\. the output of: ssh-keyscan -t ed25519 190\.0\.2\.40/,
    );
    for (const result of [noValue, noEmail, anyKey]) expect(result.code).toBe(2);
  });

  it.each(['testnet', 'mainnet'] as const)(
    '%s: ends with where the permissioning request goes and how, from the catalog',
    async (stack) => {
      const dir = project(`permissioning-${stack}`);
      const result = await initPasses([
        ...['--stack', stack, '--dir', dir, '--typenode', 'writer', '--target', 'ssh', '--host', '190.0.2.40'],
        ...['--node-name', 'org-w', '--node-email', 'ops@example.org', '--keygen', 'no'],
      ]);
      const network = NETWORKS[stack === 'testnet' ? 'open-protestnet' : 'mainnet-omega'];
      expect(result.stdout.trimEnd().split('\n').pop()).toBe(
        `and get node writer permissioned: send its request (pulumi stack output nodes --stack ${stack} --json: ` +
          `writer.permissioningRequest, its enode and address). ${network.permissioningProcedure} ${network.permissioningRequestTo}`,
      );
    },
  );

  it('offers and writes a login user that is not root', async () => {
    const dir = project('user');
    await initPasses([
      ...['--stack', 'testnet', '--dir', dir, '--typenode', 'validator', '--target', 'ssh', '--host', '190.51.100.7'],
      ...['--node-name', 'org-v', '--node-email', 'ops@example.org', '--keygen', 'no'],
    ]);
    expect(stackOf(dir).config['lacchain:nodes'][0].inventory.user).toBe('ubuntu');
  });
});

describe('the menus', () => {
  it('map the installer indexes and the names', () => {
    expect(checkNodeType('0')).toEqual({ ok: true, value: 'validator' });
    expect(checkNodeType('1')).toEqual({ ok: true, value: 'bootnode' });
    expect(checkNodeType('2')).toEqual({ ok: true, value: 'writer' });
    expect(checkNodeType('writer')).toEqual({ ok: true, value: 'writer' });
    expect(checkNodeType('boot')).toEqual({ ok: true, value: 'bootnode' });
    expect(checkNodeType('bootnode')).toEqual({ ok: true, value: 'bootnode' });
    expect(checkNetworkAnswer('0', NETWORKS['mainnet-omega'])).toEqual({ ok: true, value: NETWORKS['mainnet-omega'] });
    expect(checkNetworkAnswer('mainnet-omega', NETWORKS['mainnet-omega'])).toEqual({
      ok: true,
      value: NETWORKS['mainnet-omega'],
    });
  });
  it('read the workers and their external IPs from kubectl get nodes -o wide', () => {
    expect(parseWorkers(WORKERS)).toEqual([
      { name: 'cp-1', externalIP: undefined },
      { name: 'worker-a', externalIP: '190.113.0.61' },
      { name: 'worker-b', externalIP: '190.113.0.62' },
    ]);
  });
});

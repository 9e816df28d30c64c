/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The guided setup: typed for real in a pseudo-terminal (wrong answers asked again), run with flags, and the files it
 * writes planned offline as `pulumi up` would take them.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { parseWorkers, checkNetworkAnswer, checkNodeType } from '../../core/init/questions';
import { NETWORKS } from '../../core/catalog/networks';
import { parsePrivateKey, deriveIdentity } from '../../core/identity/nodeKey';
import { PROJECT_DIR, runNpmAsync } from '../../testing/run';
import { FAKE_HOST_KEY, TEST_COMPANIONS } from '../../testing/fixtures';

jest.setTimeout(120_000);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-init-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));
const kubectlDir = path.join(PROJECT_DIR, 'tests/fixtures/recorded-kubectl');

function project(name: string, withExamples = false): string {
  const dir = path.join(work, name);
  fs.mkdirSync(path.join(dir, 'values'), { recursive: true });
  if (withExamples) {
    fs.copyFileSync(path.join(PROJECT_DIR, 'Pulumi.testnet.yaml'), path.join(dir, 'Pulumi.testnet.yaml'));
    fs.copyFileSync(path.join(PROJECT_DIR, 'values/writer.yml'), path.join(dir, 'values/writer.yml'));
  }
  return dir;
}

/** Kubectl answers: no cluster unless a node table is given. */
function kubectlEnv(nodes?: string) {
  const answers = fs.mkdtempSync(path.join(work, 'kubectl-'));
  if (nodes) fs.writeFileSync(path.join(answers, 'nodes'), nodes);
  return {
    PATH: `${kubectlDir}:${process.env.PATH}`,
    KUBECTL_RECORD: path.join(answers, 'calls'),
    KUBECTL_ANSWERS: answers,
  };
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

async function planOffline(dir: string, keyFile?: string) {
  const out = path.join(dir, 'plan');
  const result = await runNpmAsync('plan', [
    '--stack',
    'testnet',
    '--config',
    path.join(dir, 'Pulumi.testnet.yaml'),
    '--out',
    out,
    ...(keyFile ? ['--node-key-file', keyFile] : []),
  ]);
  return { ...result, out };
}

const WORKERS = [
  'NAME       STATUS   ROLES           AGE   VERSION   INTERNAL-IP   EXTERNAL-IP     OS-IMAGE             KERNEL-VERSION',
  'cp-1       Ready    control-plane   10d   v1.30.2   10.0.0.10     <none>          Ubuntu 22.04.4 LTS   5.15.0',
  'worker-a   Ready    <none>          10d   v1.30.2   10.0.0.11     203.0.113.61    Ubuntu 22.04.4 LTS   5.15.0',
  'worker-b   Ready    <none>          10d   v1.30.2   10.0.0.12     203.0.113.62    Ubuntu 22.04.4 LTS   5.15.0',
].join('\n');

describe('npm run init in a terminal', () => {
  it('asks the installer questions, asks again after wrong answers, offers the workers and writes the files', async () => {
    const dir = project('typed', true);
    const keys = `${dir}-keys`;
    const result = await typeInTerminal(
      ['--stack', 'testnet', '--dir', dir, '--key-dir', keys],
      [
        [/Node type \[0\] validator \[1\] boot \[2\] writer:/, '7'],
        [/allowed: the index of one of/, '2'],
        [/Network \[0\] mainnet-omega \[1\] open-protestnet \[2\] legacy-protestnet \(DEPRECATED\):/, '2'],
        [/deprecated and no longer accepts new nodes/, '0'],
        [/this stack deploys to open-protestnet/, '1'],
        [/Target \(kubernetes or ssh\):/, 'docker'],
        [/allowed: kubernetes or ssh/, 'kubernetes'],
        [/name — .*\[writer\]:/, ''],
        [/\[1\] worker-a \(203\.0\.113\.61\)[\s\S]*workerName — .*\(index or name\):/, '1'],
        [/publicIP — .*:/, '300.1.1.1'],
        [/allowed: an IPv4 address/, '203.0.113.61'],
        [/p2p\.host — .*\[203\.0\.113\.61\]:/, ''],
        [/p2p\.port — .*\[60606\]:/, ''],
        [/nodeName — .*:/, 'my org writer'],
        [/allowed: a node name/, 'my-org-writer'],
        [/nodeEmail — .*:/, 'ops@example.org'],
        [/dnsName — .*\[none\]:/, ''],
        [/namespace — .*\[lacchain\]:/, ''],
        [/releaseVersion — .*\[23\.4\.1\]:/, '25.6.0'],
        [/not including, 25\.6\.0/, ''],
        [/Create the node key now\? \[Y\/n\]/, 'y'],
        [/Store it as a secret of the stack now/, 'n'],
      ],
      kubectlEnv(WORKERS),
    );
    expect(result.transcript).toMatch(/next: pulumi up --stack testnet/);
    expect(result.code).toBe(0);
    const values = yaml.load(fs.readFileSync(path.join(dir, 'values/writer.yml'), 'utf8')) as any;
    expect(values.deploy).toMatchObject({
      network: 'open-protest-net',
      typenode: 'writer',
      workerName: 'worker-a',
      publicIP: '203.0.113.61',
      p2p: { host: '203.0.113.61', port: 60606 },
      nodeName: 'my-org-writer',
      releaseVersion: '23.4.1',
    });
    // Comments of the example files are kept.
    expect(fs.readFileSync(path.join(dir, 'values/writer.yml'), 'utf8')).toContain(
      '# static IP of the LoadBalancer Service',
    );
    expect(fs.readFileSync(path.join(dir, 'Pulumi.testnet.yaml'), 'utf8')).toContain(
      '# A node on a remote machine over SSH',
    );
    // The identity printed is the key's; the plan of the written files computes the same.
    // The key is written outside the project, never beside the settings.
    const keyFile = path.join(keys, 'testnet-writer.key');
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.key'))).toEqual([]);
    expect(result.transcript).toContain(
      `pulumi config set --stack testnet --secret --path 'lacchain:nodeKeys.writer' < '${keyFile}'`,
    );
    const key = parsePrivateKey(fs.readFileSync(keyFile, 'utf8'));
    const identity = deriveIdentity(key, '203.0.113.61', 60606);
    expect(result.transcript).toContain(`enode:   ${identity.enode}`);
    const planned = await planOffline(dir, keyFile);
    expect(planned.code).toBe(0);
    expect(JSON.parse(planned.stdout).nodes.writer.enode).toBe(identity.enode);
  });

  it('says when no cluster answers and takes the worker by hand', async () => {
    const dir = project('no-cluster');
    const result = await typeInTerminal(
      ['--stack', 'testnet', '--dir', dir, '--typenode', '0', '--network', '1', '--target', 'kubernetes'],
      [
        [/name — .*\[validator\]:/, ''],
        [
          /No cluster reachable .*: enter the values by hand\.[\s\S]*workerName — The Kubernetes worker the pod is pinned to, so its egress IP never changes:/,
          'worker-9',
        ],
        [/publicIP/, '198.51.100.20'],
        [/p2p\.host — .*\[198\.51\.100\.20\]:/, ''],
        [/p2p\.port/, ''],
        [/nodeName/, 'org-validator'],
        [/nodeEmail/, 'ops@example.org'],
        [/dnsName/, ''],
        [/namespace/, ''],
        [/releaseVersion/, ''],
        [/Create the node key now/, 'n'],
      ],
      kubectlEnv(),
    );
    expect(result.code).toBe(0);
    expect(yaml.load(fs.readFileSync(path.join(dir, 'values/validator.yml'), 'utf8'))).toMatchObject({
      deploy: { workerName: 'worker-9', p2p: { host: '198.51.100.20' } },
    });
  });
});

const HOST_KEY = FAKE_HOST_KEY;

describe('npm run init with flags', () => {
  it('writes an SSH node into an existing stack, keeping the other nodes, and the plan takes it', async () => {
    const dir = project('flags', true);
    const result = await runNpmAsync(
      'init',
      [
        ...['--stack', 'testnet', '--dir', dir, '--typenode', '0', '--network', '1', '--target', 'ssh'],
        ...['--host', '198.51.100.7', '--node-name', 'org-validator', '--node-email', 'ops@example.org'],
        ...['--host-key', HOST_KEY, '--user', 'ubuntu', '--keygen', 'no'],
      ],
      { env: kubectlEnv() },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/still to do: pulumi config set --stack testnet --secret lacchain:sshPrivateKey/);
    expect(result.stdout).toMatch(
      /still to do: pulumi config set --stack testnet --path 'lacchain:companions\.rotationValidator\.sha256' <sha256>: the SHA-256 of the executable at https:/,
    );
    expect(result.stdout).toMatch(
      /still to do: pulumi config set --stack testnet --path 'lacchain:companions\.ethstats\.imageDigest' <sha256:digest>: the registry digest \(sha256:…\) of docker\.io\/alethio\/ethstats-cli:latest/,
    );
    const config = yaml.load(fs.readFileSync(path.join(dir, 'Pulumi.testnet.yaml'), 'utf8')) as any;
    expect(config.config['lacchain:nodes'].map((n: any) => n.name)).toEqual(['writer', 'validator']);
    expect(config.config['lacchain:nodes'][1]).toEqual({
      name: 'validator',
      typenode: 'validator',
      target: 'ssh',
      inventory: {
        host: '198.51.100.7',
        host_key: HOST_KEY,
        node_ip: '198.51.100.7',
        node_name: 'org-validator',
        node_email: 'ops@example.org',
        user: 'ubuntu',
        port: 22,
        node_release_version: '23.4.1',
      },
    });
    // With the SSH key set (encrypted, as pulumi config set --secret leaves it) and the rotation client's and the
    // monitoring client's digests pinned, the plan shows the node's steps.
    const text = fs.readFileSync(path.join(dir, 'Pulumi.testnet.yaml'), 'utf8');
    const digest = TEST_COMPANIONS.rotationValidator.sha256;
    const imageDigest = TEST_COMPANIONS.ethstats.imageDigest;
    fs.writeFileSync(
      path.join(dir, 'Pulumi.testnet.yaml'),
      text.replace(
        'config:\n',
        `config:\n  lacchain:sshPrivateKey:\n    secure: v1:x\n  lacchain:companions:\n    rotationValidator:\n      sha256: ${digest}\n    ethstats:\n      imageDigest: ${imageDigest}\n`,
      ),
    );
    const planned = await planOffline(dir);
    expect(planned.code).toBe(0);
    expect(fs.readdirSync(path.join(planned.out, 'remote', 'validator'))).toContain('10-companions.sh');
    // Running it again updates the same node instead of adding another.
    await runNpmAsync(
      'init',
      [
        ...[
          '--stack',
          'testnet',
          '--dir',
          dir,
          '--typenode',
          '0',
          '--network',
          '1',
          '--target',
          'ssh',
          '--keygen',
          'no',
        ],
        ...['--host', '198.51.100.8', '--node-name', 'org-validator', '--node-email', 'ops@example.org'],
        ...['--host-key', HOST_KEY],
      ],
      { env: kubectlEnv() },
    );
    const again = yaml.load(fs.readFileSync(path.join(dir, 'Pulumi.testnet.yaml'), 'utf8')) as any;
    expect(again.config['lacchain:nodes']).toHaveLength(2);
    expect(again.config['lacchain:nodes'][1].inventory.host).toBe('198.51.100.8');
    expect(again.config['lacchain:sshPrivateKey']).toEqual({ secure: 'v1:x' });
  });

  it.each([
    [
      ['--typenode', '5'],
      /--typenode: given "5"; allowed: the index of one of \[0\] validator \[1\] boot \[2\] writer/,
    ],
    [['--typenode', '0', '--network', '2'], /--network: legacy-protestnet .* is deprecated/],
    [['--typenode', '0', '--network', '0'], /--network: this stack deploys to open-protestnet/],
    [['--typenode', '0', '--network', '1', '--target', 'vm'], /--target: given "vm"; allowed: kubernetes or ssh/],
    [['--typenode', '0', '--network', '1', '--target', 'ssh'], /--host is required without a terminal/],
    [
      ['--typenode', '0', '--network', '1', '--target', 'ssh', '--host', '198.51.100.7', '--node-ip', '127.0.0.1'],
      /--node-ip: given "127.0.0.1"; allowed: an IPv4 address/,
    ],
    [['--typenode'], /argument missing|requires a value|option '--typenode <value>' argument missing/i],
  ])('refuses %j with the allowed values', async (args, message) => {
    const result = await runNpmAsync(
      'init',
      ['--stack', 'testnet', '--dir', project(`bad-${Math.random()}`), ...args],
      {
        env: kubectlEnv(),
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});

describe('the menus', () => {
  it('map the installer indexes', () => {
    expect(checkNodeType('0')).toEqual({ ok: true, value: 'validator' });
    expect(checkNodeType('1')).toEqual({ ok: true, value: 'bootnode' });
    expect(checkNodeType('2')).toEqual({ ok: true, value: 'writer' });
    expect(checkNetworkAnswer('0', NETWORKS['mainnet-omega'])).toEqual({ ok: true, value: NETWORKS['mainnet-omega'] });
  });
  it('read the workers and their external IPs from kubectl get nodes -o wide', () => {
    expect(parseWorkers(WORKERS)).toEqual([
      { name: 'cp-1', externalIP: undefined },
      { name: 'worker-a', externalIP: '203.0.113.61' },
      { name: 'worker-b', externalIP: '203.0.113.62' },
    ]);
  });
});

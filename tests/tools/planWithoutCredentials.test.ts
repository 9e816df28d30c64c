/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * A stack with an SSH node and no `lacchain:sshPrivateKey` (as `npm run init` writes it): `pulumi up` logs in with the
 * operator's ssh agent, and the plan says so; one that names `lacchain:sshAuthentication: privateKey` without the key
 * plans with the key as a value only `pulumi up` knows, and `pulumi up` refuses it, as before. Before an update,
 * `pulumi up` asks each machine, with the operator's own ssh, whether it takes one of the agent's keys (here a
 * stand-in ssh answers as a machine would: it takes the key, refuses it, or does not answer). `npm run node` logs in
 * with the operator's own ssh either way.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { DEFAULT_SSH_USER } from '../../core/catalog/defaults';
import { REMOTE_STEP_NAMES } from '../../core/remote/steps';
import { KEY_ONE, sshValidatorEntry, TEST_COMPANIONS, TEST_GENESIS_FILE } from '../../testing/fixtures';
import { freePort } from '../../testing/ports';
import { projectFolder } from '../../testing/projects';
import { ensureBuilt, outcome, PROJECT_DIR, runNpm, runNpmAsync } from '../../testing/run';
import { runProgram } from '../../tools/programRun/run';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(180_000);

const work = workFolder('lacchain-no-ssh-key-');

/** The stack's settings: one SSH validator, its companions' digests, no SSH private key. */
const settings = (inventory: Record<string, unknown> = {}) => ({
  'lacchain:network': 'open-protestnet',
  'lacchain:nodes': [sshValidatorEntry(inventory)],
  'lacchain:companions': structuredClone(TEST_COMPANIONS),
});

const AGENT_NOTE =
  'note: SSH login: agent (lacchain:sshAuthentication): pulumi up logs in with your ssh agent (SSH_AUTH_SOCK); the private key stays out of the stack file and the state';

describe('the offline plan of an SSH stack without lacchain:sshPrivateKey (the agent logs in)', () => {
  const config = projectFolder(work, settings());
  const out = path.join(work, 'plan');
  const result = runNpm('plan', ['--stack', 'testnet', '--config', config, '--out', out]);

  it('plans: exit 0, saying that pulumi up logs in with the agent, the key out of the state', () => {
    expect(result.stderr.trim()).toBe(AGENT_NOTE);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).nodes.validator.enode).toBe('[known after pulumi up]');
  });

  it('writes the remote steps, their connection holding no key (shown as the SDK keeps it: secret)', () => {
    const dir = path.join(out, 'remote', 'validator');
    expect(fs.readdirSync(dir)).toEqual(expect.arrayContaining(['STEPS.txt', '01-preflight.sh', '01-preflight.env']));
    const resources = JSON.parse(fs.readFileSync(path.join(out, 'resources.json'), 'utf8'));
    const commands = resources.filter((r: any) => r.type === 'command:remote:Command');
    expect(commands).toHaveLength(REMOTE_STEP_NAMES.length);
    for (const command of commands) expect(command.inputs.connection).toBe('[secret]');
  });
});

describe('the offline plan of an SSH stack that logs in with a key not set yet', () => {
  const config = projectFolder(work, { ...settings(), 'lacchain:sshAuthentication': 'privateKey' });
  const out = path.join(work, 'plan-key');
  const result = runNpm('plan', ['--stack', 'testnet', '--config', config, '--out', out]);

  it('plans: exit 0, the key named as still to set, for pulumi up', () => {
    expect(result.stderr).not.toMatch(/cannot be deployed|sshPrivateKey: missing/);
    expect(result.stderr.trim().split('\n')).toEqual([
      'note: SSH login: privateKey (lacchain:sshAuthentication): pulumi up logs in with lacchain:sshPrivateKey, kept encrypted in the stack file and the state',
      'note: lacchain:sshPrivateKey is not set: planned as known after pulumi up, which needs it (pulumi config set --secret lacchain:sshPrivateKey < ~/.ssh/id_ed25519)',
    ]);
    expect(result.code).toBe(0);
  });

  it('writes the remote steps, their connection a value only pulumi up knows', () => {
    const resources = JSON.parse(fs.readFileSync(path.join(out, 'resources.json'), 'utf8'));
    const commands = resources.filter((r: any) => r.type === 'command:remote:Command');
    expect(commands).toHaveLength(REMOTE_STEP_NAMES.length);
    for (const command of commands) expect(command.inputs.connection).toBe('[known after pulumi up]');
  });
});

describe('the offline plan of an SSH node whose inventory names a system the preflight step refuses (os)', () => {
  it('refuses it before any pulumi up, naming the file, the key, the value and the systems allowed', () => {
    const config = projectFolder(work, settings({ os: 'ubuntu 25.10' }));
    const result = runNpm('plan', ['--stack', 'testnet', '--config', config, '--out', path.join(work, 'plan-os')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /Pulumi\.testnet\.yaml: lacchain:nodes\[0\]\.inventory\.os: given "ubuntu 25\.10"; allowed: .*one the preflight step accepts: ubuntu 16\.04, 18\.04, 20\.04, 22\.04, 24\.04, 26\.04; debian 10, 11, 12, 13/,
    );
    const accepted = projectFolder(work, settings({ os: 'ubuntu 24.04' }));
    const planned = runNpm('plan', ['--stack', 'testnet', '--config', accepted, '--out', path.join(work, 'plan-os2')]);
    expect(outcome(planned)).toBe('exit 0');
  });
});

/** An ssh agent of the test's own on `socket`, holding a new key when `withKey`; stopped by `stop`. */
function startAgent(socket: string, withKey: boolean): { socket: string; stop(): void } {
  const started = spawnSync('ssh-agent', ['-a', socket], { encoding: 'utf8' });
  if (started.status !== 0) throw new Error(`ssh-agent: ${started.stderr}`);
  const pid = Number(/SSH_AGENT_PID=(\d+)/.exec(started.stdout)![1]);
  if (withKey) {
    const key = `${socket}.key`;
    spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const added = spawnSync('ssh-add', [key], { env: { ...process.env, SSH_AUTH_SOCK: socket }, encoding: 'utf8' });
    if (added.status !== 0) throw new Error(`ssh-add: ${added.stderr}`);
  }
  return { socket, stop: () => process.kill(pid) };
}

/** The machines the stand-in ssh plays: one takes the agent's key, one refuses it, one does not answer. */
const MACHINES = { takes: '190.51.100.7', refuses: '190.51.100.8', silent: '190.51.100.9' };
/** The login user of the test stack's machines (the inventory's default). */
const USER = DEFAULT_SSH_USER;
/** Where the stand-in ssh writes each call's arguments, and the known-hosts file it was given. */
const SSH_CALLS = path.join(work, 'ssh-calls');

/**
 * A stand-in `ssh` first on PATH (no machine is dialled): it writes its arguments and the known-hosts file it is given
 * to SSH_CALLS, then answers as the machine it names would, with ssh's own words and exit status. Returns PATH.
 */
function sshStandIn(): string {
  const bin = path.join(work, 'ssh-bin');
  fs.mkdirSync(bin, { recursive: true });
  const script = [
    '#!/bin/sh',
    `echo "$*" >>'${SSH_CALLS}'`,
    'for a; do case "$a" in UserKnownHostsFile=*) cat "${a#UserKnownHostsFile=}" >>' + `'${SSH_CALLS}';; esac; done`,
    // The login (user@host) is the argument before the command.
    'eval "login=\\${$(($# - 1))}"',
    'case "$*" in',
    `  *"@${MACHINES.takes} true") exit 0 ;;`,
    `  *"@${MACHINES.refuses} true") echo "$login: Permission denied (publickey)." >&2; exit 255 ;;`,
    `  *) echo "ssh: connect to host ${MACHINES.silent} port 22: Connection timed out" >&2; exit 255 ;;`,
    'esac',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(bin, 'ssh'), script, { mode: 0o755 });
  return `${bin}:${process.env.PATH}`;
}

describe("pulumi up's own run of the same stack", () => {
  const agents: Array<{ socket: string; stop(): void }> = [];
  beforeAll(() => {
    ensureBuilt();
    agents.push(
      startAgent(path.join(work, 'agent.sock'), true),
      startAgent(path.join(work, 'empty-agent.sock'), false),
    );
  });
  afterAll(() => agents.forEach((agent) => agent.stop()));

  /**
   * The program run as `pulumi up` runs an update, with the environment's agent socket (empty: none), the stand-in
   * ssh first on PATH, and the machine at `host` (the one that takes the agent's key unless said).
   */
  const up = (extra: Record<string, unknown>, agentSocket: string, host = MACHINES.takes) => {
    const stack = { ...settings({ host, node_ip: host }), ...extra };
    const config = Object.fromEntries(
      Object.entries({ ...stack, 'lacchain:nodeKeys': { validator: KEY_ONE } }).map(([key, value]) => [
        key,
        typeof value === 'string' ? value : JSON.stringify(value),
      ]),
    );
    return runProgram({
      dir: PROJECT_DIR,
      stack: 'testnet',
      config,
      secretKeys: ['lacchain:nodeKeys'],
      genesisFile: TEST_GENESIS_FILE,
      env: { SSH_AUTH_SOCK: agentSocket, PATH: sshStandIn() },
    });
  };

  it('declares every step with an agent in the environment, once the machine took its key', async () => {
    fs.rmSync(SSH_CALLS, { force: true });
    const run = await up({}, path.join(work, 'agent.sock'));
    expect(Object.keys(run.outputs.nodes as object)).toEqual(['validator']);
    expect(run.resources).toBeGreaterThan(REMOTE_STEP_NAMES.length);
    // One login, the agent's keys only, publickey only, nothing asked, the host key pinned as the steps pin it.
    const [call, known, ...more] = fs.readFileSync(SSH_CALLS, 'utf8').trim().split('\n');
    expect(more).toEqual([]);
    expect(call).toMatch(
      new RegExp(
        '^-F /dev/null -o BatchMode=yes -o IdentityFile=/dev/null -o PreferredAuthentications=publickey -o ConnectTimeout=5 ' +
          `-o StrictHostKeyChecking=yes -o UserKnownHostsFile=\\S+ -p 22 ${USER}@${MACHINES.takes} true$`,
      ),
    );
    expect(known).toBe(`${MACHINES.takes} ${sshValidatorEntry().inventory.host_key}`);
  });

  it("stops before declaring anything when the machine takes none of the agent's keys, in one line naming ssh-add", async () => {
    await expect(up({}, path.join(work, 'agent.sock'), MACHINES.refuses)).rejects.toThrow(
      new RegExp(
        `^the program failed \\(exit \\d+\\): the stack testnet cannot log in to its machines: your ssh agent \\(SSH_AUTH_SOCK=${path.join(work, 'agent.sock')}\\) holds no key that ${USER}@${MACHINES.refuses.replace(/\./g, '\\.')} takes \\(${USER}@${MACHINES.refuses.replace(/\./g, '\\.')}: Permission denied \\(publickey\\)\\.\\), so pulumi up cannot log in to node validator: load the key the machine takes \\(ssh-add ~/\\.ssh/id_ed25519\\), or add the agent's key \\(ssh-add -L\\) to ~${USER}/\\.ssh/authorized_keys there$`,
      ),
    );
  });

  it('leaves a machine that does not answer to the steps: every step declared', async () => {
    const run = await up({}, path.join(work, 'agent.sock'), MACHINES.silent);
    expect(run.resources).toBeGreaterThan(REMOTE_STEP_NAMES.length);
  });

  it('stops before declaring anything with an agent that does not answer, in one line saying how to start one', async () => {
    const gone = path.join(work, 'gone-agent.sock');
    await expect(up({}, gone)).rejects.toThrow(
      new RegExp(
        `the stack testnet cannot log in to its machines: your ssh agent \\(SSH_AUTH_SOCK=${gone}\\) does not answer \\([^\\n]+\\), so pulumi up cannot log in to node validator: start one holding your key \\(eval "\\$\\(ssh-agent -s\\)" && ssh-add ~/\\.ssh/id_ed25519\\)$`,
      ),
    );
  });

  it('stops before declaring anything with an agent that holds no key, in one line naming ssh-add', async () => {
    await expect(up({}, path.join(work, 'empty-agent.sock'))).rejects.toThrow(
      `the stack testnet cannot log in to its machines: your ssh agent (SSH_AUTH_SOCK=${path.join(work, 'empty-agent.sock')}) holds no key, so pulumi up cannot log in to node validator: load the key the machines take (ssh-add ~/.ssh/id_ed25519)`,
    );
  });

  it('stops before declaring anything without one, naming the file, the setting and both ways to log in', async () => {
    await expect(up({}, '')).rejects.toThrow(
      'the stack testnet cannot log in to its machines: Pulumi.testnet.yaml: lacchain:sshAuthentication: agent (the default without lacchain:sshPrivateKey), but SSH_AUTH_SOCK is not set, so pulumi up cannot log in to node validator; allowed: an ssh agent holding your key (eval "$(ssh-agent -s)" && ssh-add ~/.ssh/id_ed25519), or a stored key (pulumi config set lacchain:sshAuthentication privateKey && pulumi config set --secret lacchain:sshPrivateKey < ~/.ssh/id_ed25519)',
    );
  });

  it('still refuses a stack that logs in with a key it does not store, with the message it always gave', async () => {
    await expect(up({ 'lacchain:sshAuthentication': 'privateKey' }, path.join(work, 'agent.sock'))).rejects.toThrow(
      'the settings of stack testnet cannot be deployed:\nPulumi.testnet.yaml: lacchain:sshPrivateKey: missing; allowed: the SSH private key for node validator (lacchain:sshAuthentication is privateKey): pulumi config set --secret lacchain:sshPrivateKey < ~/.ssh/id_ed25519, or log in with your ssh agent: pulumi config rm lacchain:sshAuthentication',
    );
  });
});

describe('npm run node on the same stack', () => {
  it("reads the settings without the key and goes to the machine with the operator's own ssh", async () => {
    // Nothing listens on the machine's SSH port: the operation gets as far as ssh, which says so.
    const port = await freePort();
    const config = projectFolder(work, settings({ host: '127.0.0.1', port }));
    const result = await runNpmAsync('node', ['status', '--stack', 'testnet', '--config', config]);
    expect(result.stderr).not.toMatch(/cannot be deployed|sshPrivateKey/);
    expect(result.stderr).toMatch(
      new RegExp(`^error: node validator: cannot reach root@127\\.0\\.0\\.1:${port} over SSH: .*$`, 'm'),
    );
    expect(result.code).toBe(1);
  });
});

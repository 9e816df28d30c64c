/**
 * Whether the ssh agent `pulumi up` logs in with can log in at all: it answers on SSH_AUTH_SOCK and holds a key
 * (`ssh-add -l`, asked once, on this machine, before anything is declared). A dead agent would otherwise end a step
 * with the SSH library's raw `dial unix …: no such file or directory`, and an empty one with ten login retries.
 * And, when `pulumi up` is about to change the machines (not a preview), whether each machine takes one of its keys:
 * the operator's own ssh logs in once (the agent's keys only, publickey only, no prompt, the host key pinned as the
 * steps pin it); a machine that refuses them would otherwise end its first step with `unable to authenticate` after
 * ten retries (about 15 s) and no word of ssh-add.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { SSH_AGENT_VARIABLE } from '../core/catalog/sshLogin';
import type { SshNodeSettings } from '../core/settings/model';

/** The one way on, for both problems: an agent running, holding the key the machines take. */
const START_AGENT = 'eval "$(ssh-agent -s)" && ssh-add ~/.ssh/id_ed25519';

/**
 * Why the agent named by `env` cannot log `pulumi up` in to the SSH nodes `nodeNames` (it does not answer, or holds
 * no key), in one line; undefined when it holds a key, or when ssh-add is not there to ask.
 */
export function agentKeysProblem(nodeNames: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  const socket = env[SSH_AGENT_VARIABLE];
  if (nodeNames.length === 0 || !socket) return undefined;
  const listed = spawnSync('ssh-add', ['-l'], { env, encoding: 'utf8', timeout: 10_000 });
  if (listed.error !== undefined || listed.status === 0) return undefined;
  const nodes = `node ${nodeNames.join(', ')}`;
  if (listed.status === 1) {
    return `your ssh agent (${SSH_AGENT_VARIABLE}=${socket}) holds no key, so pulumi up cannot log in to ${nodes}: load the key the machines take (ssh-add ~/.ssh/id_ed25519)`;
  }
  const said = (listed.stderr ?? '').trim().split('\n')[0] || `ssh-add exited ${listed.status}`;
  return `your ssh agent (${SSH_AGENT_VARIABLE}=${socket}) does not answer (${said}), so pulumi up cannot log in to ${nodes}: start one holding your key (${START_AGENT})`;
}

/** How long the login probe waits for a machine to answer before it leaves the question to the steps. */
const PROBE_CONNECT_SECONDS = 5;

/** The login of an SSH node's machine, as the steps log in. */
type SshMachine = Pick<SshNodeSettings, 'name' | 'host' | 'sshPort' | 'user' | 'hostKey'>;

/** ssh's options that pin `machine`'s host key (a known-hosts file written in `dir`), or accept any (no pinned key). */
function hostKeyOptions(machine: SshMachine, dir: string): string[] {
  if (!machine.hostKey) return ['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null'];
  const known = path.join(dir, 'known_hosts');
  const name = machine.sshPort === 22 ? machine.host : `[${machine.host}]:${machine.sshPort}`;
  fs.writeFileSync(known, `${name} ${machine.hostKey.trim()}\n`);
  return ['-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${known}`];
}

/**
 * Why the agent named by `env` cannot log `pulumi up` in to one of `machines` (the machine refuses every key it holds),
 * in one line; undefined when each takes one of them, or when a machine cannot be asked (no answer within
 * PROBE_CONNECT_SECONDS, another host key, no ssh here): then the steps say what they meet.
 */
export function agentLoginProblem(machines: readonly SshMachine[], env: NodeJS.ProcessEnv): string | undefined {
  const socket = env[SSH_AGENT_VARIABLE];
  if (!socket) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-ssh-login-'));
  try {
    const asked = new Set<string>();
    for (const machine of machines) {
      const login = `${machine.user}@${machine.host}`;
      if (asked.has(`${login}:${machine.sshPort}`)) continue;
      asked.add(`${login}:${machine.sshPort}`);
      // Only the agent's keys (no key file, no ssh config of the operator's), publickey only, nothing asked.
      const options = ['-F', '/dev/null', '-o', 'BatchMode=yes', '-o', 'IdentityFile=/dev/null'];
      options.push('-o', 'PreferredAuthentications=publickey', '-o', `ConnectTimeout=${PROBE_CONNECT_SECONDS}`);
      options.push(...hostKeyOptions(machine, dir), '-p', String(machine.sshPort));
      const probe = spawnSync('ssh', [...options, login, 'true'], { env, encoding: 'utf8', timeout: 30_000 });
      const said = (probe.stderr ?? '').trim().split('\n').pop() ?? '';
      if (probe.status === 255 && /Permission denied/.test(said)) {
        const nodes = machines.filter((m) => m.host === machine.host && m.user === machine.user).map((m) => m.name);
        return `your ssh agent (${SSH_AGENT_VARIABLE}=${socket}) holds no key that ${login} takes (${said}), so pulumi up cannot log in to node ${nodes.join(', ')}: load the key the machine takes (ssh-add ~/.ssh/id_ed25519), or add the agent's key (ssh-add -L) to ~${machine.user}/.ssh/authorized_keys there`;
      }
    }
    return undefined;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

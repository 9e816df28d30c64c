/**
 * Whether the ssh agent `pulumi up` logs in with can log in at all: it answers on SSH_AUTH_SOCK and holds a key
 * (`ssh-add -l`, asked once, on this machine, before anything is declared). A dead agent would otherwise end a step
 * with the SSH library's raw `dial unix …: no such file or directory`, and an empty one with ten login retries.
 */
import { spawnSync } from 'child_process';
import { SSH_AGENT_VARIABLE } from '../core/catalog/sshLogin';

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

/**
 * How `pulumi up` logs in to an SSH node's machine (`lacchain:sshAuthentication`): with the operator's ssh agent, the
 * default, or with a private key stored in the stack (`lacchain:sshPrivateKey`), for a runner without an agent.
 */
import { configKey } from './defaults';

/** The ways `pulumi up` can log in, the default first. */
export const SSH_AUTHENTICATIONS = ['agent', 'privateKey'] as const;
/** One of them. */
export type SshAuthentication = (typeof SSH_AUTHENTICATIONS)[number];

/** The stack setting that chooses one, and the one that holds the key for `privateKey`. */
export const SSH_AUTHENTICATION_KEY = configKey('sshAuthentication');
export const SSH_PRIVATE_KEY_KEY = configKey('sshPrivateKey');

/** The environment variable naming the operator's ssh agent socket, as ssh and the command provider read it. */
export const SSH_AGENT_VARIABLE = 'SSH_AUTH_SOCK';

/** What each way means for the operator, said by the plan, `pulumi up` and the docs. */
export const SSH_AUTHENTICATION_FACTS: Record<SshAuthentication, string> = {
  agent: `pulumi up logs in with your ssh agent (${SSH_AGENT_VARIABLE}); the private key stays out of the stack file and the state`,
  privateKey: `pulumi up logs in with ${SSH_PRIVATE_KEY_KEY}, kept encrypted in the stack file and the state`,
};

/** The way a stack logs in: the one it names, else the stored key's when it stores one, else the agent. */
export function sshAuthenticationOf(named: SshAuthentication | undefined, keyStored: boolean): SshAuthentication {
  return named ?? (keyStored ? 'privateKey' : 'agent');
}

/** The one line that says how a stack logs in to its SSH nodes (the plan and `pulumi up` print it). */
export function sshLoginLine(authentication: SshAuthentication): string {
  return `SSH login: ${authentication} (${SSH_AUTHENTICATION_KEY}): ${SSH_AUTHENTICATION_FACTS[authentication]}`;
}

/**
 * Why `pulumi up` cannot log in to the SSH nodes `nodeNames` with the agent: the environment names none. Undefined
 * when it can, or when the stack logs in otherwise (or has no SSH node).
 */
export function agentProblem(
  configFile: string,
  authentication: SshAuthentication,
  nodeNames: readonly string[],
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (authentication !== 'agent' || nodeNames.length === 0 || env[SSH_AGENT_VARIABLE]) return undefined;
  return `${configFile}: ${SSH_AUTHENTICATION_KEY}: agent (the default without ${SSH_PRIVATE_KEY_KEY}), but ${SSH_AGENT_VARIABLE} is not set, so pulumi up cannot log in to node ${nodeNames.join(', ')}; allowed: an ssh agent holding your key (eval "$(ssh-agent -s)" && ssh-add ~/.ssh/id_ed25519), or a stored key (pulumi config set ${SSH_AUTHENTICATION_KEY} privateKey && pulumi config set --secret ${SSH_PRIVATE_KEY_KEY} < ~/.ssh/id_ed25519)`;
}

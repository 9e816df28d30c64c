/**
 * How `pulumi up` logs in to SSH nodes (core/catalog/sshLogin.ts): the agent unless the stack stores a key or names
 * the way, the line the plan and `pulumi up` print, and the one-line refusal when the agent is missing.
 */
import { agentProblem, sshAuthenticationOf, sshLoginLine } from '../../core/catalog/sshLogin';

describe('the SSH login', () => {
  it('is the agent unless the stack stores a key; a named way wins', () => {
    expect(sshAuthenticationOf(undefined, false)).toBe('agent');
    expect(sshAuthenticationOf(undefined, true)).toBe('privateKey');
    expect(sshAuthenticationOf('agent', false)).toBe('agent');
    expect(sshAuthenticationOf('privateKey', false)).toBe('privateKey');
  });

  it('is said in one line, which names where the key is', () => {
    expect(sshLoginLine('agent')).toBe(
      'SSH login: agent (lacchain:sshAuthentication): pulumi up logs in with your ssh agent (SSH_AUTH_SOCK); the private key stays out of the stack file and the state',
    );
    expect(sshLoginLine('privateKey')).toBe(
      'SSH login: privateKey (lacchain:sshAuthentication): pulumi up logs in with lacchain:sshPrivateKey, kept encrypted in the stack file and the state',
    );
  });

  it('needs SSH_AUTH_SOCK only with the agent and an SSH node', () => {
    const file = 'Pulumi.testnet.yaml';
    expect(agentProblem(file, 'agent', ['validator'], { SSH_AUTH_SOCK: '/run/user/1000/agent.sock' })).toBeUndefined();
    expect(agentProblem(file, 'agent', [], {})).toBeUndefined();
    expect(agentProblem(file, 'privateKey', ['validator'], {})).toBeUndefined();
    const problem = agentProblem(file, 'agent', ['validator', 'writer'], { SSH_AUTH_SOCK: '' });
    expect(problem).toMatch(
      /^Pulumi\.testnet\.yaml: lacchain:sshAuthentication: agent .*SSH_AUTH_SOCK is not set, so pulumi up cannot log in to node validator, writer; allowed: an ssh agent holding your key .*, or a stored key /,
    );
    expect(problem).not.toContain('\n');
  });
});

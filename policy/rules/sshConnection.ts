/**
 * Rules on how the program reaches an SSH node: the node key travels over that connection, so the machine must prove
 * who it is with a pinned host key. Production networks always need one; a test network's explicit opt-out
 * (inventory accept_any_host_key) is flagged.
 */
import type { PolicyResource } from '../inspect';
import { at, isOpaque, remoteStepOf, TYPES } from '../inspect';
import { describeResource, expectedNode, networkOf, Rule } from './common';
import type { PolicyContext } from '../expectations';

/**
 * Whether the remote command pins the machine's host key. Its connection holds the SSH key, so where it cannot be
 * read (the offline plan, an encrypted key), the node's settings tell, read as the program reads them.
 */
function pinsHostKey(resource: PolicyResource, context: PolicyContext): boolean {
  const connection = resource.inputs.connection;
  if (!isOpaque(connection)) return Boolean(at(connection, 'hostKey'));
  const expected = expectedNode(context, remoteStepOf(resource)?.node, describeResource(resource));
  return typeof expected !== 'string' && expected.hostKeyPinned === true;
}

/** Whether the node of a command without a pinned host key opted out of pinning, or why that cannot be known. */
function optedOut(resource: PolicyResource, context: PolicyContext): boolean | string {
  const where = describeResource(resource);
  const expected = expectedNode(context, remoteStepOf(resource)?.node, where);
  if (typeof expected === 'string') return expected;
  return expected.acceptAnyHostKey === true && networkOf(resource, context)?.allowsUnpinnedHostKey === true;
}

export const sshHostKeyPinned: Rule = {
  name: 'ssh-host-key-pinned',
  description:
    'A remote step connects only to the machine whose SSH host key is pinned (inventory host_key): the node key goes over that connection.',
  types: [TYPES.command],
  check(resource, context) {
    if (pinsHostKey(resource, context)) return [];
    const opted = optedOut(resource, context);
    if (opted === true) return [];
    const where = describeResource(resource);
    return [
      typeof opted === 'string'
        ? opted
        : `${where}: connects without a pinned SSH host key (inventory host_key), so the node key would go to whatever answers at the address`,
    ];
  },
};

export const sshHostKeyOptOut: Rule = {
  name: 'ssh-host-key-opt-out',
  description: "Flags a test network's SSH node whose operator chose to connect without a pinned host key.",
  types: [TYPES.command],
  advisory: true,
  check(resource, context) {
    if (pinsHostKey(resource, context) || optedOut(resource, context) !== true) return [];
    return [
      `${describeResource(resource)}: connects without checking the machine's SSH host key (inventory accept_any_host_key): pin host_key before this node holds anything of value`,
    ];
  },
};

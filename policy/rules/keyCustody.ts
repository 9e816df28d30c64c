/**
 * Rules on where a node key lives (`keyCustody`, docs/security.md#key-custody): a Kubernetes node whose key is in the
 * operator's Secret mounts exactly that Secret and the program never makes one of that name nor a key Secret of its
 * own for it; and, advisory, a mainnet validator whose key is in the stack's state is told what the other custodies
 * would give it.
 */
import { KEY_CUSTODY_FACTS } from '../../core/catalog/keyCustody';
import { KEY_SECRET_ANNOTATION, kubernetesNames } from '../../core/catalog/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { at, kubernetesNodeOf, PolicyResource, remoteStepOf, TYPES } from '../inspect';
import type { PolicyContext } from '../expectations';
import { describeResource, expectedNode, networkOf, Rule } from './common';

/** The Secret the pod's `key` volume names. */
function keyVolumeSecret(resource: PolicyResource): unknown {
  const volumes = at(resource.inputs, 'spec', 'template', 'spec', 'volumes');
  const key = Array.isArray(volumes) ? volumes.find((volume) => at(volume, 'name') === 'key') : undefined;
  return at(key, 'secret', 'secretName');
}

/** The violations of a StatefulSet whose node keeps its key in the operator's Secret. */
function statefulSetChecks(resource: PolicyResource, context: PolicyContext): string[] {
  const where = describeResource(resource);
  const expected = expectedNode(context, kubernetesNodeOf(resource), where);
  if (typeof expected === 'string') return [expected];
  if (expected.keyCustody !== 'secret') return [];
  const named = expected.keySecret;
  if (named === undefined) return [`${where}: keyCustody secret, but the settings name no keySecret`];
  const problems: string[] = [];
  const mounted = keyVolumeSecret(resource);
  if (mounted !== named) {
    problems.push(
      `${where}: its key volume mounts Secret ${JSON.stringify(mounted)}, not ${named} that keySecret names (keyCustody secret)`,
    );
  }
  const annotated = at(resource.inputs, 'metadata', 'annotations', KEY_SECRET_ANNOTATION);
  if (annotated !== named) {
    problems.push(
      `${where}: annotation ${KEY_SECRET_ANNOTATION} is ${JSON.stringify(annotated)}, not ${named}: the rules on the containers that receive the key read it`,
    );
  }
  return problems;
}

/** The violations of a Secret the program declares, against the nodes whose key is in the operator's Secret. */
function secretChecks(resource: PolicyResource, context: PolicyContext): string[] {
  const name = at(resource.inputs, 'metadata', 'name');
  const where = describeResource(resource);
  const problems: string[] = [];
  for (const [node, expected] of Object.entries(context.nodes ?? {})) {
    if (expected.keyCustody !== 'secret') continue;
    if (name === expected.keySecret) {
      problems.push(
        `${where}: the program declares Secret ${name}, which node ${node}'s keySecret names: the key is yours (keyCustody secret); the program never makes, reads or deletes it`,
      );
    }
    if (name === kubernetesNames(node).keySecret) {
      problems.push(
        `${where}: a key Secret of the program's own for node ${node}, whose key is in Secret ${expected.keySecret} (keyCustody secret): its key would be in the stack's state`,
      );
    }
  }
  return problems;
}

export const keySecretReferenced: Rule = {
  name: 'key-secret-referenced',
  description:
    "A Kubernetes node with keyCustody secret takes its key from the operator's Secret that keySecret names (its key volume and the annotation the key rules read), and the program declares no Secret of that name nor a key Secret of its own for the node.",
  types: [TYPES.statefulSet, TYPES.secret],
  check(resource, context) {
    return resource.type === TYPES.statefulSet ? statefulSetChecks(resource, context) : secretChecks(resource, context);
  },
};

/** The node of a resource that holds the node key in the stack's custody: its key Secret, or its node-key step. */
function stackKeyHolderOf(resource: PolicyResource): string | undefined {
  if (resource.type === TYPES.command) {
    const step = remoteStepOf(resource);
    return step?.step === 'node-key' ? step.node : undefined;
  }
  const node = kubernetesNodeOf(resource);
  return node !== undefined && at(resource.inputs, 'metadata', 'name') === kubernetesNames(node).keySecret
    ? node
    : undefined;
}

export const validatorKeyCustody: Rule = {
  name: 'validator-key-custody',
  description:
    "Flags a mainnet validator whose key is in the stack's state (keyCustody stack), and says what keyCustody machine or secret would give it.",
  types: [TYPES.secret, TYPES.command],
  advisory: true,
  check(resource, context) {
    if (networkOf(resource, context) !== NETWORKS['mainnet-omega']) return [];
    const node = stackKeyHolderOf(resource);
    const expected = node === undefined ? undefined : context.nodes?.[node];
    if (!expected || expected.typenode !== 'validator' || expected.keyCustody !== 'stack') return [];
    const other = expected.target === 'ssh' ? 'machine' : 'secret';
    const facts = KEY_CUSTODY_FACTS[other];
    return [
      `${describeResource(resource)}: validator ${node} keeps the key that signs blocks in the stack's state (keyCustody stack): whoever can read the state with its passphrase or secrets provider holds it. keyCustody ${other} would keep it ${facts.where}; the state would hold ${facts.state}, and a leaked state would lose ${facts.stateLeak}; the enode is then known ${facts.enodeKnown} (docs/security.md#key-custody)`,
    ];
  },
};

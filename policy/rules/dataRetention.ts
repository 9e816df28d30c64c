/**
 * Rules on what must outlive the stack: the node key Secret and the data volume (kept, never protected), and a
 * mainnet volume's size.
 */
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { quantityBytes } from '../../core/quantity';
import { at, isOpaque, kubernetesNodeOf, networkLabelOf, PolicyResource, TYPES } from '../inspect';
import { describeResource, Rule } from './common';

/**
 * Checks that an object outlives the stack: kept on delete (`retainOnDelete`, which `pulumi destroy` honours by
 * forgetting the object and leaving it in the cluster), and not `protect`ed, which would make every `pulumi destroy`
 * fail in its preview and delete nothing. CrossGuard does not show `retainOnDelete`; the offline plan does.
 */
function keptChecks(resource: PolicyResource, what: string, why: string): string[] {
  const where = describeResource(resource);
  const problems: string[] = [];
  if (resource.options.protect) {
    problems.push(
      `${where} (${what}) is protected: pulumi destroy would fail and delete nothing; keep it with retainOnDelete instead`,
    );
  }
  if (resource.options.retainOnDelete === false) {
    problems.push(`${where} (${what}) is not kept on delete (retainOnDelete): ${why}`);
  }
  return problems;
}

export const nodeKeyKept: Rule = {
  name: 'node-key-secret-kept',
  description:
    'The Secret holding the node key is kept on delete (and not protected, so destroy works): losing it loses the ' +
    "node's permissioned identity (enode and address).",
  types: [TYPES.secret],
  check(resource) {
    // Only the node key's Secret: other Secrets of a node (the RPC credentials) follow their settings.
    const node = kubernetesNodeOf(resource);
    const name = at(resource.inputs, 'metadata', 'name');
    if (node !== undefined && name !== kubernetesNames(node).keySecret) return [];
    return keptChecks(
      resource,
      'the node key',
      "deleting it loses the node's permissioned identity (set lacchain:allowKeyDeletion back to false)",
    );
  },
};

export const dataVolumeKept: Rule = {
  name: 'data-volume-kept',
  description:
    "The node's data volume is kept on delete (and not protected, so destroy works): the chain data is never lost by accident.",
  types: [TYPES.volume],
  check(resource) {
    return keptChecks(resource, 'the chain data', 'deleting it loses the synchronised chain');
  },
};

const MAINNET = NETWORKS['mainnet-omega'];

export const mainnetVolumeSize: Rule = {
  name: 'mainnet-volume-size',
  description: `A mainnet node's data volume is at least the recommended size (${MAINNET.volumeSize}).`,
  types: [TYPES.volume],
  check(resource, context) {
    const onMainnet = networkLabelOf(resource) === MAINNET.name || context.network?.name === MAINNET.name;
    if (!onMainnet) return [];
    const where = describeResource(resource);
    const size = at(resource.inputs, 'spec', 'resources', 'requests', 'storage');
    if (isOpaque(size)) return [];
    const bytes = quantityBytes(size);
    if (bytes === undefined) return [`${where}: storage request ${JSON.stringify(size)} is not a storage size`];
    return bytes >= (quantityBytes(MAINNET.volumeSize) as number)
      ? []
      : [`${where}: ${String(size)} is below the ${MAINNET.volumeSize} recommended on ${MAINNET.name}`];
  },
};

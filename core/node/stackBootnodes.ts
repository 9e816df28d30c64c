/**
 * A stack's own nodes reach each other: the writers and validators of a stack that holds a bootnode carry that
 * bootnode's enode in their `bootnodes`, beside the network's (docs/settings.md, "The stack's bootnodes"). A bootnode
 * keeps the network's list only, as the reference roles give it. Pure: the loaded nodes and their imported keys in, each
 * node's extra bootnodes set.
 */
import { NODE_TYPE_FACTS } from '../catalog/nodeTypes';
import { deriveIdentity, formatEnode } from '../identity/nodeKey';
import type { NodeSettings } from '../settings/model';

/**
 * The enode of a bootnode of the stack when it is known before the node starts: from its `publicKey`, or from the key
 * the stack imports (`lacchain:nodeKeys.<node>`). Undefined for a key made later (generated on the first `pulumi up`, or
 * on the machine with `machine` custody and no `publicKey`).
 */
export function knownEnode(node: NodeSettings, importedKeys: Readonly<Record<string, string>>): string | undefined {
  if (node.publicKey !== undefined) return formatEnode(node.publicKey, node.p2pHost, node.p2pPort);
  const imported = node.keyCustody === 'stack' ? importedKeys[node.name] : undefined;
  if (imported === undefined) return undefined;
  try {
    return deriveIdentity(imported, node.p2pHost, node.p2pPort).enode;
  } catch {
    return undefined; // not readable here (a key still encrypted for the plan): not known
  }
}

/** Sets each writer's and validator's `stackBootnodes`: the enodes of the stack's bootnodes known before they start. */
export function addStackBootnodes(nodes: NodeSettings[], importedKeys: Readonly<Record<string, string>>): void {
  const bootnodes = nodes.filter((node) => node.typenode === 'bootnode');
  const enodes = bootnodes.map((node) => knownEnode(node, importedKeys)).filter((e): e is string => e !== undefined);
  for (const node of nodes) {
    if (NODE_TYPE_FACTS[node.typenode].joinsStackBootnodes) node.stackBootnodes = enodes;
  }
}

/**
 * What the plan and the preview say of the stack's bootnodes: which nodes carry whose enode, and the bootnodes whose
 * enode is not known before their first start. Nothing for a stack without a bootnode, or without a node to carry it.
 */
export function describeStackBootnodes(
  nodes: readonly NodeSettings[],
  importedKeys: Readonly<Record<string, string>>,
): string[] {
  const carriers = nodes.filter((node) => NODE_TYPE_FACTS[node.typenode].joinsStackBootnodes).map((n) => n.name);
  const bootnodes = nodes.filter((node) => node.typenode === 'bootnode');
  if (carriers.length === 0 || bootnodes.length === 0) return [];
  return bootnodes.map((bootnode) => {
    const enode = knownEnode(bootnode, importedKeys);
    return enode === undefined
      ? `bootnode ${bootnode.name}: its enode is known only once its key is made (keyCustody ${bootnode.keyCustody}); give its publicKey, or import its key, for ${carriers.join(', ')} to carry it in their bootnodes`
      : `bootnode ${bootnode.name} (${enode}) in the bootnodes of ${carriers.join(', ')}, beside the network's`;
  });
}

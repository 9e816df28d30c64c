/**
 * The program: from validated settings to one component per node, and the stack outputs.
 * index.ts (under `pulumi up`), the offline plan and the tests all call declareStack, so the same settings always
 * declare the same resources.
 */
import * as pulumi from '@pulumi/pulumi';
import { NodeIdentity } from './components/nodeIdentity';
import { permissioningRequest, PermissioningRequest } from './core/permissioning';
import type { NodeSettings, StackSettings } from './core/settings/model';

/** The secret settings, as Pulumi inputs (secret outputs under `pulumi up`). */
export interface StackSecretInputs {
  /** The SSH private key for SSH nodes. */
  sshPrivateKey?: pulumi.Input<string>;
  /** Imported node private keys by node name. */
  nodeKeys: Record<string, pulumi.Input<string>>;
}

/** What the program needs from outside: how to obtain the verified genesis. */
export interface ProgramDeps {
  /** The network's genesis file text, verified against its pinned digest. */
  genesis: () => pulumi.Input<string>;
}

/** The outputs of one node. */
export interface NodeOutputs {
  typenode: string;
  target: string;
  /** The node's enode: hand it to the network operator. */
  enode: pulumi.Output<string>;
  /** The node's address: hand it to the network operator. */
  address: pulumi.Output<string>;
  /** The public key (the enode's node id). */
  publicKey: pulumi.Output<string>;
  /** Everything the network operator needs to permission the node. */
  permissioningRequest: pulumi.Output<PermissioningRequest>;
}

/** The stack outputs. */
export interface StackOutputs {
  /** The network the stack deploys to. */
  network: string;
  /** Per node (by its name in the stack). */
  nodes: Record<string, NodeOutputs>;
}

/** Declares every node of the stack. */
export function declareStack(settings: StackSettings, secrets: StackSecretInputs, _deps: ProgramDeps): StackOutputs {
  const nodes: Record<string, NodeOutputs> = {};
  for (const node of settings.nodes) nodes[node.name] = declareNode(node, secrets);
  return { network: settings.network.name, nodes };
}

function declareNode(node: NodeSettings, secrets: StackSecretInputs): NodeOutputs {
  const identity = new NodeIdentity(`${node.name}-identity`, {
    importedKey: secrets.nodeKeys[node.name],
    p2pHost: node.p2pHost,
    p2pPort: node.p2pPort,
  });
  const request = pulumi.all([identity.enode, identity.address]).apply(([enode, address]) =>
    permissioningRequest({
      network: node.network,
      nodeType: node.typenode,
      nodeName: node.nodeName,
      email: node.nodeEmail,
      enode,
      address,
    }),
  );
  return {
    typenode: node.typenode,
    target: node.target,
    enode: identity.enode,
    address: identity.address,
    publicKey: identity.publicKey,
    permissioningRequest: request,
  };
}

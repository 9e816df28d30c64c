/**
 * What every node component gives your program, wherever the node runs: its identity, its permissioning request, its
 * RPC URL and what is reachable from outside (ClusterNode and MachineNode add where they run it).
 */
import * as pulumi from '@pulumi/pulumi';
import type { ReachableFromOutside } from '../core/node/exposure';
import type { PermissioningRequest } from '../core/permissioning';
import type { NodeOutputs } from '../program';
import { nodeOutput } from './declareNode';

/** A Besu node of a LACChain network, declared by one of the node components. */
export abstract class BesuNode extends pulumi.ComponentResource {
  /** The node's enode: send it, with `address`, for permissioning (with machine custody, known after the first `up`). */
  readonly enode: pulumi.Output<string>;
  /** The node's address. */
  readonly address: pulumi.Output<string>;
  /** The public key (the enode's node id). */
  readonly publicKey: pulumi.Output<string>;
  /** Everything the network's operator needs to permission the node, and where to send it. */
  readonly permissioningRequest: pulumi.Output<PermissioningRequest>;
  /** The node's JSON-RPC URL (on a machine, through its TLS proxy). */
  readonly rpcUrl: pulumi.Output<string | undefined>;
  /** Each port reachable from outside and what it admits. */
  readonly reachableFromOutside: pulumi.Output<ReachableFromOutside>;

  /** The component of `type` whose node is `declared` (an output: declared once the values your program makes are known). */
  protected constructor(
    type: string,
    name: string,
    declared: (self: BesuNode) => pulumi.Output<NodeOutputs>,
    opts?: pulumi.ComponentResourceOptions,
  ) {
    super(type, name, {}, opts);
    this.declared = declared(this);
    this.enode = nodeOutput(this.declared, 'enode');
    this.address = nodeOutput(this.declared, 'address');
    this.publicKey = nodeOutput(this.declared, 'publicKey');
    this.permissioningRequest = nodeOutput(this.declared, 'permissioningRequest');
    this.rpcUrl = nodeOutput(this.declared, 'rpcUrl');
    this.reachableFromOutside = nodeOutput(this.declared, 'reachableFromOutside');
  }

  /** The declared node's outputs, for the component's own. */
  protected readonly declared: pulumi.Output<NodeOutputs>;

  /** Registers what every node shows in the engine's outputs (its identity and permissioning request), and `own`. */
  protected registerNodeOutputs(own: pulumi.Inputs): void {
    this.registerOutputs({
      enode: this.enode,
      address: this.address,
      permissioningRequest: this.permissioningRequest,
      ...own,
    });
  }
}

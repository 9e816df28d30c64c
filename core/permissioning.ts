/**
 * The permissioning request: what the network operator needs to permission a node.
 */
import type { Network } from './catalog/networks';
import type { NodeType } from './catalog/nodeTypes';

/** What the operator sends to the network operator. */
export interface PermissioningRequest {
  /** Our name of the network. */
  network: string;
  /** Its network id (chain id). */
  networkId: number;
  /** writer, validator or bootnode. */
  nodeType: NodeType;
  /** The node's name on the network. */
  nodeName: string;
  /** The operator's contact e-mail. */
  email: string;
  /** The node's enode. */
  enode: string;
  /** The node's address. */
  address: string;
  /** How to send it, for this network, and where. */
  procedure: string;
}

/** How a network's permissioning request is sent, and where: one text for the stack output, init and the docs. */
export function permissioningHowAndWhere(network: Network): string {
  return `${network.permissioningProcedure} ${network.permissioningRequestTo}`;
}

/** Builds the request for one node. */
export function permissioningRequest(args: {
  network: Network;
  nodeType: NodeType;
  nodeName: string;
  email: string;
  enode: string;
  address: string;
}): PermissioningRequest {
  return {
    network: args.network.name,
    networkId: args.network.networkId,
    nodeType: args.nodeType,
    nodeName: args.nodeName,
    email: args.email,
    enode: args.enode,
    address: args.address,
    procedure: permissioningHowAndWhere(args.network),
  };
}

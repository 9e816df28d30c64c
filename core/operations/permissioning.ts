/**
 * Is the node permissioned? The question Besu itself asks the network's node-permissioning contract before it accepts
 * a peer (contract version 1, the one the LACChain networks use): `connectionAllowed` from one enode to another, at a
 * block. LACChain's rules allow a connection only when both ends are registered, so the node is permissioned when the
 * contract allows a connection from it to one of the network's bootnodes. Pure: the call's data in, the verdicts out.
 * The encoding is the ABI library's (ethers), not ours: loaded on the first call's encoding only, since every tool
 * that reads this file's verdicts would otherwise load its 145 modules at start (about a third of a tool's start).
 */
import type { Interface } from 'ethers';

/** Version 1 of the node-permissioning interface: source node then destination node, each id (high, low), IP, port. */
const NODE_PERMISSIONING_V1_ABI =
  'function connectionAllowed(bytes32 sourceEnodeHigh, bytes32 sourceEnodeLow, bytes16 sourceIp, uint16 sourcePort, ' +
  'bytes32 destinationEnodeHigh, bytes32 destinationEnodeLow, bytes16 destinationIp, uint16 destinationPort) ' +
  'view returns (bytes32)';
let nodePermissioningV1: Interface | undefined;
function nodePermissioningInterface(): Interface {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  nodePermissioningV1 ??= new (require('ethers') as typeof import('ethers')).Interface([NODE_PERMISSIONING_V1_ABI]);
  return nodePermissioningV1;
}

/** The contract's two answers (32 bytes each); anything else is an error to Besu. */
export const CONNECTION_ANSWERS = {
  allowed: `0x${'ff'.repeat(32)}`,
  refused: `0x7f${'ff'.repeat(31)}`,
} as const;

/** An enode's parts as the contract takes them. */
export interface EnodeParts {
  /** The 64-byte node id, 128 hex characters without 0x. */
  id: string;
  ip: string;
  port: number;
}

/** An enode's node id, IP and port; throws when it is not `enode://<128 hex>@<IPv4>:<port>`. */
export function enodeParts(enode: string): EnodeParts {
  const match = /^enode:\/\/([0-9a-fA-F]{128})@(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})(?:\?.*)?$/.exec(enode);
  if (!match || !match[2].split('.').every((byte) => Number(byte) <= 255) || Number(match[3]) > 65535) {
    throw new Error(`not an enode with an IPv4 address: ${enode}`);
  }
  return { id: match[1].toLowerCase(), ip: match[2], port: Number(match[3]) };
}

/** An IPv4 address as the contract's bytes16: the IPv4-mapped IPv6 address `::ffff:a.b.c.d`. */
export function ipBytes16(ip: string): string {
  const bytes = ip.split('.').map((byte) => Number(byte).toString(16).padStart(2, '0'));
  return `0x${'00'.repeat(10)}ffff${bytes.join('')}`;
}

/** The arguments of one end of the connection: id high, id low, IP, port. */
function endArguments(end: EnodeParts): [string, string, string, number] {
  return [`0x${end.id.slice(0, 64)}`, `0x${end.id.slice(64)}`, ipBytes16(end.ip), end.port];
}

/** The `eth_call` data asking whether `source` may connect to `destination`. */
export function connectionAllowedData(source: EnodeParts, destination: EnodeParts): string {
  return nodePermissioningInterface().encodeFunctionData('connectionAllowed', [
    ...endArguments(source),
    ...endArguments(destination),
  ]);
}

/** The contract's answer read as Besu reads it: allowed, refused, or an error naming what came back. */
export function connectionAllowed(answer: unknown): boolean {
  const text = typeof answer === 'string' ? answer.toLowerCase() : '';
  if (text === CONNECTION_ANSWERS.allowed) return true;
  if (text === CONNECTION_ANSWERS.refused) return false;
  throw new Error(
    `the node-permissioning contract answered ${JSON.stringify(answer)}, neither allowed nor refused: ` +
      'is the network id or the contract address right?',
  );
}

/** The network's bootnodes the node asks for a connection to (not itself, when it is one of them). */
export function permissioningDestinations(nodeEnode: string, bootnodes: readonly string[]): EnodeParts[] {
  const own = enodeParts(nodeEnode).id;
  return bootnodes.map(enodeParts).filter((bootnode) => bootnode.id !== own);
}

/** What the contract said of the node at one block: how many of the bootnodes it may connect to. */
export interface PermissioningAnswer {
  block: number;
  allowed: number;
  of: number;
}

/** Permissioned at a block: allowed to connect to at least one of the network's bootnodes. */
export function permissioned(answer: PermissioningAnswer): boolean {
  return answer.allowed > 0;
}

/** The three states an operator tells apart. */
export type PermissioningState = 'not permissioned' | 'permissioned, no peers' | 'permissioned, syncing' | 'in sync';

/** The node's state, from the contract's answer at its head, its peers and whether it is syncing. */
export function permissioningState(
  answer: PermissioningAnswer,
  peers: number | undefined,
  syncing: boolean,
): PermissioningState {
  if (!permissioned(answer)) return 'not permissioned';
  if (!peers) return 'permissioned, no peers';
  return syncing ? 'permissioned, syncing' : 'in sync';
}

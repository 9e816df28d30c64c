/**
 * JSON-RPC as the day-2 operations speak it: request bodies and answers.
 */

/** The body of a JSON-RPC 2.0 request. */
export function rpcRequest(method: string, params: readonly unknown[] = []): string {
  return JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 });
}

/** The result of a JSON-RPC answer from `address`; throws naming the address, or with the node's error message. */
export function rpcResult(method: string, answer: string, address: string): unknown {
  if (answer.trim() === '') throw new Error(`${method}: no answer from ${address}`);
  let parsed: { result?: unknown; error?: { code: number; message: string } };
  try {
    parsed = JSON.parse(answer);
  } catch {
    throw new Error(`${method}: ${address} answered something that is not JSON-RPC: ${answer.slice(0, 120)}`);
  }
  if (parsed.error) throw new Error(`${method}: ${parsed.error.message} (${parsed.error.code})`);
  return parsed.result;
}

/** A hex quantity (`0x1a`) as a number. */
export function hexQuantity(value: unknown): number {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]+$/.test(value))
    throw new Error(`not a hex quantity: ${String(value)}`);
  return Number.parseInt(value, 16);
}

/** eth_syncing's answer: not syncing, or how far behind. */
export type SyncState = false | { currentBlock: number; highestBlock: number };

export function syncState(value: unknown): SyncState {
  if (value === false) return false;
  const object = value as { currentBlock?: unknown; highestBlock?: unknown };
  return { currentBlock: hexQuantity(object.currentBlock), highestBlock: hexQuantity(object.highestBlock) };
}

/**
 * Asks a node's own RPC what the network's node-permissioning contract says of it, as Besu asks: `eth_call` of
 * `connectionAllowed` from the node's enode to each of the network's bootnodes, at its head and at the head it had when
 * it last started (found from the blocks' timestamps).
 */
import { BLOCK_PERIOD_SECONDS } from '../../core/catalog/health';
import type { PermissioningObservation } from '../../core/operations/causes';
import {
  connectionAllowed,
  connectionAllowedData,
  enodeParts,
  PermissioningAnswer,
  permissioningDestinations,
} from '../../core/operations/permissioning';
import { hexQuantity } from '../../core/operations/rpc';
import type { NodeSettings } from '../../core/settings/model';
import type { NodeClient } from './nodeClientTypes';

/** How many guesses the search for the block at a time makes (blocks are regular: two or three are enough). */
const BLOCK_SEARCH_STEPS = 6;

/** What the contract says of `enode` at `block`: to how many of the network's bootnodes it may connect. */
async function answerAt(node: NodeSettings, client: NodeClient, enode: string, block: number) {
  const source = enodeParts(enode);
  const destinations = permissioningDestinations(enode, node.network.bootnodes[node.typenode]);
  const answers = await Promise.all(
    destinations.map(async (destination) =>
      connectionAllowed(
        await client.rpc('eth_call', [
          { to: node.network.nodesPermissioningContract, data: connectionAllowedData(source, destination) },
          `0x${block.toString(16)}`,
        ]),
      ),
    ),
  );
  return { block, allowed: answers.filter(Boolean).length, of: destinations.length } satisfies PermissioningAnswer;
}

async function timestampOf(client: NodeClient, block: number): Promise<number> {
  const header = (await client.rpc('eth_getBlockByNumber', [`0x${block.toString(16)}`, false])) as {
    timestamp?: unknown;
  } | null;
  if (!header) throw new Error(`block ${block} not found`);
  return hexQuantity(header.timestamp);
}

/** The newest block at or before `time` (epoch seconds), from the blocks' timestamps (one every block period). */
export async function blockAt(client: NodeClient, time: number, head: number): Promise<number> {
  let block = head;
  let best: number | undefined; // the newest block seen at or before the time
  for (let step = 0; step < BLOCK_SEARCH_STEPS; step++) {
    const timestamp = await timestampOf(client, block);
    if (timestamp <= time) best = Math.max(best ?? 0, block);
    if (timestamp > time) {
      if (block === 0) return 0;
      block = Math.max(0, block - Math.max(1, Math.ceil((timestamp - time) / BLOCK_PERIOD_SECONDS)));
      continue;
    }
    const ahead = Math.floor((time - timestamp) / BLOCK_PERIOD_SECONDS);
    if (ahead === 0 || block === head) return block;
    block = Math.min(head, block + ahead);
  }
  return best ?? block;
}

/**
 * The contract's answers for the node: at its head, and, when it has no peers and its last start is known, at the head
 * it had then (so `check` can tell that a restart is due).
 */
export async function askPermissioning(
  node: NodeSettings,
  client: NodeClient,
  enode: string,
  peers: number | undefined,
): Promise<PermissioningObservation | { error: string }> {
  try {
    const head = hexQuantity(await client.rpc('eth_blockNumber'));
    const observation: PermissioningObservation = { head: await answerAt(node, client, enode, head) };
    if (peers === 0 && observation.head.allowed > 0) {
      const started = await client.startedAt();
      if (started !== undefined) {
        observation.atStart = await answerAt(node, client, enode, await blockAt(client, started, head));
      }
    }
    return observation;
  } catch (error) {
    return { error: (error as Error).message };
  }
}

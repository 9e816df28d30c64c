/**
 * `npm run node -- status --all`: every node of the stack asked at once, through its own client, one row each.
 */
import { deployedRelease, FleetRow, releaseOfClientVersion } from '../../core/operations/fleet';
import { hexQuantity, syncState } from '../../core/operations/rpc';
import type { NodeSettings } from '../../core/settings/model';
import type { NodeClient } from './nodeClient';

/** A number the node answered, or undefined when it did not. */
async function answer<T>(question: Promise<unknown>, read: (value: unknown) => T): Promise<T | undefined> {
  try {
    return read(await question);
  } catch {
    return undefined;
  }
}

/** One node's row: what its service, RPC and companions say; what cannot be read stays unknown. */
export async function fleetRow(node: NodeSettings, client: NodeClient): Promise<FleetRow> {
  const base = { node: node.name, type: node.typenode, path: node.target, companions: node.companions.length };
  let service: { running: boolean; detail: string };
  try {
    service = await client.serviceState();
  } catch (error) {
    return { ...base, service: `unreachable (${(error as Error).message})`, running: false, companionsUp: 0 };
  }
  const [peers, head, syncing, version, companions] = await Promise.all([
    answer(client.rpc('net_peerCount'), hexQuantity),
    answer(client.rpc('eth_blockNumber'), hexQuantity),
    answer(client.rpc('eth_syncing'), syncState),
    answer(client.rpc('web3_clientVersion'), (v) => releaseOfClientVersion(String(v))),
    client.companionStates().catch(() => []),
  ]);
  const deployed = version === undefined ? await client.releaseInUse().catch(() => undefined) : undefined;
  const release = version ?? (deployed !== undefined ? deployedRelease(deployed) : undefined);
  return {
    ...base,
    ...(release !== undefined ? { release } : {}),
    service: service.detail,
    running: service.running,
    ...(peers !== undefined ? { peers } : {}),
    ...(head !== undefined ? { head } : {}),
    ...(syncing !== undefined ? { behind: syncing ? syncing.highestBlock - syncing.currentBlock : 0 } : {}),
    companionsUp: companions.filter((c) => c.running).length,
  };
}

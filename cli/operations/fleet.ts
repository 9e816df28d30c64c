/**
 * `npm run node -- status --all`: every node of the stack asked at once, through its own client, one row each.
 */
import { deployedRelease, FleetRow, releaseOfClientVersion } from '../../core/operations/fleet';
import { hexQuantity, syncState } from '../../core/operations/rpc';
import type { NodeSettings } from '../../core/settings/model';
import type { NodeClient } from './nodeClientTypes';
import { NodeUnreachable } from './nodeUnreachable';
import { permissioned } from '../../core/operations/permissioning';
import { askPermissioning } from './permissioning';
import { ToolFailure } from '../cli';

/** A number the node answered, or undefined when it did not. */
async function answer<T>(question: Promise<unknown>, read: (value: unknown) => T): Promise<T | undefined> {
  try {
    return read(await question);
  } catch {
    return undefined;
  }
}

/** What the contract says of the node at its head (its enode as the stack recorded it), or undefined when unknown. */
async function askWhetherPermissioned(node: NodeSettings, client: NodeClient) {
  const enode =
    (await client.recordedEnode().catch(() => undefined)) ??
    (await answer(client.rpc('net_enode'), (value) => String(value)));
  if (enode === undefined) return undefined;
  const observation = await askPermissioning(node, client, enode, undefined);
  return 'error' in observation ? undefined : observation.head;
}

/**
 * One node's row: what its service, RPC and companions say; what cannot be read stays unknown. A node that cannot be
 * looked at (its client made by `clientOf`, then `reach`) has a short state in its row and the reason as `problem`.
 */
export async function fleetRow(node: NodeSettings, clientOf: () => NodeClient): Promise<FleetRow> {
  const base = { node: node.name, type: node.typenode, path: node.target, companions: node.companions.length };
  let client: NodeClient;
  let service: { running: boolean; detail: string };
  try {
    const fresh = clientOf();
    await fresh.reach();
    // One look: a Kubernetes node's pod and Service read once for all of its row's questions.
    client = fresh.look?.() ?? fresh;
    service = await client.serviceState();
  } catch (error) {
    if (!(error instanceof ToolFailure)) throw error;
    const state = error instanceof NodeUnreachable ? error.state : 'error';
    return { ...base, service: state, running: false, companionsUp: 0, problem: error.message };
  }
  const [peers, head, syncing, version, companions, permissioning, rollout] = await Promise.all([
    answer(client.rpc('net_peerCount'), hexQuantity),
    answer(client.rpc('eth_blockNumber'), hexQuantity),
    answer(client.rpc('eth_syncing'), syncState),
    answer(client.rpc('web3_clientVersion'), (v) => releaseOfClientVersion(String(v))),
    client.companionStates().catch(() => []),
    askWhetherPermissioned(node, client),
    client.rolloutState().catch(() => undefined),
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
    ...(permissioning !== undefined ? { permissioned: permissioned(permissioning) } : {}),
    companionsUp: companions.filter((c) => c.running).length,
    ...(rollout !== undefined ? { rollout } : {}),
  };
}

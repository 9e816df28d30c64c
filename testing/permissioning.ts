/**
 * The network's node-permissioning contract as the Besu stand-in on a test host reads it (its registry file in the
 * node's data folder, tests/fixtures/besu-standin/README.md): who is registered, from which block on.
 */
import { NETWORKS, NetworkName } from '../core/catalog/networks';
import type { NodeType } from '../core/catalog/nodeTypes';
import type { TestHost } from './host/testHost';

/** A node the contract holds, from `fromBlock` on (0 when not given). */
export interface Registration {
  enode: string;
  fromBlock?: number;
}

/** Writes what the contract holds for the stand-in whose data folder is `dataDir` on `host`. */
export async function registerOnHost(host: TestHost, dataDir: string, nodes: readonly Registration[]): Promise<void> {
  const result = await host.ssh(`cat > ${dataDir}/standin-permissioning.json`, {
    input: JSON.stringify({ nodes }),
  });
  if (result.code !== 0) throw new Error(`cannot write the stand-in's registry: ${result.stderr}`);
}

/** The node and its network's bootnodes for its type, registered from the first block: the node is permissioned. */
export function permissioned(enode: string, network: NetworkName, typenode: NodeType): Registration[] {
  return [enode, ...NETWORKS[network].bootnodes[typenode]].map((each) => ({ enode: each, fromBlock: 0 }));
}

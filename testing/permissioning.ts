/**
 * The network's node-permissioning contract as the Besu stand-in reads it (its registry file in the node's data folder,
 * tests/fixtures/besu-standin/README.md), on a test host or in a pod's data volume: who is registered, from which block
 * on.
 */
import * as fs from 'fs';
import * as path from 'path';
import { NETWORKS, NetworkName } from '../core/catalog/networks';
import type { NodeType } from '../core/catalog/nodeTypes';
import type { TestHost } from './host/testHost';

/** A node the contract holds, from `fromBlock` on (0 when not given). */
export interface Registration {
  enode: string;
  fromBlock?: number;
}

/** The stand-in's registry file, in its data folder. */
const REGISTRY_FILE = 'standin-permissioning.json';

/** Writes what the contract holds for the stand-in whose data folder is `dataDir` on `host`. */
export async function registerOnHost(host: TestHost, dataDir: string, nodes: readonly Registration[]): Promise<void> {
  const result = await host.ssh(`cat > ${dataDir}/${REGISTRY_FILE}`, {
    input: JSON.stringify({ nodes }),
  });
  if (result.code !== 0) throw new Error(`cannot write the stand-in's registry: ${result.stderr}`);
}

/**
 * Writes what the contract holds for the stand-in whose data folder is `dataDir` on this machine (a pod's data volume),
 * as one rename: the stand-in never reads half a file.
 */
export function registerInFolder(dataDir: string, nodes: readonly Registration[]): void {
  const file = path.join(dataDir, REGISTRY_FILE);
  fs.writeFileSync(`${file}.new`, JSON.stringify({ nodes }));
  fs.renameSync(`${file}.new`, file);
}

/**
 * The node and its network's bootnodes for its type, registered from the first block: the node is permissioned. With
 * `peers`, the enodes of the test network's peers that stand for the network's nodes it reaches (a test host's
 * network peer, the other nodes of the stack), registered too: the node keeps them as peers.
 */
export function permissioned(
  enode: string,
  network: NetworkName,
  typenode: NodeType,
  peers: readonly string[] = [],
): Registration[] {
  return [enode, ...NETWORKS[network].bootnodes[typenode], ...peers].map((each) => ({ enode: each, fromBlock: 0 }));
}

/**
 * Puts the Besu stand-in whose data folder is `dataDir` (on this machine: a pod's data volume) on the test's network:
 * its p2p layer dials and accepts only `network` (standin-netrestrict, stand-in-only) and dials `peer` as a static node
 * (Besu's static-nodes.json), the network peer that stands for the network's nodes it reaches.
 */
export function onTestNetwork(dataDir: string, network: string, peer: string): void {
  fs.writeFileSync(path.join(dataDir, 'standin-netrestrict'), `${network}\n`);
  fs.writeFileSync(path.join(dataDir, 'static-nodes.json'), JSON.stringify([peer]));
}

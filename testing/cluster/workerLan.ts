/**
 * The real worker's LAN (testing/cluster/kubelet.ts): a bridge of the test's own (WORKER_LAN_BRIDGE, on WORKER_LAN:
 * a private /24 of this machine, never any other network) standing for the network a bare-metal node's NIC is on.
 * The node holds its .1; MetalLB (metallb.ts) gives the LoadBalancer Services addresses of LOAD_BALANCER_POOL on it and
 * answers ARP for them there (layer 2, announced on this bridge only); kube-proxy (serviceProxy.ts) takes what comes
 * to those addresses to the pods. Peers outside the cluster are network namespaces on it (`outsidePeerNamespace`),
 * each with its own address: they reach a node's static IP as a peer on the Internet reaches a real one, by its
 * address and nothing else (no route beyond the LAN).
 *
 * The machine forwards between this bridge and the pods' only: IPv4 forwarding is switched on for the two bridges
 * alone (their own `forwarding`, which goes with them), not the machine's ip_forward; the pods route the LAN through
 * the pods' bridge (kubelet.ts's CNI routes), nothing else.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';

/** The LAN's bridge and its range (the node holds .1). */
export const WORKER_LAN_BRIDGE = 'lacchain-lan0';
export const WORKER_LAN = { prefix: '10.232.2', bits: 24 };
/** The LAN's range, as a CIDR. */
export const WORKER_LAN_NETWORK = `${WORKER_LAN.prefix}.0/${WORKER_LAN.bits}`;
/** The node's address on the LAN. */
export const WORKER_LAN_ADDRESS = `${WORKER_LAN.prefix}.1`;

/** The LAN address ending in `last`. */
export const lanAddress = (last: number) => `${WORKER_LAN.prefix}.${last}`;

/** MetalLB's address pool: the LAN's .200 to .239, the static IPs the test values files give the nodes. */
export const LOAD_BALANCER_POOL = `${WORKER_LAN.prefix}.200-${WORKER_LAN.prefix}.239`;

/** A node type's static IP on the LAN (in LOAD_BALANCER_POOL): writer .210, validator .220, bootnode .230. */
export function lanStaticIp(typenode: 'writer' | 'validator' | 'bootnode'): string {
  return `${WORKER_LAN.prefix}.${{ writer: 210, validator: 220, bootnode: 230 }[typenode]}`;
}

/** iproute2's ip. */
const IP = '/usr/sbin/ip';

/** The network namespaces of the outside peers (one per address), named with this prefix. */
const PEER_NAMESPACE_PREFIX = 'lacchain-lan-';

function ip(args: string[]): void {
  execFileSync(IP, args, { stdio: 'pipe' });
}

/** A bridge's own IPv4 forwarding switch (the machine's ip_forward stays as it is). */
const forwarding = (bridge: string) => `/proc/sys/net/ipv4/conf/${bridge}/forwarding`;

/** Makes the LAN (made again when a killed run left it) and lets the node forward between it and `podBridge`. */
export function makeWorkerLan(podBridge: string): void {
  deleteWorkerLan();
  ip(['link', 'add', WORKER_LAN_BRIDGE, 'type', 'bridge']);
  ip(['addr', 'add', `${WORKER_LAN_ADDRESS}/${WORKER_LAN.bits}`, 'dev', WORKER_LAN_BRIDGE]);
  ip(['link', 'set', WORKER_LAN_BRIDGE, 'up']);
  fs.writeFileSync(forwarding(WORKER_LAN_BRIDGE), '1');
  fs.writeFileSync(forwarding(podBridge), '1');
}

/** Removes the outside peers' namespaces and the LAN (its forwarding switch goes with it). */
export function deleteWorkerLan(): void {
  for (const name of fs.existsSync('/run/netns') ? fs.readdirSync('/run/netns') : []) {
    if (name.startsWith(PEER_NAMESPACE_PREFIX)) deleteNamespace(name);
  }
  try {
    ip(['link', 'delete', WORKER_LAN_BRIDGE]);
  } catch {
    // Not there.
  }
}

function deleteNamespace(name: string): void {
  try {
    ip(['netns', 'delete', name]);
  } catch {
    // Not there.
  }
}

/** A network namespace on the LAN with an address of its own: a machine outside the cluster. */
export interface OutsideHost {
  /** Its namespace (`ip netns exec <namespace> …` runs a program there). */
  namespace: string;
  /** Its address on the LAN. */
  address: string;
  /** Removes it. */
  remove(): void;
}

/**
 * Makes a machine outside the cluster on the LAN at `<prefix>.<last>` (2..199): a network namespace joined to the LAN's
 * bridge by a veth pair, with its loopback up and no route but the LAN's.
 */
export function outsideHost(last: number): OutsideHost {
  if (!Number.isInteger(last) || last < 2 || last > 199)
    throw new Error(`an outside host's address ends in 2..199, not ${last}`);
  const namespace = `${PEER_NAMESPACE_PREFIX}${last}`;
  const address = lanAddress(last);
  const hostSide = `lclan${last}`;
  deleteNamespace(namespace);
  ip(['netns', 'add', namespace]);
  try {
    ip(['link', 'add', hostSide, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace]);
    ip(['link', 'set', hostSide, 'master', WORKER_LAN_BRIDGE, 'up']);
    ip(['-n', namespace, 'addr', 'add', `${address}/${WORKER_LAN.bits}`, 'dev', 'eth0']);
    ip(['-n', namespace, 'link', 'set', 'eth0', 'up']);
    ip(['-n', namespace, 'link', 'set', 'lo', 'up']);
  } catch (error) {
    deleteNamespace(namespace);
    throw error;
  }
  // The veth pair goes with the namespace.
  return { namespace, address, remove: () => deleteNamespace(namespace) };
}

/**
 * The `kubernetes` Service routed on the real worker (testing/cluster/kubelet.ts) as kube-proxy would route it (the
 * tests run no kube-proxy): its cluster IP and port (serviceNetwork.ts) sent to the API server, which listens on the
 * loopback. Only for the pods on the worker's bridge: their CNI network routes the Service range through the bridge's
 * address (kubelet.ts), an nftables table of the test's own DNATs the Service's address and port to
 * 127.0.0.1:<API server port> for packets coming in on the bridge, and the bridge alone takes the loopback as a
 * destination (its own route_localnet, which goes with it). The machine's own firewall and forwarding stay as they
 * are; the table is removed when the worker stops (and at its start, when a killed run left it).
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import { API_SERVICE_PORT, apiServiceIP } from './serviceNetwork';

/** nftables' nft. */
export const NFT = '/usr/sbin/nft';

/** The test's own nftables table (family ip). */
const TABLE = 'lacchain-test-kubelet';

/** The bridge's own setting that lets a packet coming in on it be routed to the loopback. */
const routeLocalnet = (bridge: string) => `/proc/sys/net/ipv4/conf/${bridge}/route_localnet`;

/**
 * The table: a DNAT of the Service's address and port to the API server's loopback port, for the bridge's packets; and
 * the guard kube-proxy's hosts get from the kubelet's KUBE-FIREWALL chain (which this worker does not make: it leaves
 * the machine's iptables alone), so that route_localnet opens nothing else: a packet from the bridge to the loopback
 * that this DNAT did not send there is dropped.
 */
function ruleset(bridge: string, apiServerPort: number): string {
  return `table ip ${TABLE} {
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname "${bridge}" ip daddr ${apiServiceIP()} tcp dport ${API_SERVICE_PORT} dnat to 127.0.0.1:${apiServerPort}
  }
  chain input {
    type filter hook input priority filter; policy accept;
    iifname "${bridge}" ip daddr 127.0.0.0/8 ct status & dnat == 0 drop
  }
}
`;
}

/** Routes the `kubernetes` Service's address and port, for the pods on `bridge`, to the API server's loopback port. */
export function routeApiService(bridge: string, apiServerPort: number): void {
  removeApiServiceRoute();
  fs.writeFileSync(routeLocalnet(bridge), '1');
  execFileSync(NFT, ['-f', '-'], { input: ruleset(bridge, apiServerPort), stdio: 'pipe' });
}

/** Removes the route's table, when there (the bridge's route_localnet goes with the bridge). */
export function removeApiServiceRoute(): void {
  try {
    execFileSync(NFT, ['delete', 'table', 'ip', TABLE], { stdio: 'pipe' });
  } catch {
    // Not there.
  }
}

/**
 * The node's network path on a real kubelet, as a peer on the network meets it (issue 64, item 4; issue 65, item 2):
 * a validator's pod from the program's manifests (testing/cluster/kubeletNode.ts) with `deploy.loadBalancer.cloud:
 * metallb` and its static IP on the worker's LAN (testing/cluster/workerLan.ts). MetalLB in layer 2
 * (testing/cluster/metallb.ts) gives the LoadBalancer Service that address through the annotation the program writes
 * and answers ARP for it on the LAN; kube-proxy (testing/cluster/serviceProxy.ts, nftables) takes 60606 TCP and UDP
 * on it to the pod. Peers outside the cluster are network namespaces on the LAN with addresses of their own: plain
 * peers (testing/networkPeer.ts: go-ethereum's p2p package) and go-ethereum's devp2p tool (tools/devp2p/build.sh).
 *
 * What it shows: the Service is on the enode's IP, given by MetalLB (no test writes its status); a permissioned peer
 * dialing the static IP on 60606 TCP is kept, and the pod's Besu sees it at its own address (the Service's
 * `externalTrafficPolicy: Local`: with `Cluster`, kube-proxy would hand the pod the node's address instead, and
 * on-chain permissioning, which checks the whole enode, would refuse the peer); a peer whose key is permissioned at
 * another address is refused; discovery v4 (UDP) answers on the static IP; `devp2p rlpx ping` succeeds for the enode
 * the program wrote and fails for an enode naming another key. Besu is the stand-in of tests/fixtures/besu-standin,
 * whose p2p layer is go-ethereum's (it applies the permissioning contract as Besu's node permissioning does).
 */
import { spawnSync } from 'child_process';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { builtTool } from '../../testing/cluster/builtTools';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import { fieldOf } from '../../testing/cluster/objects';
import { lanAddress, OutsideHost, outsideHost, WORKER_LAN_NETWORK } from '../../testing/cluster/workerLan';
import { PlainPeer, startPlainPeer } from '../../testing/networkPeer';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(300_000);

const validator = kubeletNode('validator', 'kubelet-static-ip', { work: workFolder('lacchain-kubelet-static-ip-') });
const { cluster, itWithKubelet, enode, staticIp, namespace } = validator;
/** The plain peers' port, in their own namespaces. */
const PEER_PORT = 30303;
/** How long a peer's connection is watched for a drop after it came up. */
const KEPT_MS = 5_000;

const devp2p = builtTool('tools/devp2p/build.sh');
/** `devp2p <args>` run on a machine outside the cluster: its exit code and what it said. */
function devp2pFrom(host: OutsideHost, ...args: string[]): { code: number | null; said: string } {
  if ('unavailable' in devp2p) throw new Error(devp2p.unavailable);
  const result = spawnSync('/usr/sbin/ip', ['netns', 'exec', host.namespace, devp2p.dir, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: result.status, said: `${result.stdout}${result.stderr}`.trim() };
}

/** The machines outside the cluster, by the last number of their LAN address. */
const KEPT_HOST = 11;
const REFUSED_HOST = 12;
/** The plain peers' keys (valid secp256k1 keys, for tests only). */
const KEPT_KEY = `0x${'31'.repeat(32)}`;
const REFUSED_KEY = `0x${'32'.repeat(32)}`;
/** An enode with `key` at the LAN address ending in `last` (the plain peers' port). */
const enodeAt = (key: string, last: number) => deriveIdentity(key, lanAddress(last), PEER_PORT).enode;

const service = { kind: 'service', name: '', namespace };
const hosts: OutsideHost[] = [];
const peers: PlainPeer[] = [];
afterAll(() => {
  for (const peer of peers) peer.stop();
  for (const host of hosts) host.remove();
});

/** The pod's Besu log. */
const besuLog = () => cluster().kubectlOk(['logs', '-n', namespace, validator.pod.name, '-c', validator.besuContainer]);

/**
 * Waits until the pod's Besu log has a line matching `line` (60 s at most); returns that line, or else what Besu said
 * of its peers meanwhile (the connections and refusals: whom it saw, at which address).
 */
async function logLine(line: RegExp): Promise<string> {
  let lines: string[] = [];
  for (let i = 0; i < 240; i++) {
    lines = (await besuLog()).split('\n');
    const found = lines.find((each) => line.test(each));
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return lines.filter((each) => /Peer connected|permissioning refused/.test(each)).join('\n');
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe("a validator's pod behind its static IP (MetalLB, kube-proxy) on a real kubelet, peers outside the cluster", () => {
  itWithKubelet(
    "the Service is on the enode's IP, given by MetalLB from its pool through the program's annotation",
    async () => {
      const manifests = await validator.manifests();
      const declared = manifests.find((m) => m.kind === 'Service' && m.spec.type === 'LoadBalancer')!;
      service.name = declared.metadata.name;
      await validator.deploy(manifests);
      // Written by MetalLB's controller (deploy waits for it): the enode's IP, as `pulumi up` checks it.
      expect(await fieldOf(cluster(), service, '{.status.loadBalancer.ingress[*].ip}')).toBe(staticIp);
      expect(await fieldOf(cluster(), service, "{.metadata.annotations['lacchain\\.net/enode']}")).toBe(enode);
      expect(enode).toContain(`@${staticIp}:60606`);
      // What the program wrote for it: MetalLB's annotation, and the peers' addresses kept.
      const { annotations = {} } = declared.metadata as { annotations?: Record<string, string> };
      expect(annotations['metallb.universe.tf/loadBalancerIPs']).toBe(staticIp);
      expect(declared.spec.externalTrafficPolicy).toBe('Local');
    },
  );

  itWithKubelet(
    'a permissioned peer outside the cluster dials the static IP on 60606 TCP: kept, and the pod sees its own address',
    async () => {
      const host = outsideHost(KEPT_HOST);
      hosts.push(host);
      // This peer permissioned at its own address; the other one's key only at an address it does not have.
      const permissioned = [enodeAt(KEPT_KEY, KEPT_HOST), enodeAt(REFUSED_KEY, REFUSED_HOST + 1)];
      validator.register([...validator.permissioned, ...permissioned.map((each) => ({ enode: each, fromBlock: 0 }))]);
      const peer = await startPlainPeer(host.address, PEER_PORT, {
        key: KEPT_KEY,
        dials: [enode],
        netrestrict: WORKER_LAN_NETWORK,
        namespace: host.namespace,
      });
      peers.push(peer);
      expect(peer.enode).toBe(permissioned[0]);
      // The pod's Besu: the peer connected from its own address (not the node's or the bridge's).
      const seen = new RegExp(`Peer connected: ${escaped(peer.enode)} from ${escaped(host.address)}:\\d+`);
      expect(await logLine(seen)).toMatch(seen);
      // The peer: connected to the static IP's 60606, and still connected a while later.
      const up = peer.events().find((event) => event.event === 'up');
      expect(up?.remoteAddress).toBe(`${staticIp}:60606`);
      await new Promise((resolve) => setTimeout(resolve, KEPT_MS));
      expect(peer.events().filter((event) => event.event === 'down')).toEqual([]);
    },
  );

  itWithKubelet('a peer whose key is permissioned at another address is refused by the pod', async () => {
    const host = outsideHost(REFUSED_HOST);
    hosts.push(host);
    const peer = await startPlainPeer(host.address, PEER_PORT, {
      key: REFUSED_KEY,
      dials: [enode],
      netrestrict: WORKER_LAN_NETWORK,
      namespace: host.namespace,
    });
    peers.push(peer);
    const refusal = new RegExp(`Node permissioning refused the connection with ${escaped(peer.enode)}`);
    expect(await logLine(refusal)).toMatch(refusal);
    expect(peer.events().some((event) => event.event === 'down')).toBe(true);
    // The permissioned peer stays.
    const kept = enodeAt(KEPT_KEY, KEPT_HOST);
    expect(
      (await besuLog()).split('\n').filter((each) => each.includes(`refused the connection with ${kept}`)),
    ).toEqual([]);
  });

  itWithKubelet('discovery v4 (UDP) answers on the static IP: devp2p discv4 ping from outside the cluster', () => {
    const result = devp2pFrom(hosts[0], 'discv4', 'ping', enode);
    expect(result).toEqual({ code: 0, said: expect.any(String) });
  });

  itWithKubelet(
    "devp2p rlpx ping through the static IP: succeeds for the program's enode, fails for an enode naming another key",
    () => {
      const right = devp2pFrom(hosts[0], 'rlpx', 'ping', enode);
      expect(right.said).toMatch(/besu/); // the node's Hello: its client name
      expect(right.code).toBe(0);
      const other = `${deriveIdentity(`0x${'33'.repeat(32)}`, staticIp, 60606).enode.split('@')[0]}@${staticIp}:60606`;
      const wrong = devp2pFrom(hosts[0], 'rlpx', 'ping', other);
      expect(wrong.said).toMatch(/EOF/);
      expect(wrong.code).not.toBe(0);
    },
  );
});

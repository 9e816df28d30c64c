/**
 * A mixed stack has real peers both ways (issue 64, item 4): one stack of open-protestnet, its validator on a pod of a
 * real kubelet (testing/cluster/kubeletNode.ts: its static IP on the worker's LAN, given by MetalLB, taken to the pod by
 * kube-proxy, `externalTrafficPolicy: Local`) and its writer and bootnode on machines (testing/rolloutLab.ts: Debian 12
 * test hosts, real systemd and sshd, their `pulumi up` replayed as the engine runs it). Each node permissioned in the
 * Besu stand-in's permissioning contract with the other two; the Besu stand-in's p2p layer is go-ethereum's.
 *
 * What it shows: the pod's config.toml carries the machine bootnode's enode in its `bootnodes` (the stack's own
 * bootnode, docs/settings.md); the machines have the pod as a peer at its enode, the static IP, and each other at their
 * own addresses; the pod's Besu sees the machines at their own addresses (their connections came through the Service
 * with the peers' source kept, as on-chain permissioning needs: it checks the whole enode); and `devp2p rlpx ping`
 * (go-ethereum's tool, another implementation) answers for each of the three enodes from outside the node it names.
 *
 * Which connections count: the machines' connections to the static IP. A pod dialing out leaves from another address
 * than its enode's (its worker's, SNAT, on a real cluster; its pod address here, where the pods are not masqueraded),
 * so the machines' permissioning refuses the pod's own dials (the enode it would be known by is not the permissioned
 * one), and the test hosts do not even route the pods' network back. The machines know the pod's enode as the
 * network's nodes do (here: their static-nodes.json, as the pods' network peer is the pod's).
 *
 * The networks: the test hosts' (10.231.0.0/16, testing/host) and the worker's LAN (workerLan.ts) are both this
 * machine's, routed through it: each machine routes the LAN through its gateway (its veth on this machine, with its own
 * forwarding on, as the rollout lab's machines reach each other), and the pods route the test hosts' network through the
 * pods' bridge (testing/cluster/kubelet.ts's CNI routes). Every stand-in dials and accepts only those two networks
 * (its standin-netrestrict), never anything else (testing/netGuard.js, testing/testNetworks.ts).
 */
import { parse as parseToml } from 'smol-toml';
import { DEFAULT_NODE_HOME } from '../../core/catalog/defaults';
import { NODE_TYPE_FACTS } from '../../core/catalog/nodeTypes';
import { KEY_ONE } from '../../testing/fixtures';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import { withCpuRequestsThatFit } from '../../testing/cluster/kubeletFit';
import { kubernetesManifests } from '../../testing/cluster/manifests';
import { WORKER_LAN_NETWORK } from '../../testing/cluster/workerLan';
import { rlpxPing } from '../../testing/devp2p';
import { TEST_HOSTS_NETWORK } from '../../testing/host/testHost';
import { requireTestHosts } from '../../testing/releaseHost';
import { AdminPeer, LabNode, listedPeers, RolloutLab } from '../../testing/rolloutLab';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(600_000);

const validator = kubeletNode('validator', 'kubelet-mixed-stack', {
  work: workFolder('lacchain-kubelet-mixed-'),
  peerNetworks: [TEST_HOSTS_NETWORK],
});
const { itWithKubelet, enode } = validator;

/** The stack's machines, in the rollout's order, on test hosts of their own (indices no other suite uses). */
const MACHINES: LabNode[] = [
  { name: 'writer', typenode: 'writer', host: 'mix-w', index: 81 },
  { name: 'bootnode', typenode: 'bootnode', host: 'mix-b', index: 82 },
];
const BOOTNODE = 1;
/** The machines' release (Java 17, as the test hosts' packages disk has it). */
const RELEASE = '23.4.1';
const VERSIONS = { writer: RELEASE, bootnode: RELEASE };
/** How long the three nodes may take to have each other as peers (a refused dial is tried again after about 35 s). */
const PEERED_MS = 180_000;

let lab: RolloutLab | undefined;
afterAll(async () => {
  await lab?.close();
});

/** The machines' enodes. */
const machineEnodes = () => MACHINES.map((_, i) => lab!.enodeOf(i));

/** The machines the pod has as peers, from its `admin_peers`: each as `<enode> from <address>`. */
async function podPeers(): Promise<string[]> {
  return listedPeers((await validator.rpcInPod('admin_peers')) as AdminPeer[], machineEnodes());
}

/** Machine `node`'s enode once its restarted Besu answers its RPC again (30 s at most); '' if it never did. */
async function answersAgain(node: number): Promise<string> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    try {
      return String(await lab!.rpc(node, 'net_enode'));
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  return '';
}

describe('a mixed stack: a validator on a pod behind its static IP, a writer and a bootnode on machines', () => {
  itWithKubelet(
    "one stack: the pod's bootnodes carry the machine bootnode's enode; deployed, each node permissioned with the other two",
    async () => {
      await requireTestHosts();
      lab = await RolloutLab.open([RELEASE], MACHINES);
      // The pod's node in the lab's stack, with ADMIN on its RPC (admin_peers), its values file and its key.
      lab.otherNodes.entries.push({
        name: 'validator',
        typenode: 'validator',
        target: 'kubernetes',
        rpc: { apis: [...NODE_TYPE_FACTS.validator.rpcApis, 'ADMIN'] },
      });
      lab.otherNodes.files['values/validator.yml'] = validator.values();
      lab.otherNodes.keys.validator = KEY_ONE;
      lab.otherNodes.enodes.push(enode);
      // One `pulumi up` of the stack: the machines' steps run by the lab, the pod's manifests applied as declared.
      const { declared, replay } = await lab.up(VERSIONS);
      expect(replay.failed.map((r) => `${r.name}: ${r.stderr}`)).toEqual([]);
      expect((await lab.stackEnodes()).slice(0, MACHINES.length)).toEqual(machineEnodes());
      const manifests = withCpuRequestsThatFit(kubernetesManifests(declared));
      const config = parseToml(manifests.find((m) => m.kind === 'ConfigMap')!.data['config.toml']) as {
        bootnodes: string[];
      };
      expect(config.bootnodes).toContain(lab.enodeOf(BOOTNODE));
      await validator.deploy(manifests);
      validator.register([
        ...validator.permissioned,
        ...machineEnodes().map((each) => ({ enode: each, fromBlock: 0 })),
      ]);
      // The machines: permissioned with each other and the pod; the LAN routed through their gateway; their stand-ins
      // on the two test networks, the pod's enode a static node; restarted to read them.
      await lab.permissionEveryNode();
      const data = `${DEFAULT_NODE_HOME}/data`;
      for (const [i, host] of lab.hosts.entries()) {
        await lab.on(
          i,
          `ip route replace ${WORKER_LAN_NETWORK} via ${host.gateway} && ` +
            `echo ${TEST_HOSTS_NETWORK},${WORKER_LAN_NETWORK} >${data}/standin-netrestrict && ` +
            `echo '${JSON.stringify([enode])}' >${data}/static-nodes.json && systemctl restart besu`,
        );
        expect(await answersAgain(i)).toBe(lab.enodeOf(i));
      }
    },
  );

  itWithKubelet(
    "real peers both ways: the machines have the pod at its enode (the static IP) and each other; the pod's admin_peers lists the machines by enode from their own addresses",
    async () => {
      const seen = await lab!.labPeered(PEERED_MS / 1000);
      for (const [node, { peers }] of seen.entries())
        expect([MACHINES[node].name, peers]).toEqual([MACHINES[node].name, lab!.expectedLabPeers(node)]);
      const expected = MACHINES.map((_, i) => `${lab!.enodeOf(i)} from ${lab!.hosts[i].ip}`);
      let onPod = await podPeers();
      for (const deadline = Date.now() + PEERED_MS; onPod.join() !== expected.join() && Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 2000));
        onPod = await podPeers();
      }
      expect(onPod).toEqual(expected);
    },
  );

  itWithKubelet(
    "devp2p rlpx ping answers for each of the three enodes from outside: the machines' from this machine, the pod's through its static IP from the writer's machine",
    () => {
      for (const each of machineEnodes())
        expect([each, rlpxPing(each)]).toEqual([each, { code: 0, said: expect.stringMatching(/besu/) }]);
      const fromWriter = rlpxPing(enode, `lct-${MACHINES[0].host}`);
      expect([enode, fromWriter]).toEqual([enode, { code: 0, said: expect.stringMatching(/besu/) }]);
    },
  );
});

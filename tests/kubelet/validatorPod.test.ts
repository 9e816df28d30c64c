/**
 * The cluster path on a real kubelet (testing/cluster/kubelet.ts: containerd, runc, a CNI bridge): a validator's
 * manifests, as the program declares them, applied server-side to the tests' API server, and its pod run by a real
 * worker from images with the official images' layout (testing/cluster/images.ts: the Besu stand-in as
 * hyperledger/besu, pinned by digest as the values file's imageDigest pins it). One change to the program's objects:
 * the CPU requests, lowered so that the pod fits this 2-core machine (kubeletFit.ts). The set-up is the tier's
 * (testing/cluster/kubeletNode.ts). Then the operator's `npm run node` against that pod, its RPC through
 * `kubectl port-forward` as docs/operations.md says (testing/cluster/nodeCommand.ts).
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { NETWORKS } from '../../core/catalog/networks';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import { Manifest } from '../../testing/cluster/manifests';
import { expectRunningStatus, nodeCommand } from '../../testing/cluster/nodeCommand';
import { PROJECT_DIR } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(300_000);

const work = workFolder('lacchain-kubelet-validator-');
const validator = kubeletNode('validator', 'kubelet-validator', { work });
const { cluster, itWithKubelet, enode, inBesu, rpcInPod } = validator;
let manifests: Manifest[] = [];
let dataFolder = '';
const podUid = () =>
  cluster().kubectlOk(['get', 'pod', '-n', validator.namespace, validator.pod.name, '-o', 'jsonpath={.metadata.uid}']);

describe('a validator on a real kubelet', () => {
  itWithKubelet('its StatefulSet from the program runs: every container of the pod started and ready', async () => {
    manifests = await validator.manifests();
    const set = manifests.find((m) => m.kind === 'StatefulSet')!;
    const version = NETWORKS['open-protestnet'].defaultBesuVersion;
    expect(set.spec.template.spec.containers[0].image).toBe(`hyperledger/besu:${version}@${validator.besuDigest()}`);
    dataFolder = await validator.deploy(manifests);
  });

  itWithKubelet("the node answers net_enode with the stack's enode from inside its pod", async () => {
    expect(await rpcInPod('net_enode')).toBe(enode);
  });

  itWithKubelet('Besu runs as uid 1000, by its pod (not the image), on a read-only root file system', async () => {
    const { namespace, pod } = validator;
    // The pod sets the uid (runAsUser), the Besu container keeps it: not left to the image's own User.
    const uids = await cluster().kubectlOk([
      'get',
      'pod',
      '-n',
      namespace,
      pod.name,
      '-o',
      `jsonpath={.spec.securityContext.runAsUser}|{.spec.containers[?(@.name=="${validator.besuContainer}")].securityContext.runAsUser}`,
    ]);
    expect(uids).toBe('1000|');
    expect((await inBesu('id', '-u')).trim()).toBe('1000');
    const write = await cluster().kubectl([
      'exec',
      '-n',
      namespace,
      pod.name,
      '-c',
      validator.besuContainer,
      '--',
      'touch',
      '/opt/besu/written',
    ]);
    expect(write.code).not.toBe(0);
    expect(write.stderr).toContain('Read-only file system');
  });

  itWithKubelet('Besu writes its data to the volume, as uid 1000', async () => {
    const chain = path.join(dataFolder, 'standin-chain.json');
    expect(fs.existsSync(chain)).toBe(true);
    expect(fs.statSync(chain).uid).toBe(1000);
  });
});

describe("npm run node against the validator's real pod", () => {
  const command = nodeCommand(validator, work);
  const node = command.run;

  itWithKubelet(
    "status: the pod Running, its rotation client ready, the node's answers through the port-forward",
    async () => {
      expectRunningStatus(await node('status'), enode, ['rotation-validator']);
    },
  );

  itWithKubelet(
    "logs: the Besu container's own log, followed past the head it had when the command started",
    async () => {
      const head = Number(await rpcInPod('eth_blockNumber'));
      const child = spawn(
        'npm',
        ['run', '--silent', 'node', '--', 'logs', '--stack', 'testnet', '--config', command.config],
        {
          cwd: PROJECT_DIR,
          env: { ...process.env, ...command.env() },
          detached: true,
        },
      );
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const newest = () => Math.max(0, ...[...out.matchAll(/Imported #(\d+)/g)].map((match) => Number(match[1])));
      for (let i = 0; i < 120 && newest() <= head; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(child.exitCode).toBeNull(); // it follows the log until stopped, as kubectl logs -f does
      process.kill(-child.pid!, 'SIGTERM');
      expect(out).toContain(enode); // the stand-in's start banner, from this pod's Besu
      expect(newest()).toBeGreaterThan(head);
    },
  );

  itWithKubelet("check: healthy, the enode the pod answers equal to the Service's annotation", async () => {
    const result = await node('check', '--window', '3');
    expect(result.stdout).toMatch(new RegExp(`^ *enode +ok +${enode.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    expect(result.stdout).toMatch(/block imports +ok/);
    expect(result.stdout).toMatch(/verdict: healthy/);
    expect(result.code).toBe(0);
  });

  itWithKubelet(
    'check --fix: a node permissioned after its pod started has no peers; the fix deletes the pod, the new one has peers',
    async () => {
      const before = await podUid();
      // Out of the contract: the node drops its real peer at its next block, and imports nothing without one.
      validator.register(validator.permissioned.filter((each) => each.enode !== enode));
      for (let i = 0; i < 60 && Number(await rpcInPod('net_peerCount')) > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const head = Number(await rpcInPod('eth_blockNumber'));
      validator.register(
        validator.permissioned.map((each) => (each.enode === enode ? { ...each, fromBlock: head + 1 } : each)),
      );
      // The block that registers it comes (the stand-in's chain advances by itself)
      for (let i = 0; i < 60 && Number(await rpcInPod('eth_blockNumber')) <= head + 1; i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const result = await node('check', '--window', '3', '--fix');
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/restart +FAIL +due: the node was permissioned after its last start/);
      expect(result.stdout).toContain(`fix: restarting node ${validator.node}`);
      expect(result.stdout).toMatch(/verdict: unhealthy[\s\S]*verdict: healthy/);
      expect(result.code).toBe(0);
      const after = await validator.readyPodOtherThan(before);
      expect(after).not.toBe(before);
      expect(Number(await rpcInPod('net_peerCount'))).toBeGreaterThan(0);
    },
  );

  itWithKubelet(
    'restart (the documented restart, npm run node -- restart deletes the pod): same enode, its data kept, head not behind',
    async () => {
      const before = await podUid();
      const head = Number(await rpcInPod('eth_blockNumber'));
      expect(head).toBeGreaterThan(0);
      const result = await node('restart');
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      await validator.readyPodOtherThan(before);
      expect(await rpcInPod('net_enode')).toBe(enode);
      // The simulated chain's height is kept in the data volume (standin-chain.json): the node starts from it.
      expect(Number(await rpcInPod('eth_blockNumber'))).toBeGreaterThanOrEqual(head);
    },
  );
});

/**
 * The cluster path on a real kubelet (testing/cluster/kubelet.ts: containerd, runc, a CNI bridge): a validator's
 * manifests, as the program declares them, applied server-side to the tests' API server, and its pod run by a real
 * worker from images with the official images' layout (testing/cluster/images.ts: the Besu stand-in as
 * hyperledger/besu, pinned by digest as the values file's imageDigest pins it). One change to the program's objects:
 * the CPU requests, lowered so that the pod fits this 2-core machine (kubeletFit.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { NETWORKS } from '../../core/catalog/networks';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { KEY_ONE } from '../../testing/fixtures';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram } from '../../testing/program';
import { valuesFor } from '../../testing/values';
import { kubeletClusterForSuite } from '../../testing/cluster/kubeletSuite';
import { localVolumesFor } from '../../testing/cluster/localVolumes';
import { applyServerSide, kubernetesManifests, Manifest } from '../../testing/cluster/manifests';
import { fieldWhen } from '../../testing/cluster/objects';
import { withCpuRequestsThatFit } from '../../testing/cluster/kubeletFit';
import { importValidatorImages } from '../../testing/cluster/validatorImages';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(300_000);

const NAMESPACE = 'kubelet-validator';
const WORKER = 'worker-validator';
const POD = 'besu-node-validator-0';
const BESU = 'validator-besu';
const network = NETWORKS['open-protestnet'];
const recorded = recordProgram();
const work = workFolder('lacchain-kubelet-validator-');
let besuDigest = '';
let manifests: Manifest[] = [];
let dataFolder = '';

const { cluster, itWithKubelet } = kubeletClusterForSuite([WORKER], async (running) => {
  besuDigest = await importValidatorImages(running.kubelets[0], work, network.defaultBesuVersion);
});

const values = valuesFor('testnet', 'validator', { namespace: NAMESPACE });
const enode = deriveIdentity(KEY_ONE, values.deploy.p2p.host, values.deploy.p2p.port).enode;

/** The validator's manifests, Besu pinned by the stand-in image's digest, the monitoring client off. */
async function validatorManifests(): Promise<Manifest[]> {
  const config = {
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [{ name: 'validator', typenode: 'validator', target: 'kubernetes' }],
    'lacchain:nodeKeys': { validator: KEY_ONE },
    'lacchain:companions': { ethstats: { enabled: false } },
  };
  const files = {
    'values/validator.yml': valuesFor('testnet', 'validator', { namespace: NAMESPACE, imageDigest: besuDigest }),
  };
  return kubernetesManifests(await declareProgram(recorded, 'testnet', config, files));
}

/** Runs `command` in the Besu container of the pod; returns its standard output. */
const inBesu = (...command: string[]) =>
  cluster().kubectlOk(['exec', '-n', NAMESPACE, POD, '-c', BESU, '--', ...command]);

/** A JSON-RPC call to the node from inside its pod (Python in the image; Besu answers on the pod's loopback). */
async function rpcInPod(method: string): Promise<unknown> {
  const script = [
    'import json, sys, urllib.request',
    `body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "${method}", "params": []}).encode()`,
    'request = urllib.request.Request("http://127.0.0.1:4545", data=body, headers={"Content-Type": "application/json", "Host": "localhost"})',
    'print(urllib.request.urlopen(request, timeout=5).read().decode())',
  ].join('\n');
  return JSON.parse(await inBesu('python3', '-c', script)).result;
}

describe('a validator on a real kubelet', () => {
  itWithKubelet('its StatefulSet from the program runs: every container of the pod started and ready', async () => {
    manifests = withCpuRequestsThatFit(await validatorManifests());
    const set = manifests.find((m) => m.kind === 'StatefulSet')!;
    expect(set.spec.template.spec.containers[0].image).toBe(
      `hyperledger/besu:${network.defaultBesuVersion}@${besuDigest}`,
    );
    await cluster().kubectlOk(['apply', '-f', '-'], JSON.stringify(manifests.find((m) => m.kind === 'Namespace')));
    const folders = await localVolumesFor(cluster(), cluster().kubelets[0], manifests);
    dataFolder = folders['besu-node-validator-data'];
    // The node and its bootnodes in the stand-in's permissioning contract: it has peers (the readiness probe's
    // condition), as a permissioned node on the network.
    const nodes = [enode, ...network.bootnodes.validator].map((each) => ({ enode: each, fromBlock: 0 }));
    fs.writeFileSync(path.join(dataFolder, 'standin-permissioning.json'), JSON.stringify({ nodes }));
    await applyServerSide(cluster(), manifests);
    const containers = set.spec.template.spec.containers.length;
    const expected = `Running ${'true,'.repeat(containers)}`;
    const seen = await fieldWhen(
      cluster(),
      { kind: 'pod', name: POD, namespace: NAMESPACE },
      '{.status.phase} {range .status.containerStatuses[*]}{.ready},{end}',
      (value) => value === expected,
      120_000,
    );
    expect(seen).toBe(expected);
  });

  itWithKubelet("the node answers net_enode with the stack's enode from inside its pod", async () => {
    expect(await rpcInPod('net_enode')).toBe(enode);
  });

  itWithKubelet('Besu runs as uid 1000 on a read-only root file system', async () => {
    expect((await inBesu('id', '-u')).trim()).toBe('1000');
    const write = await cluster().kubectl([
      'exec',
      '-n',
      NAMESPACE,
      POD,
      '-c',
      BESU,
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

  itWithKubelet(
    'the pod deleted (the documented restart) comes back as the same node: same enode, its data kept, head not behind',
    async () => {
      const pod = { kind: 'pod', name: POD, namespace: NAMESPACE };
      const uid = await cluster().kubectlOk(['get', 'pod', '-n', NAMESPACE, POD, '-o', 'jsonpath={.metadata.uid}']);
      const head = Number(await rpcInPod('eth_blockNumber'));
      expect(head).toBeGreaterThan(0);
      await cluster().kubectlOk(['delete', 'pod', '-n', NAMESPACE, POD, '--wait=false']);
      const containers = manifests.find((m) => m.kind === 'StatefulSet')!.spec.template.spec.containers.length;
      const expected = `Running ${'true,'.repeat(containers)}`;
      const seen = await fieldWhen(
        cluster(),
        pod,
        '{.metadata.uid} {.status.phase} {range .status.containerStatuses[*]}{.ready},{end}',
        (value) => !value.startsWith(uid) && value.endsWith(expected),
        120_000,
      );
      expect(seen.split(' ').slice(1).join(' ')).toBe(expected);
      expect(await rpcInPod('net_enode')).toBe(enode);
      // The simulated chain's height is kept in the data volume (standin-chain.json): the node starts from it.
      expect(Number(await rpcInPod('eth_blockNumber'))).toBeGreaterThanOrEqual(head);
    },
  );
});

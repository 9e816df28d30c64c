/**
 * A config change on a real kubelet (issue 52, item 4): a validator's manifests as the program declares them (as in
 * validatorPod.test.ts; only the CPU requests lowered, kubeletFit.ts) applied server-side as the provider applies them,
 * then declared again with another RPC host allowlist (`lacchain:rpc.hostAllowlist`) and applied over them. The
 * ConfigMap is patched in place, the StatefulSet's `lacchain.net/config-checksum` annotation changes, the pod rolls,
 * and the new pod runs the new config: its config.toml and the Besu stand-in's answer (the Host header it accepts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { POD_FILES, POD_PATHS } from '../../core/catalog/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { KEY_ONE } from '../../testing/fixtures';
import { onTestNetwork } from '../../testing/permissioning';
import { KUBELET_NETWORK } from '../../testing/cluster/kubelet';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram } from '../../testing/program';
import { valuesFor } from '../../testing/values';
import { kubeletClusterForSuite } from '../../testing/cluster/kubeletSuite';
import { localVolumesFor } from '../../testing/cluster/localVolumes';
import { applyServerSide, kubernetesManifests, Manifest } from '../../testing/cluster/manifests';
import { fieldOf, fieldWhen } from '../../testing/cluster/objects';
import { withCpuRequestsThatFit } from '../../testing/cluster/kubeletFit';
import { importNodeImages } from '../../testing/cluster/nodeImages';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(300_000);

const NAMESPACE = 'kubelet-config-roll';
const WORKER = 'worker-validator';
const POD = 'besu-node-validator-0';
const BESU = 'validator-besu';
const CONFIG_MAP = 'besu-node-validator-config';
const SET = 'besu-node-validator';
const CHECKSUM = 'lacchain.net/config-checksum';
const FIRST_HOST = 'rpc-first.example.org';
const SECOND_HOST = 'rpc-second.example.org';
const network = NETWORKS['open-protestnet'];
const recorded = recordProgram();
const work = workFolder('lacchain-kubelet-config-roll-');
let besuDigest = '';

const { cluster, itWithKubelet } = kubeletClusterForSuite([WORKER], async (running) => {
  besuDigest = await importNodeImages(running.kubelets[0], work, network.defaultBesuVersion, 'validator');
});

const values = valuesFor('testnet', 'validator', { namespace: NAMESPACE });
const enode = deriveIdentity(KEY_ONE, values.deploy.p2p.host, values.deploy.p2p.port).enode;
const pod = { kind: 'pod', name: POD, namespace: NAMESPACE };

/** The validator's manifests with `host` in the RPC host allowlist. */
async function validatorManifests(host: string): Promise<Manifest[]> {
  const config = {
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [{ name: 'validator', typenode: 'validator', target: 'kubernetes' }],
    'lacchain:nodeKeys': { validator: KEY_ONE },
    'lacchain:companions': { ethstats: { enabled: false } },
    'lacchain:rpc': { hostAllowlist: [host] },
  };
  const files = {
    'values/validator.yml': valuesFor('testnet', 'validator', { namespace: NAMESPACE, imageDigest: besuDigest }),
  };
  return withCpuRequestsThatFit(kubernetesManifests(await declareProgram(recorded, 'testnet', config, files)));
}

/** Runs `command` in the Besu container of the pod; returns its standard output. */
const inBesu = (...command: string[]) =>
  cluster().kubectlOk(['exec', '-n', NAMESPACE, POD, '-c', BESU, '--', ...command]);

/** net_enode from inside the pod with `host` as the Host header: `200 <enode>`, or the status Besu refused it with. */
async function netEnodeAs(host: string): Promise<string> {
  const script = [
    'import json, urllib.error, urllib.request',
    'body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "net_enode", "params": []}).encode()',
    `request = urllib.request.Request("http://127.0.0.1:4545", data=body, headers={"Content-Type": "application/json", "Host": "${host}"})`,
    'try:',
    '    print(200, json.loads(urllib.request.urlopen(request, timeout=5).read())["result"])',
    'except urllib.error.HTTPError as error:',
    '    print(error.code)',
  ].join('\n');
  return (await inBesu('python3', '-c', script)).trim();
}

/** The pod's uid, phase and each container's readiness, once the pod `uid` is not `old` and all are ready. */
async function readyPodOtherThan(old: string, containers: number, timeoutMs: number): Promise<string> {
  const ready = `Running ${'true,'.repeat(containers)}`;
  const seen = await fieldWhen(
    cluster(),
    pod,
    '{.metadata.uid} {.status.phase} {range .status.containerStatuses[*]}{.ready},{end}',
    (value) => /^[0-9a-f-]{36} /.test(value) && !value.startsWith(`${old} `) && value.endsWith(` ${ready}`),
    timeoutMs,
  );
  expect(seen.split(' ').slice(1).join(' ')).toBe(ready);
  return seen.split(' ')[0];
}

const containersOf = (manifests: Manifest[]) =>
  manifests.find((m) => m.kind === 'StatefulSet')!.spec.template.spec.containers.length as number;
const checksumOf = () =>
  fieldOf(
    cluster(),
    { kind: 'statefulset', name: SET, namespace: NAMESPACE },
    `{.spec.template.metadata.annotations.lacchain\\.net/config-checksum}`,
  );
const configMapUid = () =>
  fieldOf(cluster(), { kind: 'configmap', name: CONFIG_MAP, namespace: NAMESPACE }, '{.metadata.uid}');
const configInPod = () => inBesu('cat', `${POD_PATHS.configDir}/${POD_FILES.config}`);

let firstPod = '';

describe('a config change on a real kubelet: the ConfigMap patched in place rolls the pod to the new config', () => {
  itWithKubelet(
    `the first config runs: Besu answers net_enode for the allowlisted ${FIRST_HOST} and refuses ${SECOND_HOST} with 403`,
    async () => {
      const manifests = await validatorManifests(FIRST_HOST);
      await cluster().kubectlOk(['apply', '-f', '-'], JSON.stringify(manifests.find((m) => m.kind === 'Namespace')));
      const folders = await localVolumesFor(cluster(), cluster().kubelets[0], manifests);
      const peer = cluster().kubelets[0].networkPeer;
      const nodes = [enode, ...network.bootnodes.validator, peer].map((each) => ({ enode: each, fromBlock: 0 }));
      fs.writeFileSync(
        path.join(folders['besu-node-validator-data'], 'standin-permissioning.json'),
        JSON.stringify({ nodes }),
      );
      onTestNetwork(folders['besu-node-validator-data'], KUBELET_NETWORK, peer);
      await applyServerSide(cluster(), manifests);
      firstPod = await readyPodOtherThan('', containersOf(manifests), 120_000);
      expect(await configInPod()).toContain(FIRST_HOST);
      expect(await netEnodeAs(FIRST_HOST)).toBe(`200 ${enode}`);
      expect(await netEnodeAs(SECOND_HOST)).toBe('403');
    },
  );

  itWithKubelet(
    `another allowlist applied over it: the ConfigMap patched (same uid), the checksum annotation changed, a new pod whose config.toml and Besu take ${SECOND_HOST} and refuse ${FIRST_HOST}`,
    async () => {
      const configMap = await configMapUid();
      const checksum = await checksumOf();
      expect(checksum).toMatch(/\S/);
      const manifests = await validatorManifests(SECOND_HOST);
      const set = manifests.find((m) => m.kind === 'StatefulSet')!;
      expect(set.spec.template.metadata.annotations[CHECKSUM]).not.toBe(checksum);
      await applyServerSide(cluster(), manifests);
      expect(await configMapUid()).toBe(configMap);
      const config = await fieldOf(
        cluster(),
        { kind: 'configmap', name: CONFIG_MAP, namespace: NAMESPACE },
        `{.data.config\\.toml}`,
      );
      expect([config.includes(SECOND_HOST), config.includes(FIRST_HOST)]).toEqual([true, false]);
      expect(await checksumOf()).toBe(set.spec.template.metadata.annotations[CHECKSUM]);
      // The StatefulSet's controller replaces the pod (the old one's containers are given their grace period).
      await readyPodOtherThan(firstPod, containersOf(manifests), 240_000);
      const inPod = await configInPod();
      expect([inPod.includes(SECOND_HOST), inPod.includes(FIRST_HOST)]).toEqual([true, false]);
      expect(await netEnodeAs(SECOND_HOST)).toBe(`200 ${enode}`);
      expect(await netEnodeAs(FIRST_HOST)).toBe('403');
    },
  );
});

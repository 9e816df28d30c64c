/**
 * A config change on a real kubelet (issue 52, item 4): a validator's manifests as the program declares them (as in
 * validatorPod.test.ts; only the CPU requests lowered, kubeletFit.ts) applied server-side as the provider applies them,
 * then declared again with another RPC host allowlist (`lacchain:rpc.hostAllowlist`) and applied over them as
 * `pulumi up` does (docs/security.md#what-a-pod-reads): first the new ConfigMap, immutable and named by its content,
 * beside the old one, while the StatefulSet waits for its turn of the rollout (a restart of Besu's container then
 * still runs the old config: issue 63, finding 2), then the StatefulSet, which switches to it: the pod rolls and the
 * new pod runs the new config (its config.toml and the Besu stand-in's answer, the Host header it accepts); the old
 * ConfigMap, deleted last, takes nothing from it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { POD_FILES, POD_PATHS } from '../../core/catalog/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { KEY_ONE } from '../../testing/fixtures';
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
const configMapOf = (manifests: Manifest[]) => manifests.find((m) => m.kind === 'ConfigMap')!;
const configMapUid = (name: string) =>
  fieldOf(cluster(), { kind: 'configmap', name, namespace: NAMESPACE }, '{.metadata.uid}');
const configInPod = () => inBesu('cat', `${POD_PATHS.configDir}/${POD_FILES.config}`);
const besuStatus = `.status.containerStatuses[?(@.name=="${BESU}")]`;

let firstPod = '';
let first: Manifest[] = [];
let second: Manifest[] = [];

describe('a config change on a real kubelet: a new ConfigMap, which the StatefulSet switches to in its turn', () => {
  itWithKubelet(
    `the first config runs: Besu answers net_enode for the allowlisted ${FIRST_HOST} and refuses ${SECOND_HOST} with 403`,
    async () => {
      const manifests = await validatorManifests(FIRST_HOST);
      first = manifests;
      await cluster().kubectlOk(['apply', '-f', '-'], JSON.stringify(manifests.find((m) => m.kind === 'Namespace')));
      const folders = await localVolumesFor(cluster(), cluster().kubelets[0], manifests);
      const nodes = [enode, ...network.bootnodes.validator].map((each) => ({ enode: each, fromBlock: 0 }));
      fs.writeFileSync(
        path.join(folders['besu-node-validator-data'], 'standin-permissioning.json'),
        JSON.stringify({ nodes }),
      );
      await applyServerSide(cluster(), manifests);
      firstPod = await readyPodOtherThan('', containersOf(manifests), 120_000);
      expect(await configInPod()).toContain(FIRST_HOST);
      expect(await netEnodeAs(FIRST_HOST)).toBe(`200 ${enode}`);
      expect(await netEnodeAs(SECOND_HOST)).toBe('403');
    },
  );

  itWithKubelet(
    `another allowlist's ConfigMap made before the node's turn: a new one beside the old, and Besu's container restarting (a kill) still runs ${FIRST_HOST}`,
    async () => {
      second = await validatorManifests(SECOND_HOST);
      const [old, next] = [configMapOf(first), configMapOf(second)];
      expect(next.metadata.name).not.toBe(old.metadata.name);
      expect([old.immutable, next.immutable]).toEqual([true, true]);
      const oldUid = await configMapUid(old.metadata.name);
      // What pulumi up makes first (the StatefulSet waits for the node before it): the new ConfigMap alone.
      await applyServerSide(cluster(), [next]);
      expect(await configMapUid(old.metadata.name)).toBe(oldUid);
      expect(await configMapUid(next.metadata.name)).toMatch(/^[0-9a-f-]{36}$/);
      const restarts = Number(await fieldOf(cluster(), pod, `{${besuStatus}.restartCount}`));
      // Long enough for the kubelet to have synced a changed ConfigMap into the pod's volume, were it the same one.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      await inBesu('sh', '-c', 'kill 1');
      await fieldWhen(
        cluster(),
        pod,
        `{.metadata.uid}|{${besuStatus}.restartCount}|{${besuStatus}.ready}`,
        (value) => value === `${firstPod}|${restarts + 1}|true`,
        120_000,
      );
      const inPod = await configInPod();
      expect([inPod.includes(FIRST_HOST), inPod.includes(SECOND_HOST)]).toEqual([true, false]);
      expect(await netEnodeAs(FIRST_HOST)).toBe(`200 ${enode}`);
      expect(await netEnodeAs(SECOND_HOST)).toBe('403');
    },
  );

  itWithKubelet(
    `the StatefulSet applied in its turn: the checksum annotation changed, a new pod on the new ConfigMap whose config.toml and Besu take ${SECOND_HOST} and refuse ${FIRST_HOST}; the old ConfigMap deleted after changes nothing`,
    async () => {
      const checksum = await checksumOf();
      expect(checksum).toMatch(/\S/);
      const set = second.find((m) => m.kind === 'StatefulSet')!;
      expect(set.spec.template.metadata.annotations[CHECKSUM]).not.toBe(checksum);
      await applyServerSide(cluster(), second);
      expect(await checksumOf()).toBe(set.spec.template.metadata.annotations[CHECKSUM]);
      // The StatefulSet's controller replaces the pod (the old one's containers are given their grace period).
      const secondPod = await readyPodOtherThan(firstPod, containersOf(second), 240_000);
      expect(await fieldOf(cluster(), pod, '{.spec.volumes[?(@.name=="config-source")].configMap.name}')).toBe(
        configMapOf(second).metadata.name,
      );
      const inPod = await configInPod();
      expect([inPod.includes(SECOND_HOST), inPod.includes(FIRST_HOST)]).toEqual([true, false]);
      expect(await netEnodeAs(SECOND_HOST)).toBe(`200 ${enode}`);
      expect(await netEnodeAs(FIRST_HOST)).toBe('403');
      // pulumi up deletes the old ConfigMap last: the pod, on the new one, runs on.
      await cluster().kubectlOk(['delete', 'configmap', '-n', NAMESPACE, configMapOf(first).metadata.name]);
      expect(await fieldOf(cluster(), pod, '{.metadata.uid} {.status.phase}')).toBe(`${secondPod} Running`);
      expect(await netEnodeAs(SECOND_HOST)).toBe(`200 ${enode}`);
    },
  );
});

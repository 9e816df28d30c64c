/**
 * A config change on a real kubelet (issue 52, item 4): a validator's manifests as the program declares them, set up
 * as the tier's fixture sets up a node (testing/cluster/kubeletNode.ts; only the CPU requests lowered), applied
 * server-side as the provider applies them, then declared again with another RPC host allowlist
 * (`lacchain:rpc.hostAllowlist`) and applied over them as `pulumi up` does (docs/security.md#what-a-pod-reads): first
 * the new ConfigMap, immutable and named by its content, beside the old one, while the StatefulSet waits for its turn
 * of the rollout (a restart of Besu's container then still runs the old config: issue 63, finding 2), then the
 * StatefulSet, which switches to it: the pod rolls and the new pod runs the new config (its config.toml and the Besu
 * stand-in's answer, the Host header it accepts); the old ConfigMap, deleted last, takes nothing from it.
 */
import { kubernetesNames, POD_FILES, POD_PATHS } from '../../core/catalog/kubernetes';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import { applyServerSide, Manifest } from '../../testing/cluster/manifests';
import { fieldOf, fieldWhen } from '../../testing/cluster/objects';

jest.setTimeout(300_000);

const NAMESPACE = 'kubelet-config-roll';
const CHECKSUM = 'lacchain.net/config-checksum';
const FIRST_HOST = 'rpc-first.example.org';
const SECOND_HOST = 'rpc-second.example.org';
/** How long the roll may take: the old pod's grace period, then the new pod ready. */
const ROLL_MS = 240_000;
const validator = kubeletNode('validator', NAMESPACE);
const { cluster, itWithKubelet, enode, inBesu } = validator;
const names = kubernetesNames(validator.node);

/** The validator's manifests with `host` in the RPC host allowlist. */
const validatorManifests = (host: string): Promise<Manifest[]> =>
  validator.manifests({ 'lacchain:rpc': { hostAllowlist: [host] } });

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

const checksumOf = () =>
  fieldOf(
    cluster(),
    { kind: 'statefulset', name: names.statefulSet, namespace: NAMESPACE },
    `{.spec.template.metadata.annotations.lacchain\\.net/config-checksum}`,
  );
const configMapOf = (manifests: Manifest[]) => manifests.find((m) => m.kind === 'ConfigMap')!;
const configMapUid = (name: string) =>
  fieldOf(cluster(), { kind: 'configmap', name, namespace: NAMESPACE }, '{.metadata.uid}');
const configInPod = () => inBesu('cat', `${POD_PATHS.configDir}/${POD_FILES.config}`);
const besuStatus = `.status.containerStatuses[?(@.name=="${names.besuContainer}")]`;

let firstPod = '';
let first: Manifest[] = [];
let second: Manifest[] = [];

describe('a config change on a real kubelet: a new ConfigMap, which the StatefulSet switches to in its turn', () => {
  itWithKubelet(
    `the first config runs: Besu answers net_enode for the allowlisted ${FIRST_HOST} and refuses ${SECOND_HOST} with 403`,
    async () => {
      first = await validatorManifests(FIRST_HOST);
      await validator.deploy(first);
      firstPod = await fieldOf(cluster(), validator.pod, '{.metadata.uid}');
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
      const oldUid = await configMapUid(old.metadata.name);
      // What pulumi up makes first (the StatefulSet waits for the node before it): the new ConfigMap alone.
      await applyServerSide(cluster(), [next]);
      const restarts = Number(await fieldOf(cluster(), validator.pod, `{${besuStatus}.restartCount}`));
      // Long enough for the kubelet to have synced a changed ConfigMap into the pod's volume, were it the same one.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      await inBesu('sh', '-c', 'kill 1');
      await fieldWhen(
        cluster(),
        validator.pod,
        `{.metadata.uid}|{${besuStatus}.restartCount}|{${besuStatus}.ready}`,
        (value) => value === `${firstPod}|${restarts + 1}|true`,
        120_000,
      );
      const inPod = await configInPod();
      expect([inPod.includes(FIRST_HOST), inPod.includes(SECOND_HOST)]).toEqual([true, false]);
      expect(await netEnodeAs(FIRST_HOST)).toBe(`200 ${enode}`);
      expect(await netEnodeAs(SECOND_HOST)).toBe('403');
      // How (after what it guards, so a product without it fails on the restart above): a new ConfigMap beside the
      // old, both immutable, the old one untouched.
      expect(next.metadata.name).not.toBe(old.metadata.name);
      expect([old.immutable, next.immutable]).toEqual([true, true]);
      expect(await configMapUid(old.metadata.name)).toBe(oldUid);
      expect(await configMapUid(next.metadata.name)).toMatch(/^[0-9a-f-]{36}$/);
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
      const secondPod = await validator.readyPodOtherThan(firstPod, ROLL_MS);
      expect(
        await fieldOf(cluster(), validator.pod, '{.spec.volumes[?(@.name=="config-source")].configMap.name}'),
      ).toBe(configMapOf(second).metadata.name);
      const inPod = await configInPod();
      expect([inPod.includes(SECOND_HOST), inPod.includes(FIRST_HOST)]).toEqual([true, false]);
      expect(await netEnodeAs(SECOND_HOST)).toBe(`200 ${enode}`);
      expect(await netEnodeAs(FIRST_HOST)).toBe('403');
      // pulumi up deletes the old ConfigMap last: the pod, on the new one, runs on.
      await cluster().kubectlOk(['delete', 'configmap', '-n', NAMESPACE, configMapOf(first).metadata.name]);
      expect(await fieldOf(cluster(), validator.pod, '{.metadata.uid} {.status.phase}')).toBe(`${secondPod} Running`);
      expect(await netEnodeAs(SECOND_HOST)).toBe(`200 ${enode}`);
    },
  );
});

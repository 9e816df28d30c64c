/**
 * A config change on a real kubelet (issue 52, item 4): a validator's manifests as the program declares them, set up
 * as the tier's fixture sets up a node (testing/cluster/kubeletNode.ts; only the CPU requests lowered), applied
 * server-side as the provider applies them, then declared again with another RPC host allowlist
 * (`lacchain:rpc.hostAllowlist`) and applied over them. The ConfigMap is patched in place, the StatefulSet's
 * `lacchain.net/config-checksum` annotation changes, the pod rolls, and the new pod runs the new config: its
 * config.toml and the Besu stand-in's answer (the Host header it accepts).
 */
import { kubernetesNames, POD_FILES, POD_PATHS } from '../../core/catalog/kubernetes';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import { applyServerSide, Manifest } from '../../testing/cluster/manifests';
import { fieldOf } from '../../testing/cluster/objects';

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
const configMapUid = () =>
  fieldOf(cluster(), { kind: 'configmap', name: names.configMap, namespace: NAMESPACE }, '{.metadata.uid}');
const configInPod = () => inBesu('cat', `${POD_PATHS.configDir}/${POD_FILES.config}`);

let firstPod = '';

describe('a config change on a real kubelet: the ConfigMap patched in place rolls the pod to the new config', () => {
  itWithKubelet(
    `the first config runs: Besu answers net_enode for the allowlisted ${FIRST_HOST} and refuses ${SECOND_HOST} with 403`,
    async () => {
      await validator.deploy(await validatorManifests(FIRST_HOST));
      firstPod = await fieldOf(cluster(), validator.pod, '{.metadata.uid}');
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
        { kind: 'configmap', name: names.configMap, namespace: NAMESPACE },
        `{.data.config\\.toml}`,
      );
      expect([config.includes(SECOND_HOST), config.includes(FIRST_HOST)]).toEqual([true, false]);
      expect(await checksumOf()).toBe(set.spec.template.metadata.annotations[CHECKSUM]);
      // The StatefulSet's controller replaces the pod (the old one's containers are given their grace period).
      await validator.readyPodOtherThan(firstPod, ROLL_MS);
      const inPod = await configInPod();
      expect([inPod.includes(SECOND_HOST), inPod.includes(FIRST_HOST)]).toEqual([true, false]);
      expect(await netEnodeAs(SECOND_HOST)).toBe(`200 ${enode}`);
      expect(await netEnodeAs(FIRST_HOST)).toBe('403');
    },
  );
});

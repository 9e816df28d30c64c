/**
 * The key check of key custody `secret` on a real kubelet (docs/security.md#key-custody,
 * scripts/kubernetes/check-node-key.sh): a validator whose key is the operator's own Secret, its manifests as the
 * program declares them (as in validatorPod.test.ts; only the CPU requests lowered, kubeletFit.ts), run by a real
 * worker. The Secret is the test's, as the operator's own tooling would make it; the program never makes or reads it.
 * The pod runs the check as its init container: a Secret holding another node's key, junk or nothing never starts
 * Besu, the right key does, each time with the one-line reason in the pod's status. Only the check mounts the Secret:
 * a key swapped in it while the pod runs never reaches Besu, whose next start runs on the checked copy (read-only to
 * it). A ConfigMap made again under its name, with a key check that passes any key and a config.toml pointing Besu at
 * the raw Secret, is refused by the pod's config check (docs/security.md#what-a-pod-reads) before anything runs.
 */
import * as fs from 'fs';
import * as path from 'path';
import { NETWORKS } from '../../core/catalog/networks';
import { deriveIdentity, publicKeyHex } from '../../core/identity/nodeKey';
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
import { rpcInsidePod } from '../../testing/cluster/kubeletNode';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(300_000);

const NAMESPACE = 'kubelet-key-check';
const WORKER = 'worker-validator';
const POD = 'besu-node-validator-0';
const BESU = 'validator-besu';
const KEY_CHECK = 'validator-key-check';
const CONFIG_CHECK = 'validator-config-check';
const SECRET = 'operator-validator-key';
const ENTRY = 'nodekey';
const network = NETWORKS['open-protestnet'];
const recorded = recordProgram();
const work = workFolder('lacchain-kubelet-key-check-');
let besuDigest = '';
let manifests: Manifest[] = [];
let dataFolder = '';

const { cluster, itWithKubelet } = kubeletClusterForSuite([WORKER], async (running) => {
  besuDigest = await importNodeImages(running.kubelets[0], work, network.defaultBesuVersion, 'validator');
});

const values = valuesFor('testnet', 'validator', { namespace: NAMESPACE });
const enode = deriveIdentity(KEY_ONE, values.deploy.p2p.host, values.deploy.p2p.port).enode;
const PUBLIC_KEY = `0x${publicKeyHex(KEY_ONE)}`;
/** Another node's key (private key 2), as Besu writes a key file. */
const OTHER_KEY = `0x${'0'.repeat(63)}2`;
const OTHER_PUBLIC_KEY = `0x${publicKeyHex(OTHER_KEY)}`;

/** The validator's manifests, its key the operator's Secret SECRET (entry ENTRY) of public key PUBLIC_KEY. */
async function validatorManifests(): Promise<Manifest[]> {
  const config = {
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [
      {
        name: 'validator',
        typenode: 'validator',
        target: 'kubernetes',
        keyCustody: 'secret',
        keySecret: SECRET,
        keySecretEntry: ENTRY,
        publicKey: PUBLIC_KEY,
      },
    ],
    'lacchain:backupPassword': 'a backup password of the operator',
    'lacchain:companions': { ethstats: { enabled: false } },
  };
  const files = {
    'values/validator.yml': valuesFor('testnet', 'validator', { namespace: NAMESPACE, imageDigest: besuDigest }),
  };
  return kubernetesManifests(await declareProgram(recorded, 'testnet', config, files));
}

/** Puts `key` (as is, empty too) in the operator's Secret, as their own tooling would. */
const putKeyInSecret = (key: string) =>
  cluster().kubectlOk(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET, namespace: NAMESPACE },
      type: 'Opaque',
      data: { [ENTRY]: Buffer.from(key).toString('base64') },
    }),
  );

const pod = { kind: 'pod', name: POD, namespace: NAMESPACE };
const podUid = () => fieldOf(cluster(), pod, '{.metadata.uid}');

/**
 * The termination message of the init container `container` (the key check unless named) in the pod `uid` (of its
 * current run, else its last), read until it is `expected` (90 s at most: a Secret changed just before the pod was
 * made can reach a later run of the check).
 */
async function keyCheckMessage(uid: string, expected: string, container = KEY_CHECK): Promise<string> {
  const check = `.status.initContainerStatuses[?(@.name=="${container}")]`;
  const messageOf = (value: string) => {
    const [, , current = '', last = ''] = value.split('|');
    return (current.trim() || last).trim();
  };
  const seen = await fieldWhen(
    cluster(),
    pod,
    `{.metadata.uid}|{${check}.name}|{${check}.state.terminated.message}|{${check}.lastState.terminated.message}`,
    (value) => value.startsWith(`${uid}|`) && messageOf(value) === expected,
    90_000,
  );
  expect(seen.split('|').slice(0, 2)).toEqual([uid, container]);
  return messageOf(seen);
}

/** Each container of the pod as `name=<started at, or the reason it waits or stopped>/<restart count>`. */
const containerStates = () =>
  fieldOf(
    cluster(),
    pod,
    '{range .status.containerStatuses[*]}{.name}={.state.running.startedAt}{.state.waiting.reason}{.state.terminated.reason}/{.restartCount},{end}',
  );

/** The refusal check-node-key.sh writes, for `reason`. */
const refusal = (reason: string) =>
  `lacchain: ${reason}: the node does not start (key custody secret, docs/security.md#key-custody)`;

/** The pod made again by its StatefulSet (the Secret is mounted afresh, the kubelet's back-off starts over); its uid. */
async function newPod(): Promise<string> {
  const old = await podUid();
  await cluster().kubectlOk(['delete', 'pod', '-n', NAMESPACE, POD, '--wait=false']);
  const uid = await fieldWhen(
    cluster(),
    pod,
    '{.metadata.uid}',
    (value) => value !== old && /^[0-9a-f-]{36}$/.test(value),
    60_000,
  );
  expect(uid).not.toBe(old);
  return uid;
}

/** The pod with a refused key: Besu's container and the companions never started (still waiting for the init). */
async function expectNothingStarted(): Promise<void> {
  const states = (await containerStates()).split(',').filter(Boolean);
  const containers = manifests.find((m) => m.kind === 'StatefulSet')!.spec.template.spec.containers.length;
  expect(states).toHaveLength(containers);
  for (const state of states) expect(state).toMatch(/^[a-z-]+=PodInitializing\/0$/);
  expect(fs.existsSync(path.join(dataFolder, 'standin-chain.json'))).toBe(false);
}

/** The pod `uid` refused by the key check for `reason` (its one line in the pod's status), nothing of it started. */
async function expectRefused(uid: string, reason: string): Promise<void> {
  const refused = refusal(reason);
  expect(await keyCheckMessage(uid, refused)).toBe(refused);
  await expectNothingStarted();
}

/** Runs `command` in the Besu container of the pod; returns its standard output. */
const inBesu = (...command: string[]) => cluster().kubectlOk(execIn(BESU, command));

/** Runs `command` in the Besu container of the pod, whatever it exits with; returns kubectl's answer. */
const tryInBesu = (...command: string[]) => cluster().kubectl(execIn(BESU, command));

/** kubectl's arguments that run `command` in the pod's `container`. */
function execIn(container: string, command: string[]): string[] {
  return ['exec', '-n', NAMESPACE, POD, '-c', container, '--', ...command];
}

/** The companion container that reads the node key (the rotation client): from the checked copy, never the Secret. */
function keyCompanion(): string {
  const containers = manifests.find((m) => m.kind === 'StatefulSet')!.spec.template.spec.containers as {
    name: string;
    volumeMounts?: { name: string; mountPath: string }[];
  }[];
  const readers = containers.filter(
    (c) => c.name !== BESU && c.volumeMounts?.some((m) => m.name === 'checked-key' && m.mountPath === '/etc/besu/key'),
  );
  expect(readers.map((c) => c.name)).toEqual(['validator-rotation-validator']);
  return readers[0].name;
}

/** Whether the checked copy of the key is in the companion's /etc/besu/key, and what it holds. */
const checkedCopy = () => cluster().kubectl(execIn(keyCompanion(), ['cat', '/etc/besu/key/key']));

/** A JSON-RPC call to the node from inside its pod. */
const rpcInPod = (method: string) => rpcInsidePod(inBesu, method);

describe("key custody secret on a real kubelet: the pod checks the operator's Secret's key", () => {
  itWithKubelet(
    "a Secret holding another node's key: the key check refuses it, its one-line reason in the pod's status, and no container of the pod starts",
    async () => {
      manifests = withCpuRequestsThatFit(await validatorManifests());
      const set = manifests.find((m) => m.kind === 'StatefulSet')!;
      expect(set.spec.template.spec.initContainers.map((c: { name: string }) => c.name)).toContain(KEY_CHECK);
      await cluster().kubectlOk(['apply', '-f', '-'], JSON.stringify(manifests.find((m) => m.kind === 'Namespace')));
      const folders = await localVolumesFor(cluster(), cluster().kubelets[0], manifests);
      dataFolder = folders['besu-node-validator-data'];
      const peer = cluster().kubelets[0].networkPeer;
      const nodes = [enode, ...network.bootnodes.validator, peer].map((each) => ({ enode: each, fromBlock: 0 }));
      fs.writeFileSync(path.join(dataFolder, 'standin-permissioning.json'), JSON.stringify({ nodes }));
      onTestNetwork(dataFolder, KUBELET_NETWORK, peer);
      await putKeyInSecret(OTHER_KEY);
      await applyServerSide(cluster(), manifests);
      const uid = await fieldWhen(cluster(), pod, '{.metadata.uid}', (value) => /^[0-9a-f-]{36}$/.test(value), 60_000);
      await expectRefused(
        uid,
        `the key in entry ${ENTRY} of Secret ${SECRET} has public key ${OTHER_PUBLIC_KEY}, not the node's publicKey ${PUBLIC_KEY}`,
      );
    },
  );

  itWithKubelet.each([
    [
      'holding junk',
      'it is not a node key Besu can read',
      'not a node key',
      `entry ${ENTRY} of Secret ${SECRET} is not a node key Besu can read (one line of 64 hex digits)`,
    ],
    ['whose entry is empty', 'it is empty', '', `entry ${ENTRY} of Secret ${SECRET} is empty or missing`],
  ])('a Secret %s: the key check says %s, and no container of the pod starts', async (_held, _said, key, reason) => {
    await putKeyInSecret(key);
    await expectRefused(await newPod(), reason);
  });

  itWithKubelet(
    "the node's own key in the Secret: every container starts and is ready, the node answers net_enode with the stack's enode, and the rotation client's checked copy is that key",
    async () => {
      await putKeyInSecret(KEY_ONE);
      const uid = await newPod();
      const containers = manifests.find((m) => m.kind === 'StatefulSet')!.spec.template.spec.containers.length;
      const expected = `${uid} Running ${'true,'.repeat(containers)}`;
      const seen = await fieldWhen(
        cluster(),
        pod,
        '{.metadata.uid} {.status.phase} {range .status.containerStatuses[*]}{.ready},{end}',
        (value) => value === expected,
        120_000,
      );
      expect(seen).toBe(expected);
      expect(await rpcInPod('net_enode')).toBe(enode);
      expect((await checkedCopy()).stdout.trim()).toBe(KEY_ONE);
    },
  );

  itWithKubelet(
    "another node's key swapped into the Secret while the pod runs: Besu's container does not mount the Secret, its next start runs on the checked copy (the stack's enode), which it cannot write",
    async () => {
      await putKeyInSecret(OTHER_KEY);
      // The kubelet updates a mounted Secret in place (its sync, 5 s on the test worker); only the key check mounts it.
      const secretInBesu = await tryInBesu('ls', '/etc/besu/secret-key');
      expect([secretInBesu.code === 0, secretInBesu.stderr]).toEqual([false, expect.stringContaining('No such file')]);
      const besuStatus = `.status.containerStatuses[?(@.name=="${BESU}")]`;
      const restarts = Number(await fieldOf(cluster(), pod, `{${besuStatus}.restartCount}`));
      // Long enough for the kubelet to have synced the swapped key into a mount, were there one.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      // The container's main process (Besu, which the start step exec'd) stops on SIGTERM: the kubelet starts it again.
      await inBesu('sh', '-c', 'kill 1');
      const again = await fieldWhen(
        cluster(),
        pod,
        `{${besuStatus}.restartCount}|{${besuStatus}.ready}`,
        (value) => value === `${restarts + 1}|true`,
        120_000,
      );
      expect(again).toBe(`${restarts + 1}|true`);
      expect(await rpcInPod('net_enode')).toBe(enode);
      // The checked copy is read-only to Besu's container: a compromised Besu cannot change what the companions read.
      const write = await tryInBesu(
        'sh',
        '-c',
        // Written over, or put beside and renamed over it (the file's own mode alone would stop the first).
        `echo ${OTHER_KEY} >/etc/besu/key/key; echo ${OTHER_KEY} >/etc/besu/key/key.new && mv -f /etc/besu/key/key.new /etc/besu/key/key`,
      );
      expect([write.code === 0, write.stderr]).toEqual([false, expect.stringContaining('Read-only file system')]);
      expect((await checkedCopy()).stdout.trim()).toBe(KEY_ONE);
    },
  );

  itWithKubelet(
    "a ConfigMap made again under its name, its key check passing any key and its config.toml pointing Besu at the raw Secret (another node's key in it): the next pod's config check refuses it, its one-line reason in the pod's status, and nothing else starts",
    async () => {
      const configMap = manifests.find((m) => m.kind === 'ConfigMap')!;
      const tampered = structuredClone(configMap);
      // What a ConfigMap editor would put there: the Secret's key copied where the pod reads it, the rest run as is.
      tampered.data['check-node-key.sh'] = '#!/bin/sh\ncp "$2" "$6"\nshift 6\n[ "$#" -gt 0 ] && exec "$@"\nexit 0\n';
      tampered.data['config.toml'] = tampered.data['config.toml'].replace(
        'node-private-key-file = "/etc/besu/key/key"',
        'node-private-key-file = "/etc/besu/secret-key/key"',
      );
      expect(tampered.data['config.toml']).toContain('"/etc/besu/secret-key/key"');
      await cluster().kubectlOk(['delete', 'configmap', '-n', NAMESPACE, configMap.metadata.name]);
      await cluster().kubectlOk(['create', '-f', '-'], JSON.stringify(tampered));
      const uid = await newPod();
      const digest = manifests.find((m) => m.kind === 'StatefulSet')!.spec.template.spec.initContainers[0].args[2];
      const status = `.status.initContainerStatuses[?(@.name=="${CONFIG_CHECK}")]`;
      const message = await fieldWhen(
        cluster(),
        pod,
        `{.metadata.uid}|{${status}.state.terminated.message}{${status}.lastState.terminated.message}`,
        (value) => value.startsWith(`${uid}|lacchain:`),
        90_000,
      );
      expect(message.split('|')[1].trim()).toMatch(
        new RegExp(
          `^lacchain: the node's ConfigMap holds files of digest [0-9a-f]{64}, not the ${digest} its StatefulSet names \\(edited after pulumi up\\?\\): the node does not start \\(docs/security.md#what-a-pod-reads\\)$`,
        ),
      );
      // Neither the key check nor any container ran: every one waits for the init containers.
      const states = (await containerStates()).split(',').filter(Boolean);
      expect(states).toHaveLength(
        manifests.find((m) => m.kind === 'StatefulSet')!.spec.template.spec.containers.length,
      );
      for (const state of states) expect(state).toMatch(/^[a-z-]+=PodInitializing\/0$/);
      const keyCheck = await fieldOf(
        cluster(),
        pod,
        `{.status.initContainerStatuses[?(@.name=="${KEY_CHECK}")].state.waiting.reason}`,
      );
      expect(keyCheck).toBe('PodInitializing');
    },
  );
});

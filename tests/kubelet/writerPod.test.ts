/**
 * A writer's pod on a real kubelet (issue 52, items 1 and 7): the program's manifests for a testnet writer (set up as
 * testing/cluster/kubeletNode.ts sets up the tier's nodes) run Besu, the reverse proxy, the relay signer and the
 * metrics relay as real containers (the proxy a stand-in: Debian's nginx with its Lua module and cjson where the
 * official image has OpenResty; the relay signer's stand-in records every request it receives). Through the Service's
 * pod endpoint (the address and port a load balancer sends the writer's port 80 to, the Host the public IP), the gas
 * model's four methods reach the relay signer in the pod, and the rest reach Besu. Then a release bump applied over
 * it (its backup before the change found in the backups volume, item 5), and `npm run node -- backup`, `restore` and
 * `rollback` on the real pod (item 6; the backups volume read with restic on this machine, the node's password from its
 * Secret; the rollback after the operator set the old release's digest in the values file, as docs/operations.md says).
 */
import * as fs from 'fs';
import * as http from 'http';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { BACKUP_REASONS, BACKUP_TAGS } from '../../core/catalog/backups';
import { GAS_MODEL_METHODS } from '../../core/catalog/gasModel';
import { COMPANION_POD_DIR, kubernetesNames } from '../../core/catalog/kubernetes';
import { BESU_IMAGE_UID } from '../../core/catalog/besu';
import { RELAY_SIGNER } from '../../core/catalog/companions';
import { NETWORKS } from '../../core/catalog/networks';
import { backupNames } from '../../core/kubernetes/backups';
import { expectOneSnapshot, resticOnBackups } from '../../testing/cluster/backupRepository';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import { applyServerSide } from '../../testing/cluster/manifests';
import { nodeCommand } from '../../testing/cluster/nodeCommand';
import { fieldOf, logOf } from '../../testing/cluster/objects';
import { stoppedBefore, watchPodStop } from '../../testing/cluster/podStop';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(300_000);

/** The release the pod runs first (the network's), and the one a release bump takes it to. */
const RELEASE = NETWORKS['open-protestnet'].defaultBesuVersion;
const NEXT_RELEASE = '24.1.0';
const work = workFolder('lacchain-kubelet-writer-');
const writer = kubeletNode('writer', 'kubelet-writer', { work, releases: [NEXT_RELEASE] });
const { cluster, itWithKubelet, enode } = writer;
const names = kubernetesNames(writer.node);
/** The relay signer stand-in's record of the requests it received, in its working folder. */
const RELAY_REQUESTS = `${COMPANION_POD_DIR}/${RELAY_SIGNER.logDir}/requests.log`;
/** The Service's proxy endpoint (`http://<pod address>:<port>`), read once the pod is ready. */
let proxyEndpoint = '';

/** A JSON-RPC request's body. */
const call = (method: string, params: unknown[] = []) => JSON.stringify({ jsonrpc: '2.0', id: 7, method, params });

/** POSTs `body` to `url` with the Host header `host`; resolves with the status and the answer's body. */
function post(url: string, body: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', headers: { host, 'content-type': 'application/json' }, timeout: 10_000 },
      (response) => {
        let answer = '';
        response.on('data', (chunk) => (answer += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: answer }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** What the relay signer stand-in has received so far, one request body a line. */
const relayRequests = async () =>
  (
    await cluster().kubectl([
      'exec',
      '-n',
      writer.namespace,
      writer.pod.name,
      '-c',
      names.companionContainer(RELAY_SIGNER.name),
      '--',
      'cat',
      RELAY_REQUESTS,
    ])
  ).stdout
    .split('\n')
    .filter(Boolean);

/** Sends `body` through the Service's proxy endpoint as the public IP; the answer and what the relay signer got. */
async function throughProxy(body: string) {
  const before = (await relayRequests()).length;
  const answer = await post(proxyEndpoint, body, writer.values().deploy.publicIP);
  return { ...answer, relaySigner: (await relayRequests()).slice(before) };
}

/** How many JSON-RPC requests (POSTs) Besu has received: its access log, at DEBUG (set for this test's pod). */
const besuRequests = async () =>
  (await logOf(cluster(), writer.pod, names.besuContainer))
    .split('\n')
    .filter((line) => line.includes('"POST / HTTP/1.1"')).length;

/**
 * Expects Besu to have received no request since it had received `before`, but one sent now from inside the pod:
 * the log is in order, so once that one is in it, anything sent before it would be too.
 */
async function expectBesuReceivedNothingSince(before: number): Promise<void> {
  await writer.rpcInPod('net_version');
  const deadline = Date.now() + 15_000;
  let now = await besuRequests();
  while (now < before + 1 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    now = await besuRequests();
  }
  expect(now).toBe(before + 1);
}

/** A field of the pod's spec or status. */
const podField = (jsonpath: string) => fieldOf(cluster(), writer.pod, jsonpath);
/** restic on this machine, on the backups volume's folder, with the node's backup password from its Secret. */
const restic = resticOnBackups(writer);

/**
 * Files the test writes on the data volume, as the node's uid, to tell which data a restore put back: one written
 * before the release bump (changed after it), one before the manual backup (changed after it).
 */
const RELEASE_MARKER = 'lacchain-test-release-marker';
const BACKUP_MARKER = 'lacchain-test-backup-marker';
/** The Besu stand-in's chain (its height) and its steering file (tests/fixtures/besu-standin/README.md). */
const CHAIN_FILE = 'standin-chain.json';
const STATE_FILE = 'standin-state.json';
/** The chain's height when the manual backup was taken (the chain frozen just before it). */
let heightBackedUp = -1;

/** Writes `text` to the data volume's file `name`, as the node's uid. */
function writeOnData(name: string, text: string): void {
  const file = path.join(writer.volumes()[names.dataVolume], name);
  fs.writeFileSync(file, text);
  fs.chownSync(file, BESU_IMAGE_UID, BESU_IMAGE_UID);
}
/** The data volume's file `name`, or undefined when there is none. */
function readOnData(name: string): string | undefined {
  const file = path.join(writer.volumes()[names.dataVolume], name);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
}
/** The chain's height as the node answers it. */
const height = async () => parseInt(String(await writer.rpcInPod('eth_blockNumber')), 16);

describe("a writer's pod on a real kubelet", () => {
  itWithKubelet(
    'its StatefulSet from the program runs: Besu, the proxy, the relay signer and the metrics relay started and ready',
    async () => {
      const manifests = await writer.manifests();
      const containers = manifests
        .find((m) => m.kind === 'StatefulSet')!
        .spec.template.spec.containers.map((c: { name: string }) => c.name);
      expect(containers.sort()).toEqual(
        [
          names.besuContainer,
          names.proxyContainer,
          names.companionContainer(RELAY_SIGNER.name),
          names.metricsRelayContainer,
        ].sort(),
      );
      // Besu's access log (DEBUG: the stand-in's, as Besu's own) shows the requests it receives.
      const besu = manifests
        .find((m) => m.kind === 'StatefulSet')!
        .spec.template.spec.containers.find((c: { name: string }) => c.name === names.besuContainer);
      besu.env.push({ name: 'BESU_LOGGING', value: 'DEBUG' });
      await writer.deploy(manifests);
    },
  );

  itWithKubelet("the node answers net_enode with the stack's enode from inside the pod", async () => {
    expect(await writer.rpcInPod('net_enode')).toBe(enode);
  });

  itWithKubelet(
    "the Service's pod endpoint for the proxy port is the pod's proxy: net_enode answered by Besu",
    async () => {
      const slice = (
        await cluster().kubectlOk([
          'get',
          'endpointslices',
          '-n',
          writer.namespace,
          '-l',
          `kubernetes.io/service-name=${names.service}`,
          '-o',
          'jsonpath={.items[0].endpoints[0].addresses[0]} {.items[0].ports[?(@.name=="proxy")].port}',
        ])
      ).split(' ');
      expect(slice[0]).toMatch(/^10\.232\.1\.\d+$/);
      proxyEndpoint = `http://${slice[0]}:${slice[1]}/`;
      const answer = await throughProxy(call('net_enode'));
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body).result).toBe(enode);
      expect(answer.relaySigner).toEqual([]);
    },
  );

  itWithKubelet.each([...GAS_MODEL_METHODS])(
    '%s reaches the relay signer in the pod, and only it: Besu does not receive it',
    async (method) => {
      const body = call(method, ['0xf86c0a8502540be400825208']);
      const before = await besuRequests();
      const answer = await throughProxy(body);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body).result).toBe('relay-signer-stand-in');
      expect(answer.relaySigner).toEqual([body]);
      await expectBesuReceivedNothingSince(before);
    },
  );

  itWithKubelet.each(['eth_chainId', 'net_version', 'web3_clientVersion', 'eth_syncing'])(
    "%s reaches Besu, not the relay signer: the answer is Besu's own, as asked inside the pod",
    async (method) => {
      const before = await besuRequests();
      const answer = await throughProxy(call(method));
      // Besu's access log shows it (the count the gas model's methods are checked by can see a request).
      const deadline = Date.now() + 15_000;
      while ((await besuRequests()) <= before && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(await besuRequests()).toBeGreaterThan(before);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toHaveProperty('result');
      expect(JSON.parse(answer.body).result).toBe(await writer.rpcInPod(method));
      expect(answer.relaySigner).toEqual([]);
    },
  );
});

describe("a release bump of the writer's pod (issue 52, item 5)", () => {
  itWithKubelet(
    "the new release's image runs the same node, after the backup before the change really ran: its snapshot in the backups volume",
    async () => {
      const old = await podField('{.metadata.uid}');
      // No repository yet: the node's first start backs nothing up.
      expect(fs.existsSync(path.join(writer.volumes()[backupNames(writer.node).volume], 'config'))).toBe(false);
      writeOnData(RELEASE_MARKER, `written on Besu ${RELEASE}, before the release change\n`);
      await applyServerSide(cluster(), await writer.manifests({}, NEXT_RELEASE));
      await writer.readyPodOtherThan(old);
      expect(await podField(`{.spec.containers[?(@.name=="${names.besuContainer}")].image}`)).toBe(
        `hyperledger/besu:${NEXT_RELEASE}@${writer.besuDigest(NEXT_RELEASE)}`,
      );
      expect(await writer.rpcInPod('web3_clientVersion')).toMatch(new RegExp(`^besu/v${NEXT_RELEASE}/`));
      expect(await writer.rpcInPod('net_enode')).toBe(enode);
      // The copy is of the data volume: the simulated chain Besu RELEASE kept there, and the marker, are in it.
      await expectOneSnapshot(restic, writer.node, RELEASE, BACKUP_REASONS.beforeReleaseChange);
      const [snapshot] = JSON.parse(await restic('snapshots', '--json'));
      expect(await restic('dump', snapshot.short_id, `/${RELEASE_MARKER}`)).toBe(
        `written on Besu ${RELEASE}, before the release change\n`,
      );
    },
  );
});

describe('npm run node -- backup, restore and rollback on the real pod (issue 52, item 6)', () => {
  const command = nodeCommand(writer, work, NEXT_RELEASE);

  itWithKubelet(
    "backup: the node stopped (its pod gone before restic's container started), restic run in a Job, the node started again; its snapshot in the backups volume holds the data as it was",
    async () => {
      const old = await podField('{.metadata.uid}');
      // The data as the backup must hold it: a marker, the release marker changed since the bump, the chain frozen.
      writeOnData(RELEASE_MARKER, `written on Besu ${NEXT_RELEASE}, after the release change\n`);
      writeOnData(BACKUP_MARKER, 'written before the backup\n');
      // Besu stops slowly (it closes its database): a backup that did not wait for the stop would copy meanwhile.
      writeOnData(STATE_FILE, JSON.stringify({ blockAdvancing: false, stopSeconds: 5 }));
      // A block period (2 s) and more for the stand-in to read it; then its height stays.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      heightBackedUp = await height();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(await height()).toBe(heightBackedUp);
      expect(heightBackedUp).toBeGreaterThan(0);
      const watch = watchPodStop(cluster(), { kind: 'pod', name: writer.pod.name, namespace: writer.namespace }, old);
      const result = await command.run('backup', '--node', writer.node);
      const seen = await watch.stop();
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      await writer.readyPodOtherThan(old);
      // The old pod was gone before restic's container started: what it copied was not being written.
      const backupStarts = (
        await cluster().kubectlOk([
          'get',
          'pods',
          '-n',
          writer.namespace,
          '-o',
          'jsonpath={range .items[?(@.spec.containers[0].name=="backup")]}{.status.containerStatuses[0].state.terminated.startedAt}{"\\n"}{end}',
        ])
      )
        .split('\n')
        .filter(Boolean);
      expect(backupStarts).toHaveLength(1);
      expect(stoppedBefore(seen, backupStarts[0])).toEqual([]);
      const snapshots = JSON.parse(await restic('snapshots', '--json'));
      expect(snapshots).toHaveLength(2);
      expect(snapshots[1].tags).toEqual(
        expect.arrayContaining([
          `${BACKUP_TAGS.release}=${NEXT_RELEASE}`,
          `${BACKUP_TAGS.reason}=${BACKUP_REASONS.manual}`,
        ]),
      );
      expect(await restic('dump', snapshots[1].short_id, `/${BACKUP_MARKER}`)).toBe('written before the backup\n');
      expect(JSON.parse(await restic('dump', snapshots[1].short_id, `/${CHAIN_FILE}`)).height).toBe(heightBackedUp);
    },
  );

  itWithKubelet(
    "restore: a Job puts the newest backup back on the data volume (the marker and the chain's height as backed up, what was written since gone), the node started on it answers with the same enode",
    async () => {
      const old = await podField('{.metadata.uid}');
      const data = writer.volumes()[names.dataVolume];
      const snapshots = JSON.parse(await restic('snapshots', '--json'));
      const newest = snapshots[snapshots.length - 1];
      // Written after the backup, as the node's uid: the restore replaces the volume's contents, so it goes.
      const later = path.join(data, 'written-after-the-backup');
      fs.writeFileSync(later, 'later\n');
      fs.chownSync(later, BESU_IMAGE_UID, BESU_IMAGE_UID);
      // Both changed since the backup: the marker, and the chain (the frozen stand-in never writes it again).
      writeOnData(BACKUP_MARKER, 'written after the backup\n');
      writeOnData(
        CHAIN_FILE,
        `${JSON.stringify({ height: heightBackedUp + 1000, headTimestamp: Date.now() / 1000 })}\n`,
      );
      const result = await command.run('restore', '--node', writer.node, '--backup', newest.short_id);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`restored: the node answers ${enode}`);
      await writer.readyPodOtherThan(old);
      expect(fs.existsSync(later)).toBe(false);
      // The backup's contents, not an emptied volume (the stand-in would start a chain of height 0 there).
      expect(readOnData(BACKUP_MARKER)).toBe('written before the backup\n');
      expect(JSON.parse(readOnData(CHAIN_FILE)!).height).toBe(heightBackedUp);
      expect(await height()).toBe(heightBackedUp);
      expect(await writer.rpcInPod('net_enode')).toBe(enode);
      expect(await writer.rpcInPod('web3_clientVersion')).toMatch(new RegExp(`^besu/v${NEXT_RELEASE}/`));
    },
  );

  itWithKubelet(
    "rollback: the backup taken before the release bump restored (its marker as it was then, nothing written since), the node back on the old release's image by its digest",
    async () => {
      const old = await podField('{.metadata.uid}');
      // As docs/operations.md says: the values file names the release to go back to, by its image's digest.
      fs.writeFileSync(command.valuesFile, yaml.dump(writer.values(RELEASE)));
      const result = await command.run('rollback', '--node', writer.node);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      await writer.readyPodOtherThan(old);
      expect(await podField(`{.spec.containers[?(@.name=="${names.besuContainer}")].image}`)).toBe(
        `hyperledger/besu:${RELEASE}@${writer.besuDigest(RELEASE)}`,
      );
      expect(await writer.rpcInPod('web3_clientVersion')).toMatch(new RegExp(`^besu/v${RELEASE}/`));
      expect(await writer.rpcInPod('net_enode')).toBe(enode);
      // The snapshot tagged before-release-change of that bump, not the newest (which holds the later files).
      expect(readOnData(RELEASE_MARKER)).toBe(`written on Besu ${RELEASE}, before the release change\n`);
      expect(readOnData(BACKUP_MARKER)).toBeUndefined();
      expect(readOnData(STATE_FILE)).toBeUndefined();
    },
  );
});

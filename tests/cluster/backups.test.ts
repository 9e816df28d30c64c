/**
 * A cluster node's backups against a real API server (testing/cluster/): the backup volume and Secret, the pod's
 * backup before a release change, the schedule (CronJob, its account and rights) admitted under the restricted Pod
 * Security Standard; the backup and restore Jobs; and, with a snapshot class, `npm run node -- backup | backups |
 * restore` making a VolumeSnapshot and a data volume from it with the real kubectl. No snapshot controller runs here:
 * the test marks a snapshot ready as one would, on a CRD of its own (testing/cluster/crds/). The pods are kwok's, so
 * the node's JSON-RPC is the Besu stand-in with the node's key, given as --rpc-url.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { NETWORKS } from '../../core/catalog/networks';
import { backupJobManifest, restoreJobManifest, volumeSnapshotManifest } from '../../core/kubernetes/backups';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { loadStack } from '../../core/settings/load';
import { RunningStandin, startBesuStandin } from '../../testing/besuStandin';
import { applyServerSide, kubernetesManifests, Manifest } from '../../testing/cluster/manifests';
import { fieldOf, fieldWhen, phaseWhenRunning, writerPod } from '../../testing/cluster/objects';
import { clusterForSuite } from '../../testing/cluster/suite';
import { HELD_POD_LABEL } from '../../testing/cluster/cluster';
import { KEY_ONE, memoryFiles, rawConfig } from '../../testing/fixtures';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram } from '../../testing/program';
import { PROJECT_DIR, runNpmAsync, startNpm } from '../../testing/run';
import { valuesFor } from '../../testing/values';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(300_000);

const recorded = recordProgram();
const { cluster, itWithCluster } = clusterForSuite();
const SNAPSHOTS = 'backups-snapshots';
const COPIES = 'backups-copies';
const ROLLBACK = 'backups-rollback';
const CRD = path.join(PROJECT_DIR, 'testing/cluster/crds/volume-snapshots.yaml');
/** The release the pods run: the network's. */
const RELEASE = NETWORKS['open-protestnet'].defaultBesuVersion;
const work = workFolder('lacchain-cluster-backups-');
let standin: RunningStandin | undefined;

/** The stack of one writer in `namespace`, scheduled daily, with or without a snapshot class. */
function stackOf(namespace: string, snapshotClass?: string) {
  const values = valuesFor('testnet', 'writer', {
    namespace,
    ...(snapshotClass ? { volumeSnapshotClass: snapshotClass } : {}),
  });
  const config = {
    'lacchain:network': 'open-protestnet',
    'lacchain:kubeContext': cluster().context,
    'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
    'lacchain:backups': { schedule: 'daily' },
  };
  return { values, config };
}

async function apply(namespace: string, snapshotClass?: string): Promise<Manifest[]> {
  const { values, config } = stackOf(namespace, snapshotClass);
  const declared = await declareProgram(
    recorded,
    'testnet',
    { ...config, 'lacchain:nodeKeys': { writer: KEY_ONE } },
    { 'values/writer.yml': values },
  );
  const manifests = kubernetesManifests(declared);
  await applyServerSide(cluster(), manifests);
  return manifests;
}

const clusterEnv = () => ({ KUBECONFIG: cluster().kubeconfig, PATH: `${cluster().binDir}:${process.env.PATH}` });

beforeAll(async () => {
  if (itWithCluster === it.skip) return;
  await cluster().kubectlOk(['apply', '-f', CRD]);
  await cluster().kubectlOk(['wait', '--for=condition=Established', 'crd/volumesnapshots.snapshot.storage.k8s.io']);
});

afterAll(() => standin?.stop());

describe('backups on a real API server', () => {
  itWithCluster(
    "restic copies: the backup volume and Secret, the pod's backup before a release change, the schedule",
    async () => {
      const manifests = await apply(COPIES);
      const kinds = manifests.map((m) => `${m.kind}/${m.metadata.name}`);
      expect(kinds).toEqual(
        expect.arrayContaining([
          'PersistentVolumeClaim/besu-node-writer-backups',
          'Secret/besu-node-writer-backup',
          'ServiceAccount/besu-node-writer-backup',
          'Role/besu-node-writer-backup',
          'RoleBinding/besu-node-writer-backup',
          'CronJob/besu-node-writer-backup',
        ]),
      );
      // The node's pod, its init containers the config check then the backup before a release change, admitted and
      // Running.
      const pod = writerPod(COPIES);
      expect(await phaseWhenRunning(cluster(), pod)).toBe('Running');
      expect(await fieldOf(cluster(), pod, '{.spec.initContainers[0].name} {.spec.initContainers[1].name}')).toBe(
        'writer-config-check backup-before-release-change',
      );
      // A run of the schedule, as the CronJob starts one: its pod is admitted (restricted) and created.
      await cluster().kubectlOk(['create', 'job', '--from=cronjob/besu-node-writer-backup', 'run-1', '-n', COPIES]);
      const runPod = await fieldWhen(
        cluster(),
        { kind: 'pods', name: '', namespace: COPIES, selector: 'job-name=run-1' },
        '{.items[0].spec.initContainers[*].name}',
        (v) => v.startsWith('stop-node'),
      );
      expect(runPod).toBe('stop-node node-stopped backup');
      // The run's pod as admitted: no token for the pod, the account's token mounted in the kubectl steps only.
      const mounts = await fieldOf(
        cluster(),
        { kind: 'pods', name: '', namespace: COPIES, selector: 'job-name=run-1' },
        '{.items[0].spec.automountServiceAccountToken}{range .items[0].spec.initContainers[*]}{"\\n"}{.name}:{.volumeMounts[*].mountPath}{end}{range .items[0].spec.containers[*]}{"\\n"}{.name}:{.volumeMounts[*].mountPath}{end}',
      );
      const token = '/var/run/secrets/kubernetes.io/serviceaccount';
      const [automount, ...steps] = mounts.split('\n');
      expect(automount).toBe('false');
      expect(steps.map((line) => [line.split(':')[0], line.includes(token)])).toEqual([
        ['stop-node', true],
        ['node-stopped', true],
        ['backup', false],
        ['start-node', true],
        ['report', false],
      ]);
      // Its account may get this node's StatefulSet and patch its scale subresource, and change nothing else.
      const account = `--as=system:serviceaccount:${COPIES}:besu-node-writer-backup`;
      const can = async (verb: string, resource: string, ...more: string[]) =>
        (await cluster().kubectl(['auth', 'can-i', verb, resource, ...more, '-n', COPIES, account])).stdout.trim();
      expect(await can('patch', 'statefulsets/besu-node-writer')).toBe('no');
      expect(await can('update', 'statefulsets/besu-node-writer')).toBe('no');
      expect(await can('patch', 'statefulsets/besu-node-writer', '--subresource=scale')).toBe('yes');
      expect(await can('update', 'statefulsets/besu-node-writer', '--subresource=scale')).toBe('no');
      expect(await can('get', 'statefulsets/besu-node-writer')).toBe('yes');
      expect(await can('patch', 'statefulsets/other', '--subresource=scale')).toBe('no');
      expect(await can('get', 'statefulsets/other')).toBe('no');
      expect(await can('delete', 'pods/besu-node-writer-0')).toBe('no');
      expect(await can('get', 'secrets')).toBe('no');
      // kubectl as the schedule's steps run it, as that account: the scale and the wait are let through...
      const asAccount = (...args: string[]) => cluster().kubectl([...args, '-n', COPIES, account]);
      const scaled = await asAccount('scale', 'statefulset/besu-node-writer', '--replicas=1');
      expect([scaled.code, scaled.stdout.trim(), scaled.stderr]).toEqual([
        0,
        'statefulset.apps/besu-node-writer scaled',
        '',
      ]);
      const waited = await asAccount('wait', '--for=delete', 'pod/besu-node-writer-0', '--timeout=1s');
      expect(waited.stderr).toMatch(/timed out waiting/);
      expect(waited.stderr).not.toMatch(/forbidden/i);
      // ... a change of the pod it runs (Besu's image) is refused.
      const patched = await asAccount(
        'set',
        'image',
        'statefulset/besu-node-writer',
        'writer-besu=example.org/besu:evil',
      );
      expect(patched.code).not.toBe(0);
      expect(patched.stderr).toMatch(/forbidden/i);
    },
  );

  itWithCluster(
    "a scheduled run's pod killed part-way is replaced, so the node it stopped for the copy is started again",
    async () => {
      // (The namespace's CronJob is the one the first test applied.) What kwok cannot show: the steps themselves run
      // (no container runs here). What the real Job controller shows: a run whose pod was killed during the copy (its
      // init container ended by SIGKILL, as a worker's restart ends it) gets a new pod with every step again, the
      // node's start included; a copy that failed (the report's exit status) ends the run without another pod.
      const job = JSON.parse(
        await cluster().kubectlOk([
          'create',
          'job',
          '--from=cronjob/besu-node-writer-backup',
          'run-2',
          '-n',
          COPIES,
          '--dry-run=client',
          '-o',
          'json',
        ]),
      );
      job.spec.template.metadata.labels = { ...job.spec.template.metadata.labels, [HELD_POD_LABEL]: 'true' };
      await cluster().kubectlOk(['create', '-f', '-', '-n', COPIES], JSON.stringify(job));
      const runPods = { kind: 'pods', name: '', namespace: COPIES, selector: 'job-name=run-2' };
      const NAMES = '{range .items[*]}{.metadata.name}{"\\n"}{end}';
      /** The run's pods, once there are `count` of them (or when waiting for it times out). */
      const podsOnceThere = async (count: number) =>
        (await fieldWhen(cluster(), runPods, NAMES, (v) => v.split('\n').filter(Boolean).length === count))
          .split('\n')
          .filter(Boolean);
      const endPod = async (pod: string, container: { init: boolean; name: string; exitCode: number }) => {
        await fieldWhen(
          cluster(),
          { kind: 'pod', name: pod, namespace: COPIES },
          '{.status.phase}',
          (v) => v === 'Running',
        );
        const terminated = {
          name: container.name,
          state: { terminated: { exitCode: container.exitCode, reason: 'Error' } },
        };
        const status = {
          phase: 'Failed',
          [container.init ? 'initContainerStatuses' : 'containerStatuses']: [terminated],
        };
        await cluster().kubectlOk([
          'patch',
          'pod',
          pod,
          '-n',
          COPIES,
          '--subresource=status',
          '--type=merge',
          '-p',
          JSON.stringify({ status }),
        ]);
      };
      const [first] = await podsOnceThere(1);
      await endPod(first, { init: true, name: 'backup', exitCode: 137 });
      const second = (await podsOnceThere(2)).find((name) => name !== first);
      expect(second).toBeDefined();
      expect(
        await fieldOf(cluster(), { kind: 'pod', name: second!, namespace: COPIES }, '{.spec.initContainers[0].name}'),
      ).toBe('stop-node');

      // The copy failed this time: the node was started (start-node ran), the report says so, the run ends there.
      await endPod(second!, { init: false, name: 'report', exitCode: 1 });
      const jobRef = { kind: 'job', name: 'run-2', namespace: COPIES };
      const failed = await fieldWhen(
        cluster(),
        jobRef,
        '{.status.conditions[?(@.type=="Failed")].reason}',
        (v) => v !== '',
      );
      expect(failed).toBe('PodFailurePolicy');
      expect(await podsOnceThere(2)).toHaveLength(2);
    },
  );

  itWithCluster(
    'npm run node -- backup cut while the node is stopped for the copy: run again, the node is started again',
    async () => {
      const { values, config } = stackOf(COPIES);
      standin ??= await startBesuStandin(KEY_ONE, values.deploy.p2p.host, values.deploy.p2p.port);
      const dir = path.join(work, 'copies');
      fs.mkdirSync(path.join(dir, 'values'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'Pulumi.testnet.yaml'), yaml.dump({ config }));
      fs.writeFileSync(path.join(dir, 'values', 'writer.yml'), yaml.dump(values));
      const args = ['backup', '--stack', 'testnet', '--config', path.join(dir, 'Pulumi.testnet.yaml')];
      const statefulSet = { kind: 'statefulset', name: 'besu-node-writer', namespace: COPIES };
      const replicas = () => fieldOf(cluster(), statefulSet, '{.spec.replicas}');
      expect(await replicas()).toBe('1');
      // The command (npm, the tool and its kubectl) killed at once as soon as it has scaled the node to 0.
      const cut = startNpm('node', [...args, '--rpc-url', standin.rpcUrl], { env: clusterEnv() });
      expect(await fieldWhen(cluster(), statefulSet, '{.spec.replicas}', (v) => v === '0')).toBe('0');
      cut.kill();
      await cut.result;
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(await replicas()).toBe('0');
      // Run again (docs/operations.md): whatever its copy gives, the node it stopped is started again.
      const again = await runNpmAsync('node', [...args, '--rpc-url', standin.rpcUrl], { env: clusterEnv() });
      expect(await replicas()).toBe('1');
      // What kwok cannot show: restic's list of backups (no container runs, its Job's log is empty), so the command
      // ends saying so, in one line.
      expect(again.code).toBe(1);
      expect(again.stderr.trim()).toMatch(
        new RegExp(
          `^error: node writer: the list Job (besu-node-writer-backups-\\d+) printed nothing: see kubectl logs job/\\1 -n ${COPIES}$`,
        ),
      );
    },
  );

  itWithCluster("the backup and restore Jobs are admitted and run on the node's worker", async () => {
    const { values, config } = stackOf(COPIES);
    const node = loadStack(
      'testnet',
      rawConfig(config, 'Pulumi.testnet.yaml'),
      memoryFiles({
        'values/writer.yml': yaml.dump(values),
      }),
    ).settings.nodes[0] as KubernetesNodeSettings;
    const jobs = [
      backupJobManifest(node, 'backup-1', { release: '24.1.0', head: 10, reason: 'manual' }),
      restoreJobManifest(node, 'restore-1', '0123abcd', '24.1.0'),
    ];
    await applyServerSide(cluster(), jobs as unknown as Manifest[]);
    for (const job of ['backup-1', 'restore-1']) {
      const where = await fieldWhen(
        cluster(),
        { kind: 'pods', name: '', namespace: COPIES, selector: `job-name=${job}` },
        '{.items[0].spec.nodeName}',
        (v) => v === values.deploy.workerName,
      );
      expect([job, where]).toEqual([job, values.deploy.workerName]);
    }
  });

  itWithCluster(
    'snapshots: npm run node -- backup makes a VolumeSnapshot, backups lists it, restore makes the data volume from it',
    async () => {
      const { values, config } = stackOf(SNAPSHOTS, 'csi-snapshots');
      await apply(SNAPSHOTS, 'csi-snapshots');
      standin ??= await startBesuStandin(KEY_ONE, values.deploy.p2p.host, values.deploy.p2p.port);
      fs.mkdirSync(path.join(work, 'values'), { recursive: true });
      fs.writeFileSync(path.join(work, 'Pulumi.testnet.yaml'), yaml.dump({ config }));
      fs.writeFileSync(path.join(work, 'values', 'writer.yml'), yaml.dump(values));
      const node = (...args: string[]) =>
        runNpmAsync(
          'node',
          [
            ...args,
            '--stack',
            'testnet',
            '--config',
            path.join(work, 'Pulumi.testnet.yaml'),
            '--rpc-url',
            standin!.rpcUrl,
          ],
          { env: clusterEnv() },
        );
      // No snapshot controller here: mark the snapshot ready to use once the command has made it.
      const taking = node('backup');
      const snapshot = await fieldWhen(
        cluster(),
        { kind: 'volumesnapshots', name: '', namespace: SNAPSHOTS, selector: 'lacchain.net/backup-of=writer' },
        '{.items[0].metadata.name}',
        (v) => v.startsWith('besu-node-writer-backup-'),
      );
      await cluster().kubectlOk([
        'patch',
        'volumesnapshot',
        snapshot,
        '-n',
        SNAPSHOTS,
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"readyToUse":true}}',
      ]);
      const taken = await taking;
      expect(taken.stderr).toBe('');
      expect(taken.code).toBe(0);
      expect(taken.stdout).toContain('(a snapshot is cut at one instant while the node runs)');
      expect(taken.stdout).toMatch(new RegExp(`backup ${snapshot} taken in .*: Besu ${RELEASE}, head \\d+`));
      expect(
        await fieldOf(
          cluster(),
          { kind: 'volumesnapshot', name: snapshot, namespace: SNAPSHOTS },
          '{.spec.source.persistentVolumeClaimName}',
        ),
      ).toBe('besu-node-writer-data');

      const listed = await node('backups');
      expect(listed.stdout).toMatch(new RegExp(`^ {2}${snapshot} .* writer {2}${RELEASE} +\\d+ +manual$`, 'm'));

      const restored = await node('restore');
      expect(restored.stderr).toBe('');
      expect(restored.code).toBe(0);
      expect(restored.stdout).toMatch(/restored: the node answers enode:\/\//);
      const volume = { kind: 'pvc', name: 'besu-node-writer-data', namespace: SNAPSHOTS };
      expect(await fieldOf(cluster(), volume, '{.spec.dataSource.kind}/{.spec.dataSource.name}')).toBe(
        `VolumeSnapshot/${snapshot}`,
      );
      const pod = writerPod(SNAPSHOTS);
      expect(await phaseWhenRunning(cluster(), pod)).toBe('Running');

      // A restore cut after it deleted the data volume, before it made the new one: run again, it finishes.
      const inSnapshots = (...args: string[]) => cluster().kubectlOk([...args, '-n', SNAPSHOTS]);
      await inSnapshots('scale', 'statefulset/besu-node-writer', '--replicas=0');
      await inSnapshots('wait', '--for=delete', 'pod/besu-node-writer-0', '--timeout=60s');
      await inSnapshots('delete', 'pvc', 'besu-node-writer-data', '--wait=true');
      const again = await node('restore');
      expect([again.code, again.stderr]).toEqual([0, '']);
      expect(await fieldOf(cluster(), volume, '{.spec.dataSource.name}')).toBe(snapshot);
      expect(await phaseWhenRunning(cluster(), pod)).toBe('Running');
    },
  );
  itWithCluster(
    "rollback sets Besu's image by the digest the values file pins for the release it goes back to",
    async () => {
      // The node runs the network's release; a backup taken before it moved there holds an older one.
      const older = '22.1.0';
      const digest = `sha256:${'4d'.repeat(32)}`;
      const { values, config } = stackOf(ROLLBACK, 'csi-snapshots');
      await apply(ROLLBACK, 'csi-snapshots');
      const pod = writerPod(ROLLBACK);
      expect(await phaseWhenRunning(cluster(), pod)).toBe('Running');
      standin ??= await startBesuStandin(KEY_ONE, values.deploy.p2p.host, values.deploy.p2p.port);
      // Before the rollback the operator names, in the values file, the release it goes back to and its digest.
      const rolledBack = { deploy: { ...values.deploy, releaseVersion: older, imageDigest: digest } };
      const dir = path.join(work, 'rollback');
      fs.mkdirSync(path.join(dir, 'values'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'Pulumi.testnet.yaml'), yaml.dump({ config }));
      fs.writeFileSync(path.join(dir, 'values', 'writer.yml'), yaml.dump(rolledBack));
      const node = loadStack(
        'testnet',
        rawConfig(config, 'Pulumi.testnet.yaml'),
        memoryFiles({ 'values/writer.yml': yaml.dump(rolledBack) }),
      ).settings.nodes[0] as KubernetesNodeSettings;
      const snapshot = 'besu-node-writer-before-change';
      await applyServerSide(cluster(), [
        volumeSnapshotManifest(node, { name: snapshot }, { release: older, reason: 'before-release-change' }),
      ] as unknown as Manifest[]);
      await cluster().kubectlOk([
        'patch',
        'volumesnapshot',
        snapshot,
        '-n',
        ROLLBACK,
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"readyToUse":true}}',
      ]);

      const result = await runNpmAsync(
        'node',
        [
          'rollback',
          '--stack',
          'testnet',
          '--config',
          path.join(dir, 'Pulumi.testnet.yaml'),
          '--rpc-url',
          standin.rpcUrl,
        ],
        { env: clusterEnv() },
      );
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain(`rolling back from Besu ${RELEASE} to ${older}, with backup ${snapshot}`);
      expect(result.stdout).toContain(
        `the node's StatefulSet now runs Besu ${older} from hyperledger/besu:${older}@${digest}, the digest pinned in values/writer.yml`,
      );
      expect(result.code).toBe(0);
      const besu = '{.spec.template.spec.containers[?(@.name=="writer-besu")].image}';
      const statefulSet = { kind: 'statefulset', name: 'besu-node-writer', namespace: ROLLBACK };
      expect(await fieldOf(cluster(), statefulSet, besu)).toBe(`hyperledger/besu:${older}@${digest}`);
      // The pod the StatefulSet made again runs it: its Besu container's image ends in the digest.
      const podImage = await fieldWhen(cluster(), pod, '{.spec.containers[?(@.name=="writer-besu")].image}', (v) =>
        v.includes(older),
      );
      expect(podImage).toMatch(/@sha256:[0-9a-f]{64}$/);
    },
  );
});

/**
 * The backup schedule's CronJob on a real kubelet (issue 52, item 6): a validator with `lacchain:backups.schedule`
 * (no snapshot class: a restic copy, the node stopped), set up as testing/cluster/kubeletNode.ts sets up the tier's
 * nodes; one run of the schedule started as an operator would (`kubectl create job --from=cronjob/…`). Its pod's
 * kubectl steps run the kubectl image (registry.k8s.io/kubectl's layout, pinned by kubectlImageDigest) with the
 * schedule's own account, its token projected by the kubelet (TokenRequest) beside the cluster's CA
 * (kube-root-ca.crt, published by the controller manager), and reach the API server through the `kubernetes`
 * Service's cluster IP (routed on the worker as kube-proxy would: testing/cluster/apiServiceRoute.ts). The Job
 * completes; the node's pod was stopped and a new one started after the copy; the copy is in the backups volume
 * (read with restic on this machine), tagged as scheduled with the node's release; the node answers with its enode.
 */
import { BACKUP_REASONS, BackupSchedule, KUBECTL_IMAGE } from '../../core/catalog/backups';
import { NETWORKS } from '../../core/catalog/networks';
import { backupNames } from '../../core/kubernetes/backups';
import { expectOneSnapshot, resticOnBackups } from '../../testing/cluster/backupRepository';
import { kubeletNode } from '../../testing/cluster/kubeletNode';
import { fieldOf, fieldWhen, ObjectRef } from '../../testing/cluster/objects';
import { stoppedBefore, watchPodStop } from '../../testing/cluster/podStop';

jest.setTimeout(300_000);

/** The release the node runs (the network's). */
const RELEASE = NETWORKS['open-protestnet'].defaultBesuVersion;
/** The schedule: weekly (Sundays at 03:17), so the controller's own run is not due while the test runs. */
const SCHEDULE: BackupSchedule = 'weekly';
/** How long the run may take: the node stopped, the copy, the node started again. */
const RUN_MS = 240_000;

const validator = kubeletNode('validator', 'kubelet-backup-schedule');
const { cluster, itWithKubelet, enode, namespace } = validator;
const names = backupNames(validator.node);
const restic = resticOnBackups(validator);
/** The run of the schedule the test starts, and its pod (by the Job's label). */
const run: ObjectRef = { kind: 'job', name: 'backup-by-hand', namespace };
const runPod: ObjectRef = { kind: 'pod', name: '', namespace, selector: `job-name=${run.name}` };

/** The Job's conditions that hold: Complete or Failed once it ended. */
const JOB_CONDITIONS = '{.status.conditions[?(@.status=="True")].type}';

/** A container's status in a pod's status. */
interface ContainerStatus {
  name: string;
  state: { terminated?: object };
}

/** What the run's pods did, for a failure's message: each container's state, and the log of each that ended. */
async function runReport(): Promise<string> {
  const list = await cluster().kubectlOk(['get', 'pods', '-n', namespace, '-l', runPod.selector!, '-o', 'json']);
  const lines: string[] = [];
  for (const pod of JSON.parse(list).items) {
    const statuses: ContainerStatus[] = [
      ...(pod.status.initContainerStatuses ?? []),
      ...(pod.status.containerStatuses ?? []),
    ];
    for (const { name, state } of statuses) {
      lines.push(`${pod.metadata.name} ${name}: ${JSON.stringify(state)}`);
      if (state.terminated) {
        const log = await cluster().kubectl(['logs', '-n', namespace, pod.metadata.name, '-c', name]);
        lines.push(`${log.stdout}${log.stderr}`.trim());
      }
    }
  }
  return lines.join('\n');
}

describe('the backup schedule on a real kubelet (issue 52, item 6)', () => {
  itWithKubelet(
    "the program declares the schedule's CronJob, account, Role and RoleBinding; the node's pod runs",
    async () => {
      const manifests = await validator.manifests({ 'lacchain:backups': { schedule: SCHEDULE } });
      const named = (kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name);
      for (const kind of ['ServiceAccount', 'Role', 'RoleBinding']) expect(named(kind, names.account)).toBeDefined();
      const cronJob = named('CronJob', names.cronJob)!;
      const pod = cronJob.spec.jobTemplate.spec.template.spec;
      const steps = [...pod.initContainers, ...pod.containers].filter((c) => c.image.startsWith(KUBECTL_IMAGE));
      expect(steps.map((c: { image: string }) => c.image)).toEqual(
        steps.map(() => `${KUBECTL_IMAGE}@${validator.kubectlDigest()}`),
      );
      expect(steps).toHaveLength(3);
      await validator.deploy(manifests);
    },
  );

  itWithKubelet(
    "a run started by hand: the node stopped (its pod gone before restic's container started), copied with restic, started again; the copy in the backups volume",
    async () => {
      const old = await fieldOf(cluster(), validator.pod, '{.metadata.uid}');
      const watch = watchPodStop(cluster(), validator.pod, old);
      await cluster().kubectlOk(['create', 'job', `--from=cronjob/${names.cronJob}`, run.name, '-n', namespace]);
      const ended = await fieldWhen(cluster(), run, JOB_CONDITIONS, (value) => /Complete|Failed/.test(value), RUN_MS);
      const seen = await watch.stop();
      if (!ended.includes('Complete')) throw new Error(`the run ended as "${ended}":\n${await runReport()}`);
      // The old pod was gone before restic's container started: what it copied was not being written.
      const copying = await fieldOf(
        cluster(),
        runPod,
        '{.items[0].status.initContainerStatuses[?(@.name=="backup")].state.terminated.startedAt}',
      );
      expect(stoppedBefore(seen, copying)).toEqual([]);

      // The node's pod was deleted (the node stopped) and a new one started once the copy was done.
      const fresh = await validator.readyPodOtherThan(old);
      expect(fresh).not.toBe(old);
      const copied = await fieldOf(
        cluster(),
        runPod,
        '{.items[0].status.initContainerStatuses[?(@.name=="backup")].state.terminated.finishedAt}',
      );
      const started = await fieldOf(cluster(), validator.pod, '{.metadata.creationTimestamp}');
      expect(Date.parse(started)).toBeGreaterThanOrEqual(Date.parse(copied));

      // The copy is of the data volume: the simulated chain the node kept there is in it.
      await expectOneSnapshot(restic, validator.node, RELEASE, BACKUP_REASONS.scheduled);
      expect(await validator.rpcInPod('net_enode')).toBe(enode);
    },
  );
});

/**
 * The backups of a cluster node, with kubectl: VolumeSnapshots of its data volume when it has a snapshot class,
 * otherwise restic Jobs copying the volume to and from the node's backup volume (the node's pod stopped meanwhile).
 */
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { POD_READY_TIMEOUT, POD_WAIT_CLIENT_MS } from '../../core/operations/clients';
import {
  BACKUP_ANNOTATIONS,
  BACKUP_LABEL,
  backupJobManifest,
  BackupRecord,
  listJobManifest,
  restoredDataVolumeManifest,
  restoreJobManifest,
  usesSnapshots,
  volumeSnapshotManifest,
} from '../../core/kubernetes/backups';
import { Backup, parseResticSnapshots, releaseImageChange, STOPPED_WHILE_COPIED } from '../../core/operations/backups';
import { lastMeaningfulLine } from '../../core/operations/reach';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import type { BackupClient } from './backupClient';
import { runClient } from './process';

/** How long a backup or restore Job may run. */
const JOB_TIMEOUT_MS = 24 * 3600 * 1000;
/**
 * How long one watch of a Job waits for its end before the Job is read again; a kubectl too old to watch for a field
 * (`wait --for=jsonpath=` without a value, before 1.31) fails at once, and the Job is read every JOB_READ_MS instead.
 */
const JOB_WATCH_SECONDS = 60;
const JOB_READ_MS = 2000;
/** How often a restored node is asked for its enode while it starts (one HTTP request each). */
const ENODE_ASK_MS = 500;
/** How long a snapshot may take to be ready to use. */
const SNAPSHOT_TIMEOUT = '30m';

/** What the cluster client needs from the node's other operations. */
export interface ClusterNodeAccess {
  /** kubectl arguments with the stack's context. */
  withContext(args: string[]): string[];
  /** The node's chain head, when it answers. */
  head(): Promise<number | undefined>;
  /** The node's enode, when it answers. */
  enode(): Promise<string | undefined>;
  /** The enode the program recorded (the Service's annotation). */
  recordedEnode(): Promise<string | undefined>;
  /** The release the pod runs (its image's tag), when known. */
  release(): Promise<string | undefined>;
}

/** A name for a backup object made now: `<prefix>-YYYYMMDDhhmmss`. */
function stamped(prefix: string): string {
  return `${prefix}-${new Date().toISOString().replace(/[-:T]/g, '').replace(/\..*$/, '')}`;
}

export function clusterBackups(node: KubernetesNodeSettings, access: ClusterNodeAccess): BackupClient {
  const names = kubernetesNames(node.name);
  const ns = ['-n', node.namespace];
  const kubectl = async (args: string[], what: string, input?: string, timeoutMs?: number) => {
    const result = await runClient('kubectl', access.withContext([...args, ...ns]), input, timeoutMs);
    if (result.code !== 0) {
      throw new ToolFailure(
        `node ${node.name}: kubectl cannot ${what}: ${lastMeaningfulLine(result.stderr) || `exit ${result.code}`}`,
      );
    }
    return result.stdout;
  };
  const scale = (replicas: number) =>
    kubectl(['scale', `statefulset/${names.statefulSet}`, `--replicas=${replicas}`], `scale the node to ${replicas}`);
  const stopNode = async () => {
    await scale(0);
    // The pod is given its grace period to stop: kubectl's own --timeout bounds the wait, not the client's default.
    await kubectl(
      ['wait', '--for=delete', `pod/${names.pod}`, `--timeout=${POD_READY_TIMEOUT}`],
      'see the pod stop',
      undefined,
      POD_WAIT_CLIENT_MS,
    );
  };
  /** Runs a Job to its end, passing its log's lines on; throws when it fails. */
  const runJob = async (manifest: object, name: string, onLine: (line: string) => void) => {
    await kubectl(['create', '-f', '-'], `create Job ${name}`, JSON.stringify(manifest));
    const deadline = Date.now() + JOB_TIMEOUT_MS;
    let state = '';
    while (Date.now() < deadline) {
      state = await kubectl(
        ['get', `job/${name}`, '-o', 'jsonpath={.status.succeeded}/{.status.failed}'],
        `read Job ${name}`,
      );
      if (state.startsWith('1/') || state.endsWith('/1')) break;
      // Watched, not polled: the Job gets a condition when it ends (or the moment before).
      const began = Date.now();
      const watch = await runClient(
        'kubectl',
        access.withContext([
          'wait',
          `job/${name}`,
          '--for=jsonpath={.status.conditions}',
          `--timeout=${JOB_WATCH_SECONDS}s`,
          ...ns,
        ]),
        undefined,
        (JOB_WATCH_SECONDS + 30) * 1000,
      );
      if (watch.code !== 0 || Date.now() - began < JOB_READ_MS / 4) {
        await new Promise((resolve) => setTimeout(resolve, watch.code !== 0 ? JOB_READ_MS : JOB_READ_MS / 4));
      }
    }
    const log = await runClient('kubectl', access.withContext(['logs', `job/${name}`, ...ns]));
    log.stdout.split('\n').forEach(onLine);
    if (!state.startsWith('1/')) {
      throw new ToolFailure(`Job ${name} failed: ${log.stdout.trim().split('\n').pop() ?? log.stderr.trim()}`);
    }
    return log.stdout;
  };
  const record = async (reason: string): Promise<BackupRecord> => {
    const head = await access.head();
    return {
      release: (await access.release()) ?? node.releaseVersion,
      reason,
      ...(head !== undefined ? { head } : {}),
    };
  };

  if (usesSnapshots(node)) {
    return {
      where: `VolumeSnapshots of ${names.dataVolume} (class ${node.volumeSnapshotClass})`,
      consistency: 'a snapshot is cut at one instant while the node runs',
      async take(reason, onLine) {
        // A snapshot is cut at one instant: the node keeps running (its database recovers as after a power cut).
        const name = stamped(`${names.statefulSet}-backup`);
        const manifest = volumeSnapshotManifest(node, { name }, await record(reason));
        await kubectl(['create', '-f', '-'], `create VolumeSnapshot ${name}`, JSON.stringify(manifest));
        onLine(`waiting for VolumeSnapshot ${name} to be ready to use`);
        await kubectl(
          [
            'wait',
            `volumesnapshot/${name}`,
            '--for=jsonpath={.status.readyToUse}=true',
            `--timeout=${SNAPSHOT_TIMEOUT}`,
          ],
          `see VolumeSnapshot ${name} ready`,
        );
      },
      async list() {
        const text = await kubectl(
          ['get', 'volumesnapshots', '-l', `${BACKUP_LABEL}=${node.name}`, '-o', 'json'],
          'list the VolumeSnapshots',
        );
        return snapshotBackups(node.name, text);
      },
      recordedEnode: () => access.recordedEnode(),
      prepareRelease: (release) => refuseUnpinnedRelease(release),
      async restore(backup, nodeKey, onLine) {
        refuseKey(nodeKey);
        await stopNode();
        onLine(`replacing ${names.dataVolume} with a volume made from VolumeSnapshot ${backup.id}`);
        // --ignore-not-found: a restore cut after the delete runs again (the snapshot still holds the data).
        await kubectl(
          ['delete', 'pvc', names.dataVolume, '--wait=true', '--ignore-not-found'],
          `delete ${names.dataVolume}`,
        );
        await kubectl(
          ['create', '-f', '-'],
          `create ${names.dataVolume} from the snapshot`,
          JSON.stringify(restoredDataVolumeManifest(node, backup.id)),
        );
        await startOn(backup, onLine);
      },
    };
  }

  /**
   * Before anything stops: a restore onto another release than the pod's needs that release's image by digest where
   * the network pins every image that receives the node key (releaseImageChange).
   */
  async function refuseUnpinnedRelease(release: string) {
    if ((await access.release()) === release) return;
    const change = releaseImageChange(node, release);
    if ('refused' in change) throw new ToolFailure(change.refused);
  }

  /** Points the StatefulSet at the backup's release (by digest), starts the node and checks what it answers. */
  async function startOn(backup: Backup, onLine: (line: string) => void) {
    if ((await access.release()) !== backup.release) {
      const change = releaseImageChange(node, backup.release);
      if ('refused' in change) throw new ToolFailure(change.refused);
      await kubectl(change.kubectl, `set the node's image to Besu ${backup.release}`);
      onLine(change.line);
    }
    await scale(1);
    const expected = await access.recordedEnode();
    const deadline = Date.now() + 600_000;
    let enode: string | undefined;
    while (Date.now() < deadline && !(enode = await access.enode())) {
      await new Promise((resolve) => setTimeout(resolve, ENODE_ASK_MS));
    }
    if (!enode || enode !== expected) {
      throw new ToolFailure(`the restored node answers ${enode ?? 'nothing'} but its recorded enode is ${expected}`);
    }
    const head = await access.head();
    if (backup.head !== undefined && (head === undefined || head < backup.head)) {
      throw new ToolFailure(`the restored node is at block ${head ?? 'unknown'}, below the backup's ${backup.head}`);
    }
    onLine(`restored: the node answers ${enode} at block ${head ?? 'unknown'}`);
  }

  return {
    where: `${names.statefulSet}-backups (restic, a volume in namespace ${node.namespace})`,
    consistency: STOPPED_WHILE_COPIED,
    async take(reason, onLine) {
      const name = stamped(`${names.statefulSet}-backup`);
      const manifest = backupJobManifest(node, name, await record(reason));
      await stopNode();
      try {
        await runJob(manifest, name, onLine);
      } finally {
        await scale(1);
      }
    },
    async list() {
      const name = stamped(`${names.statefulSet}-backups`);
      const log = await runJob(listJobManifest(node, name), name, () => undefined).catch((error: Error) => {
        if (/no such file|does not exist|Is there a repository/.test(error.message)) return '[]';
        throw error;
      });
      const json = log.trim().split('\n').pop() ?? '';
      try {
        return parseResticSnapshots(json);
      } catch (error) {
        const read = json === '' ? 'printed nothing' : `printed no list of backups (${(error as Error).message})`;
        throw new ToolFailure(
          `node ${node.name}: the list Job ${name} ${read}: see kubectl logs job/${name} -n ${node.namespace}`,
        );
      }
    },
    recordedEnode: () => access.recordedEnode(),
    prepareRelease: (release) => refuseUnpinnedRelease(release),
    async restore(backup, nodeKey, onLine) {
      refuseKey(nodeKey);
      const name = stamped(`${names.statefulSet}-restore`);
      await stopNode();
      try {
        await runJob(restoreJobManifest(node, name, backup.id, backup.release), name, onLine);
      } catch (error) {
        // The Job replaces the volume's contents only once restic has restored all of the backup beside them: until
        // then the data is as it was, so the node starts again on it. A Job cut while it replaced them left its
        // marker (RESTORE_UNFINISHED_MARKER), and the pod's first init container keeps Besu off that data until a
        // restore runs again.
        await scale(1);
        throw error;
      }
      await startOn(backup, onLine);
    },
  };
}

/** A cluster node's key is its Secret, never on the data volume: a key file has nothing to do. */
function refuseKey(nodeKey: string | undefined): void {
  if (nodeKey !== undefined) {
    throw new ToolFailure(
      "a cluster node's key is its Secret, which backups and restores leave as it is: no --key-file on a cluster",
    );
  }
}

/** The node's backups among VolumeSnapshots (`kubectl get -o json`), oldest first. */
export function snapshotBackups(node: string, json: string): Backup[] {
  const list = JSON.parse(json) as {
    items: { metadata: { name: string; creationTimestamp: string; annotations?: Record<string, string> } }[];
  };
  return list.items
    .map(({ metadata }) => {
      const a = metadata.annotations ?? {};
      const head = a[BACKUP_ANNOTATIONS.head];
      return {
        id: metadata.name,
        time: metadata.creationTimestamp,
        node,
        release: a[BACKUP_ANNOTATIONS.release] ?? 'unknown',
        reason: a[BACKUP_ANNOTATIONS.reason] ?? 'manual',
        ...(head && /^\d+$/.test(head) ? { head: Number(head) } : {}),
      };
    })
    .sort((x, y) => x.time.localeCompare(y.time));
}

/**
 * The short-lived pods of a move between a machine and the cluster (`npm run node -- move`): restic's image (pinned as
 * the node's backups pin it; its busybox tar and sh), Besu's user (the volumes' owner), on the node's worker, one volume
 * mounted and nothing else, no network need and no API token. Into the cluster, the fill pod has the data volume: the
 * move streams the old machine's last backup into it (`kubectl exec -i`, `tar -x`) before the node's pod first starts.
 * Out of it, the read pod has the backups volume, read-only: the move streams the restic repository out of it (`tar
 * -c`) to the new machine. Not one of the node's labels: the StatefulSet never adopts them, no Service selects them.
 */
import { BACKUP_TOOL, CLUSTER_REPOSITORY_MOUNT } from '../catalog/backups';
import { kubernetesNames, POD_PATHS } from '../catalog/kubernetes';
import { MOVE_FILL_LABEL } from '../catalog/move';
import type { KubernetesNodeSettings } from '../settings/model';
import { backupNames } from './backups';
import { BESU_POD_SECURITY, RESTRICTED_CONTAINER } from './podBasics';

/** How long a move's pod waits for the move's stream before it ends by itself (an hour). */
const MOVE_POD_SECONDS = 3600;

/** The fill pod's name. */
export function moveFillPodName(node: string): string {
  return `${kubernetesNames(node).statefulSet}-move-fill`;
}

/** The read pod's name. */
export function moveReadPodName(node: string): string {
  return `${kubernetesNames(node).statefulSet}-move-read`;
}

/** A move's pod of `node`: `claim` mounted at `mountPath` (read-only when `readOnly`). */
function movePod(node: KubernetesNodeSettings, name: string, claim: string, mountPath: string, readOnly: boolean) {
  return {
    apiVersion: 'v1' as const,
    kind: 'Pod' as const,
    metadata: { name, namespace: node.namespace, labels: { [MOVE_FILL_LABEL]: node.name } },
    spec: {
      nodeName: node.workerName,
      securityContext: BESU_POD_SECURITY,
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: MOVE_POD_SECONDS,
      containers: [
        {
          name: 'move',
          image: node.backupImageDigest ? `${BACKUP_TOOL.image}@${node.backupImageDigest}` : BACKUP_TOOL.image,
          // Ends at once when deleted (SIGTERM): a shell as the container's first process ignores it otherwise, and
          // the move's removal of its pod would wait out the grace period (30 s) each time.
          command: ['/bin/sh', '-c', `trap 'exit 0' TERM; sleep ${MOVE_POD_SECONDS} & wait`],
          volumeMounts: [{ name: 'volume', mountPath, readOnly }],
          securityContext: RESTRICTED_CONTAINER,
        },
      ],
      volumes: [{ name: 'volume', persistentVolumeClaim: { claimName: claim, readOnly } }],
    },
  };
}

/** The fill pod of `node`'s data volume. */
export function moveFillPodManifest(node: KubernetesNodeSettings) {
  const claim = kubernetesNames(node.name).dataVolume;
  return movePod(node, moveFillPodName(node.name), claim, POD_PATHS.dataDir, false);
}

/** The read pod of `node`'s backups volume (its restic repository), read-only. */
export function moveReadPodManifest(node: KubernetesNodeSettings) {
  return movePod(node, moveReadPodName(node.name), backupNames(node.name).volume, CLUSTER_REPOSITORY_MOUNT, true);
}

/** The command the read pod runs: the repository as a tar on its standard output. */
export function moveReadCommand(): string[] {
  return ['tar', '-C', CLUSTER_REPOSITORY_MOUNT, '-c', '-f', '-', '.'];
}

/**
 * The command the fill pod runs on the stream: the volume emptied but for a file system's own lost+found (a fill cut
 * part-way runs again from nothing), the tar extracted into it, then the volume synced.
 */
export function moveFillCommand(): string[] {
  const dir = POD_PATHS.dataDir;
  return [
    '/bin/sh',
    '-c',
    `find ${dir} -mindepth 1 -maxdepth 1 ! -name lost+found -exec rm -rf {} + && tar -x -f - -C ${dir} && sync`,
  ];
}

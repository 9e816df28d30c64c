/**
 * The short-lived pod that fills the data volume of a node moved into the cluster (`npm run node -- move`), before the
 * node's pod first starts: restic's image (pinned as the node's backups pin it; its busybox tar and sh), Besu's user
 * (the volume's owner), on the node's worker, the data volume mounted and nothing else. The move streams the old
 * machine's last backup into it (`kubectl exec -i`, `tar -x`); it has no network need and no API token. Not one of the
 * node's labels: the StatefulSet never adopts it, no Service selects it.
 */
import { BACKUP_TOOL } from '../catalog/backups';
import { kubernetesNames, POD_PATHS } from '../catalog/kubernetes';
import { MOVE_FILL_LABEL } from '../catalog/move';
import type { KubernetesNodeSettings } from '../settings/model';
import { BESU_POD_SECURITY, RESTRICTED_CONTAINER } from './podBasics';

/** How long the fill pod waits for the move's stream before it ends by itself (an hour). */
const FILL_POD_SECONDS = 3600;

/** The fill pod's name. */
export function moveFillPodName(node: string): string {
  return `${kubernetesNames(node).statefulSet}-move-fill`;
}

/** The fill pod of `node`'s data volume. */
export function moveFillPodManifest(node: KubernetesNodeSettings) {
  return {
    apiVersion: 'v1' as const,
    kind: 'Pod' as const,
    metadata: { name: moveFillPodName(node.name), namespace: node.namespace, labels: { [MOVE_FILL_LABEL]: node.name } },
    spec: {
      nodeName: node.workerName,
      securityContext: BESU_POD_SECURITY,
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      activeDeadlineSeconds: FILL_POD_SECONDS,
      containers: [
        {
          name: 'fill',
          image: node.backupImageDigest ? `${BACKUP_TOOL.image}@${node.backupImageDigest}` : BACKUP_TOOL.image,
          command: ['/bin/sh', '-c', `sleep ${FILL_POD_SECONDS}`],
          volumeMounts: [{ name: 'data', mountPath: POD_PATHS.dataDir }],
          securityContext: RESTRICTED_CONTAINER,
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: kubernetesNames(node.name).dataVolume } }],
    },
  };
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

/**
 * A cluster node's backups as Kubernetes objects. With `deploy.volumeSnapshotClass`, a backup is a VolumeSnapshot of
 * the data volume and a restore a new data volume made from one; otherwise a backup is a Job that copies the data
 * volume with restic into a repository on a volume of its own (the node's pod stopped meanwhile: StatefulSet scaled
 * to 0), and a restore a Job that copies it back. A schedule is a CronJob doing the same.
 */
import {
  BACKUP_LABEL,
  BACKUP_MARK,
  BACKUP_REASONS,
  BACKUP_SCHEDULES,
  BACKUP_TAGS,
  BACKUP_TOOL,
  CLUSTER_REPOSITORY_MOUNT,
  KUBECTL_IMAGE,
  RESTORE_UNFINISHED_MARKER,
} from '../catalog/backups';
import { kubernetesNames, POD_PATHS } from '../catalog/kubernetes';
import { readScript } from '../scripts';
import type { KubernetesNodeSettings } from '../settings/model';
import { BESU_POD_SECURITY, metadata, nodeSecret, nodeVolumeClaim, RESTRICTED_CONTAINER } from './podBasics';

/** The snapshot API (the external-snapshotter's CRDs). */
export const SNAPSHOT_API = { group: 'snapshot.storage.k8s.io', version: 'snapshot.storage.k8s.io/v1' } as const;

/** The labels and annotations a backup object carries: whose it is (BACKUP_LABEL), and what it holds. */
export { BACKUP_LABEL };
export const BACKUP_ANNOTATIONS = {
  release: 'lacchain.net/backup-release',
  head: 'lacchain.net/backup-head',
  reason: 'lacchain.net/backup-reason',
} as const;

/** The restic scripts the Jobs and the pod run, under scripts/. */
const BACKUP_JOB_SCRIPT = 'kubernetes/restic-backup.sh';
const RESTORE_JOB_SCRIPT = 'kubernetes/restic-restore.sh';
const BEFORE_CHANGE_SCRIPT = 'kubernetes/backup-before-release-change.sh';

/** The file on the data volume naming the release that last opened it (the pod's first init container writes it). */
export const RELEASE_MARKER = '.lacchain-release';

/** The node ConfigMap's entries of the backup before a release change: its script and the backup script it runs. */
export function backupConfigEntries(): Record<string, string> {
  return {
    [BEFORE_CHANGE_SCRIPT.split('/')[1]]: readScript(BEFORE_CHANGE_SCRIPT),
    [BACKUP_JOB_SCRIPT.split('/')[1]]: readScript(BACKUP_JOB_SCRIPT),
  };
}

/**
 * The node pod's first init container: before Besu opens its data, a backup of it when the release changed (restic,
 * to the backup volume), and the release recorded on the volume. Its volumes are the pod's `data` and `config` and
 * these.
 */
export function beforeReleaseChangeInit(node: KubernetesNodeSettings, configDir: string) {
  // The release first: a release bump's diff reads `initContainers[0].env[0].value`.
  const env = {
    RELEASE: node.releaseVersion,
    ...retentionEnv(node),
    MARKER: RELEASE_MARKER,
    BEFORE_CHANGE: String(node.backups.beforeReleaseChange),
    TAG_NODE: BACKUP_TAGS.node,
    TAG_RELEASE: BACKUP_TAGS.release,
    TAG_REASON: BACKUP_TAGS.reason,
    REASON: BACKUP_REASONS.beforeReleaseChange,
    BACKUP_SCRIPT: `${configDir}/${BACKUP_JOB_SCRIPT.split('/')[1]}`,
    RESTORE_MARKER: RESTORE_UNFINISHED_MARKER,
  };
  const command = ['/bin/sh', `${configDir}/${BEFORE_CHANGE_SCRIPT.split('/')[1]}`];
  const container = resticContainer(node, 'backup-before-release-change', { command }, env, false);
  return {
    container: {
      ...container,
      volumeMounts: [...container.volumeMounts, { name: 'config', mountPath: configDir, readOnly: true }],
    },
    volumes: backupVolumes(node),
  };
}

/** The names of a node's backup objects. */
export function backupNames(node: string) {
  const base = `${kubernetesNames(node).statefulSet}-backup`;
  return {
    /** The restic repository's volume (no snapshot class). */
    volume: `${base}s`,
    /** The repository's settings and password. */
    secret: base,
    /** The schedule, and the account and rights its pod has. */
    cronJob: base,
    account: base,
    /** The snapshot a schedule run makes: a name made by the API server from this prefix. */
    snapshotPrefix: `${base}-`,
  };
}

/** True when the node's backups are VolumeSnapshots. */
export function usesSnapshots(node: KubernetesNodeSettings): boolean {
  return node.volumeSnapshotClass !== undefined;
}

/** An image pinned by its digest when one is given. */
function pinned(image: string, digest?: string): string {
  return digest ? `${image}@${digest}` : image;
}

/** The repository's volume: the data volume's size and class. */
export function backupVolumeManifest(node: KubernetesNodeSettings) {
  return nodeVolumeClaim(node, backupNames(node.name).volume);
}

/** The repository's settings and password (a secret). */
export function backupSecretManifest<V>(node: KubernetesNodeSettings, password: V) {
  return nodeSecret(node, backupNames(node.name).secret, {
    RESTIC_REPOSITORY: CLUSTER_REPOSITORY_MOUNT,
    RESTIC_PASSWORD: password,
  });
}

/** What a backup holds, as tags (restic) or annotations (a snapshot). */
export interface BackupRecord {
  release: string;
  head?: number;
  reason: string;
}

/** The pod settings of every backup pod: Besu's user (the data volume's owner), on the node's worker (one-node volume). */
function podSpec(node: KubernetesNodeSettings) {
  return {
    nodeName: node.workerName,
    securityContext: BESU_POD_SECURITY,
    restartPolicy: 'Never',
  };
}

/** The restic container of a backup or restore: the repository's Secret, a cache, the data and repository volumes. */
function resticContainer(
  node: KubernetesNodeSettings,
  name: string,
  run: { script: string } | { args: string[] } | { command: string[] },
  env: Record<string, string>,
  dataReadOnly: boolean,
) {
  return {
    name,
    image: pinned(BACKUP_TOOL.image, node.backupImageDigest),
    // A script file under scripts/, restic's own arguments, or a command.
    ...('script' in run ? { command: ['/bin/sh', '-c', readScript(run.script)] } : run),
    env: [
      ...Object.entries({ ...env, RESTIC_CACHE_DIR: '/cache', DATA_DIR: POD_PATHS.dataDir, NODE_NAME: node.name }).map(
        ([n, value]) => ({ name: n, value }),
      ),
    ],
    envFrom: [{ secretRef: { name: backupNames(node.name).secret } }],
    volumeMounts: [
      { name: 'data', mountPath: POD_PATHS.dataDir, readOnly: dataReadOnly },
      { name: 'backup-repository', mountPath: CLUSTER_REPOSITORY_MOUNT },
      { name: 'backup-cache', mountPath: '/cache' },
      { name: 'backup-tmp', mountPath: '/tmp' },
    ],
    securityContext: RESTRICTED_CONTAINER,
  };
}

/** The volumes of restic's container besides the data volume. */
function backupVolumes(node: KubernetesNodeSettings) {
  return [
    { name: 'backup-repository', persistentVolumeClaim: { claimName: backupNames(node.name).volume } },
    { name: 'backup-cache', emptyDir: {} },
    { name: 'backup-tmp', emptyDir: {} },
  ];
}

function resticVolumes(node: KubernetesNodeSettings) {
  return [
    { name: 'data', persistentVolumeClaim: { claimName: kubernetesNames(node.name).dataVolume } },
    ...backupVolumes(node),
  ];
}

/** restic's tags of a backup. */
function resticTags(node: KubernetesNodeSettings, record: BackupRecord): string {
  return [
    BACKUP_MARK,
    `${BACKUP_TAGS.node}=${node.name}`,
    `${BACKUP_TAGS.release}=${record.release}`,
    `${BACKUP_TAGS.reason}=${record.reason}`,
    ...(record.head !== undefined ? [`${BACKUP_TAGS.head}=${record.head}`] : []),
  ].join(',');
}

/** What the backup script keeps after a backup: the newest, and every one taken before a release change. */
function retentionEnv(node: KubernetesNodeSettings): Record<string, string> {
  return {
    KEEP: String(node.backups.keep),
    KEEP_TAG: `${BACKUP_TAGS.reason}=${BACKUP_REASONS.beforeReleaseChange}`,
    MARK: BACKUP_MARK,
  };
}

/** The environment of the backup script. */
function backupEnv(node: KubernetesNodeSettings, record: BackupRecord): Record<string, string> {
  return { TAGS: resticTags(node, record), ...retentionEnv(node) };
}

/** A Job of the node's backups: one restic container on the node's worker, with the data and repository volumes. */
function resticJob(
  node: KubernetesNodeSettings,
  name: string,
  container: ReturnType<typeof resticContainer>,
  keptSeconds: number,
) {
  const meta = metadata(node, name);
  return {
    apiVersion: 'batch/v1' as const,
    kind: 'Job' as const,
    metadata: { ...meta, labels: { ...meta.labels, [BACKUP_LABEL]: node.name } },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: keptSeconds,
      template: {
        spec: {
          ...podSpec(node),
          automountServiceAccountToken: false,
          containers: [container],
          volumes: resticVolumes(node),
        },
      },
    },
  };
}

/** How long a finished backup or restore Job stays to be read (a day), and a list's (an hour). */
const JOB_KEPT_SECONDS = 86400;
const LIST_JOB_KEPT_SECONDS = 3600;

/** A Job that copies the data volume into the repository (node stopped): `npm run node -- backup`'s. */
export function backupJobManifest(node: KubernetesNodeSettings, name: string, record: BackupRecord) {
  const container = resticContainer(node, 'backup', { script: BACKUP_JOB_SCRIPT }, backupEnv(node, record), true);
  return resticJob(node, name, container, JOB_KEPT_SECONDS);
}

/** A Job that prints the node's backups (restic's JSON): `npm run node -- backups` reads its log. */
export function listJobManifest(node: KubernetesNodeSettings, name: string) {
  const args = ['snapshots', '--json', '--no-lock', '--host', node.name, '--tag', BACKUP_MARK];
  return resticJob(node, name, resticContainer(node, 'list', { args }, {}, true), LIST_JOB_KEPT_SECONDS);
}

/** A Job that copies a backup back onto the data volume (node stopped): `restore`'s and `rollback`'s. */
export function restoreJobManifest(node: KubernetesNodeSettings, name: string, snapshot: string, release: string) {
  const env = {
    SNAPSHOT: snapshot,
    RELEASE: release,
    TAG_NODE: BACKUP_TAGS.node,
    TAG_RELEASE: BACKUP_TAGS.release,
    RESTORE_MARKER: RESTORE_UNFINISHED_MARKER,
  };
  const container = resticContainer(node, 'restore', { script: RESTORE_JOB_SCRIPT }, env, false);
  return resticJob(node, name, container, JOB_KEPT_SECONDS);
}

/** The annotations of a snapshot: what it holds. */
function recordAnnotations(record: BackupRecord): Record<string, string> {
  return {
    [BACKUP_ANNOTATIONS.release]: record.release,
    [BACKUP_ANNOTATIONS.reason]: record.reason,
    ...(record.head !== undefined ? { [BACKUP_ANNOTATIONS.head]: String(record.head) } : {}),
  };
}

/** A VolumeSnapshot of the data volume (with a snapshot class), named, or named by the API server from a prefix. */
export function volumeSnapshotManifest(
  node: KubernetesNodeSettings,
  name: { name: string } | { generateName: string },
  record: BackupRecord,
) {
  const base = metadata(node, 'name' in name ? name.name : '');
  const { name: _unused, ...rest } = base;
  void _unused;
  return {
    apiVersion: SNAPSHOT_API.version,
    kind: 'VolumeSnapshot' as const,
    metadata: {
      ...rest,
      ...name,
      labels: { ...base.labels, [BACKUP_LABEL]: node.name },
      annotations: { ...(base.annotations ?? {}), ...recordAnnotations(record) },
    },
    spec: {
      volumeSnapshotClassName: node.volumeSnapshotClass,
      source: { persistentVolumeClaimName: kubernetesNames(node.name).dataVolume },
    },
  };
}

/** The data volume made again from a snapshot: what a restore puts in place of the old one. */
export function restoredDataVolumeManifest(node: KubernetesNodeSettings, snapshot: string) {
  return nodeVolumeClaim(node, kubernetesNames(node.name).dataVolume, {
    apiGroup: SNAPSHOT_API.group,
    kind: 'VolumeSnapshot',
    name: snapshot,
  });
}

/**
 * What the schedule's pod may do, and nothing more: read the node's own StatefulSet and set its number of replicas
 * through its `scale` subresource (what `kubectl scale` asks for: a get of the StatefulSet, a patch of its scale; a
 * patch of the StatefulSet itself, which could change its pod and images, is not given), see the node's pod go
 * (`kubectl wait --for=delete`: get, and list and watch by its name), and (with a snapshot class) make VolumeSnapshots
 * (RBAC cannot name an object yet to be made).
 */
export function backupAccessManifests(node: KubernetesNodeSettings) {
  const names = backupNames(node.name);
  const objects = kubernetesNames(node.name);
  const rules = usesSnapshots(node)
    ? [{ apiGroups: [SNAPSHOT_API.group], resources: ['volumesnapshots'], verbs: ['create'] }]
    : [
        { apiGroups: ['apps'], resources: ['statefulsets'], resourceNames: [objects.statefulSet], verbs: ['get'] },
        {
          apiGroups: ['apps'],
          resources: ['statefulsets/scale'],
          resourceNames: [objects.statefulSet],
          verbs: ['patch'],
        },
        { apiGroups: [''], resources: ['pods'], resourceNames: [objects.pod], verbs: ['get', 'list', 'watch'] },
      ];
  return {
    serviceAccount: {
      apiVersion: 'v1' as const,
      kind: 'ServiceAccount' as const,
      metadata: metadata(node, names.account),
      automountServiceAccountToken: false,
    },
    role: {
      apiVersion: 'rbac.authorization.k8s.io/v1' as const,
      kind: 'Role' as const,
      metadata: metadata(node, names.account),
      rules,
    },
    roleBinding: {
      apiVersion: 'rbac.authorization.k8s.io/v1' as const,
      kind: 'RoleBinding' as const,
      metadata: metadata(node, names.account),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.account },
      subjects: [{ kind: 'ServiceAccount', name: names.account, namespace: node.namespace }],
    },
  };
}

/**
 * The schedule's account's token, as the API server's own admission would mount it (a token it rotates, the cluster's
 * CA, the namespace), but as a volume of the pod that only the kubectl steps mount: restic's containers never see it.
 */
const ACCOUNT_TOKEN_VOLUME = {
  name: 'kube-api-access',
  projected: {
    defaultMode: 0o444,
    sources: [
      { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      {
        downwardAPI: {
          items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
        },
      },
    ],
  },
};
/** Where kubectl's in-cluster configuration reads the token, the CA and the namespace. */
const ACCOUNT_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A kubectl step of the schedule's pod: the only containers with the account's token. */
function kubectlStep(node: KubernetesNodeSettings, name: string, args: string[]) {
  return {
    name,
    image: pinned(KUBECTL_IMAGE, node.kubectlImageDigest),
    args: [...args, '-n', node.namespace],
    volumeMounts: [{ name: ACCOUNT_TOKEN_VOLUME.name, mountPath: ACCOUNT_TOKEN_PATH, readOnly: true }],
    securityContext: RESTRICTED_CONTAINER,
  };
}

/** A container with one more volume mounted. */
function withMount<C extends { volumeMounts: object[] }>(container: C, mount: object): C {
  return { ...container, volumeMounts: [...container.volumeMounts, mount] };
}

/** How many times a scheduled run's pod killed part-way is replaced by a new one. */
const SCHEDULED_RUN_RETRIES = 2;

/** Where the schedule's pod keeps the backup's exit status between its steps. */
const STATUS_DIR = '/status';
/** Where the schedule's pod finds the snapshot it makes (a ConfigMap's entry). */
const MANIFESTS_DIR = '/manifests';
const SNAPSHOT_ENTRY = 'snapshot.json';

/** The snapshot a schedule run makes, named by the API server (a snapshot class only). */
export function backupScheduleConfigMapManifest(node: KubernetesNodeSettings) {
  const record = { release: node.releaseVersion, reason: BACKUP_REASONS.scheduled };
  return {
    apiVersion: 'v1' as const,
    kind: 'ConfigMap' as const,
    metadata: metadata(node, backupNames(node.name).cronJob),
    data: {
      [SNAPSHOT_ENTRY]: JSON.stringify(
        volumeSnapshotManifest(node, { generateName: backupNames(node.name).snapshotPrefix }, record),
      ),
    },
  };
}

/**
 * The schedule, a CronJob. With a snapshot class its pod makes a VolumeSnapshot of the running node's volume (a
 * snapshot is cut at one instant: the database is as after a power cut, which it recovers from). Otherwise its pod,
 * in order (init containers), stops the node, waits for its pod to go and copies the volume with restic (never
 * failing there), then starts the node again and reports the copy's status (its containers).
 */
export function backupCronJobManifest(node: KubernetesNodeSettings) {
  const schedule = BACKUP_SCHEDULES[node.backups.schedule];
  if (!schedule) throw new Error(`node ${node.name}: no backup schedule`);
  const names = kubernetesNames(node.name);
  const statefulSet = `statefulset/${names.statefulSet}`;
  const record = { release: node.releaseVersion, reason: BACKUP_REASONS.scheduled };
  const backup = resticContainer(
    node,
    'backup',
    { script: BACKUP_JOB_SCRIPT },
    { ...backupEnv(node, record), STATUS_FILE: `${STATUS_DIR}/backup` },
    true,
  );
  const statusMount = { name: 'status', mountPath: STATUS_DIR };
  const pod = usesSnapshots(node)
    ? {
        containers: [
          withMount(kubectlStep(node, 'snapshot', ['create', '-f', `${MANIFESTS_DIR}/${SNAPSHOT_ENTRY}`]), {
            name: 'manifests',
            mountPath: MANIFESTS_DIR,
            readOnly: true,
          }),
        ],
        volumes: [{ name: 'manifests', configMap: { name: backupNames(node.name).cronJob } }, ACCOUNT_TOKEN_VOLUME],
      }
    : {
        initContainers: [
          kubectlStep(node, 'stop-node', ['scale', statefulSet, '--replicas=0']),
          kubectlStep(node, 'node-stopped', ['wait', '--for=delete', `pod/${names.pod}`, '--timeout=60m']),
          withMount(backup, statusMount),
        ],
        containers: [
          kubectlStep(node, 'start-node', ['scale', statefulSet, '--replicas=1']),
          {
            name: 'report',
            image: backup.image,
            command: ['/bin/sh', '-c', `exit "$(cat ${STATUS_DIR}/backup)"`],
            volumeMounts: [statusMount],
            securityContext: RESTRICTED_CONTAINER,
          },
        ],
        volumes: [...resticVolumes(node), { name: 'status', emptyDir: {} }, ACCOUNT_TOKEN_VOLUME],
      };
  return {
    apiVersion: 'batch/v1' as const,
    kind: 'CronJob' as const,
    metadata: metadata(node, backupNames(node.name).cronJob),
    spec: {
      schedule: schedule.cron,
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        spec: {
          ...(usesSnapshots(node)
            ? { backoffLimit: 0 }
            : {
                // A pod killed part-way (its worker restarted, the pod evicted) may have stopped the node and not
                // started it again: a new pod runs the steps again, starting it. A copy that failed is not retried
                // (its report says so, and the node was started before it).
                backoffLimit: SCHEDULED_RUN_RETRIES,
                podFailurePolicy: {
                  rules: [
                    { action: 'FailJob', onExitCodes: { containerName: 'report', operator: 'NotIn', values: [0] } },
                  ],
                },
              }),
          template: {
            metadata: { labels: { [BACKUP_LABEL]: node.name } },
            spec: {
              ...podSpec(node),
              serviceAccountName: backupNames(node.name).account,
              // The token goes to the kubectl steps only (ACCOUNT_TOKEN_VOLUME), not to every container.
              automountServiceAccountToken: false,
              ...pod,
            },
          },
        },
      },
    },
  };
}

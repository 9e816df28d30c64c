/**
 * The program's project name and every resource type it may declare: the recording engine refuses any other.
 */
export const PROJECT_NAME = 'lacchain-besu-node';

/** Type-token prefixes of the resources program.ts declares. */
export const PROGRAM_RESOURCE_TYPES = [
  'lacchain:index:',
  'random:index/randomBytes:RandomBytes',
  'pulumi:providers:kubernetes',
  'kubernetes:core/v1:Namespace',
  'kubernetes:core/v1:Secret',
  'kubernetes:core/v1:ConfigMap',
  'kubernetes:core/v1:PersistentVolumeClaim',
  'kubernetes:core/v1:Service',
  'kubernetes:apps/v1:StatefulSet',
  'kubernetes:networking.k8s.io/v1:NetworkPolicy',
  'kubernetes:core/v1:ServiceAccount',
  'kubernetes:rbac.authorization.k8s.io/v1:Role',
  'kubernetes:rbac.authorization.k8s.io/v1:RoleBinding',
  'kubernetes:batch/v1:CronJob',
  'kubernetes:monitoring.coreos.com/v1:ServiceMonitor',
  'kubernetes:monitoring.coreos.com/v1:PrometheusRule',
  'pulumi:providers:command',
  'command:remote:',
  // index.ts reads the stack's last outputs (components/lastPlaces.ts).
  'pulumi:pulumi:StackReference',
] as const;

/**
 * What every object of a node shares, below the files that make them (manifests.ts, backups.ts, monitoring.ts,
 * networkPolicy.ts), which import it and never each other for it: the node's labels and metadata, the labels that
 * select its pod, the pod's and a container's security settings, and a volume of the node.
 */
import { BESU_IMAGE_UID } from '../catalog/besu';
import { LABEL_KEYS, LABELS } from '../catalog/kubernetes';
import { UNSAFE_RPC_OVERRIDE_ANNOTATION, UNSAFE_RPC_OVERRIDE_LABEL } from '../catalog/rpc';
import { unsafeRpcOverride } from '../rpc/access';
import type { KubernetesNodeSettings } from '../settings/model';

/**
 * The recommended Kubernetes labels of a node's objects. A node under the operator's explicit RPC override
 * (`lacchain:rpc.allowUnsafeApis`) also carries `lacchain.net/unsafe-rpc-override: "true"`, for the policy to flag.
 */
export function nodeLabels(node: KubernetesNodeSettings): Record<string, string> {
  return {
    [LABEL_KEYS.name]: LABELS.name,
    [LABEL_KEYS.instance]: node.name,
    'app.kubernetes.io/component': node.typenode,
    [LABEL_KEYS.partOf]: LABELS.partOf,
    'app.kubernetes.io/managed-by': LABELS.managedBy,
    'lacchain.net/network': node.network.name,
    ...(unsafeRpcOverride(node, node.rpc).length > 0 ? { [UNSAFE_RPC_OVERRIDE_LABEL]: 'true' } : {}),
  };
}

/** What the override covers (`ADMIN,cors:*`), annotated on the node's objects; none without an override. */
export function overrideAnnotations(node: KubernetesNodeSettings): Record<string, string> {
  const unsafe = unsafeRpcOverride(node, node.rpc);
  return unsafe.length > 0 ? { [UNSAFE_RPC_OVERRIDE_ANNOTATION]: unsafe.join(',') } : {};
}

/** The labels that select the node's pod (stable across versions). */
export function selectorLabels(node: KubernetesNodeSettings): Record<string, string> {
  return { [LABEL_KEYS.name]: LABELS.name, [LABEL_KEYS.instance]: node.name };
}

/** The metadata of a node's object: its name, the node's namespace and labels, and the override's annotations. */
export function metadata(node: KubernetesNodeSettings, name: string) {
  const annotations = overrideAnnotations(node);
  return {
    name,
    namespace: node.namespace,
    labels: nodeLabels(node),
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
  };
}

/** A node's Secret (Opaque): its files or variables by name, as plain strings the API server encodes. */
export function nodeSecret<D>(node: KubernetesNodeSettings, name: string, stringData: D) {
  return {
    apiVersion: 'v1' as const,
    kind: 'Secret' as const,
    metadata: metadata(node, name),
    type: 'Opaque',
    stringData,
  };
}

/** A pod that runs as Besu's image user (the data volume's owner) under the restricted Pod Security Standard. */
export const BESU_POD_SECURITY = {
  runAsUser: BESU_IMAGE_UID,
  runAsGroup: BESU_IMAGE_UID,
  fsGroup: BESU_IMAGE_UID,
  runAsNonRoot: true,
  seccompProfile: { type: 'RuntimeDefault' },
};

/** A container under the restricted Pod Security Standard, on a read-only root filesystem. */
export const RESTRICTED_CONTAINER = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/**
 * A volume of the node (its data, its backups): ReadWriteOnce, the node's size and storage class; made from a
 * `dataSource` (a VolumeSnapshot) when one is given.
 */
export function nodeVolumeClaim(
  node: KubernetesNodeSettings,
  name: string,
  dataSource?: { apiGroup: string; kind: string; name: string },
) {
  return {
    apiVersion: 'v1' as const,
    kind: 'PersistentVolumeClaim' as const,
    metadata: metadata(node, name),
    spec: {
      accessModes: ['ReadWriteOnce'],
      ...(node.storageClass ? { storageClassName: node.storageClass } : {}),
      resources: { requests: { storage: node.volumeSize } },
      ...(dataSource ? { dataSource } : {}),
    },
  };
}

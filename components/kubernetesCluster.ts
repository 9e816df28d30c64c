/**
 * The cluster of a stack's Kubernetes nodes: its provider (the kubeconfig context) and one Namespace per namespace
 * used. program.ts loads this file, and with it @pulumi/kubernetes, only for a stack with Kubernetes nodes.
 */
import * as k8s from '@pulumi/kubernetes';
import { namespaceManifest } from '../core/kubernetes/manifests';
import type { KubernetesNodeSettings } from '../core/settings/model';

/** @public (program.ts loads this file with require) */
export { KubernetesNode } from './kubernetesNode';

/** The provider and the declared namespaces, by name. */
export interface Cluster {
  provider: k8s.Provider;
  namespaces: Record<string, k8s.core.v1.Namespace>;
}

/**
 * Declares the provider of the cluster in `context` (the current one when absent) and the nodes' namespaces.
 * @public (program.ts loads this file with require)
 */
export function declareCluster(context: string | undefined, nodes: KubernetesNodeSettings[]): Cluster {
  // A Secret whose data changes is patched, not replaced: replacing one deletes it, and the provider then watches
  // every Secret of the namespace until the deletion is seen, the operator's key Secret (keyCustody secret) included.
  // A node's ConfigMap is immutable and named by its content (core/kubernetes/configCheck.ts): a change of its files
  // is a new name, so a replacement, made before the old one is deleted; enableConfigMapMutable keeps a change of its
  // labels or annotations alone a patch (the provider replaces ConfigMaps by default).
  const provider = new k8s.Provider('cluster', { context, enableSecretMutable: true, enableConfigMapMutable: true });
  const namespaces: Record<string, k8s.core.v1.Namespace> = {};
  for (const name of new Set(nodes.map((n) => n.namespace))) {
    // Created if absent (server-side apply adopts an existing one) and never deleted by this program: deleting a
    // namespace would delete the key Secrets and data volumes kept inside it.
    namespaces[name] = new k8s.core.v1.Namespace(`namespace-${name}`, namespaceManifest(name), {
      provider,
      retainOnDelete: true,
    });
  }
  return { provider, namespaces };
}

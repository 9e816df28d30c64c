/**
 * Where a cluster node's pod takes its key from: the program's own key Secret (key custody `stack`), or the
 * operator's (custody `secret`: named in the settings, never created or read by the program).
 */
import { kubernetesNames, POD_FILES } from '../catalog/kubernetes';
import type { KubernetesNodeSettings } from '../settings/model';

/** The Secret and entry holding the node key, and whether that Secret is the operator's. */
export function nodeKeySecret(node: KubernetesNodeSettings): { name: string; entry: string; operators: boolean } {
  if (node.keyCustody === 'secret' && node.keySecret) return { ...node.keySecret, operators: true };
  return { name: kubernetesNames(node.name).keySecret, entry: POD_FILES.key, operators: false };
}

/**
 * Volumes for the claims of a cluster whose workers are real (testing/cluster/kubelet.ts): a `local` PersistentVolume
 * per claim, a folder of the worker's own, bound to that claim (its `claimRef`) and to that worker (its node
 * affinity), of the cluster's default StorageClass (LOCAL_STORAGE_CLASS). The kubelet gives the pod's fsGroup the
 * folder, as a cloud disk's would be.
 */
import * as fs from 'fs';
import * as path from 'path';
import { LOCAL_STORAGE_CLASS, TestCluster } from './cluster';
import type { KubeletWorker } from './kubelet';
import type { Manifest } from './manifests';

/**
 * Makes a volume on `worker` for each PersistentVolumeClaim among `manifests` (`beforeBinding` given each claim's name
 * and new folder before the volume is made); returns the folders by claim name.
 */
export async function localVolumesFor(
  cluster: TestCluster,
  worker: KubeletWorker,
  manifests: Manifest[],
  beforeBinding: (claim: string, folder: string) => void = () => undefined,
): Promise<Record<string, string>> {
  const folders: Record<string, string> = {};
  const volumes = manifests
    .filter((m) => m.kind === 'PersistentVolumeClaim')
    .map((claim) => {
      const { name, namespace } = claim.metadata as { name: string; namespace: string };
      const folder = path.join(worker.volumesDir, `${namespace}-${name}`);
      fs.mkdirSync(folder, { recursive: true });
      folders[name] = folder;
      beforeBinding(name, folder);
      return {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: `${namespace}-${name}` },
        spec: {
          capacity: { storage: claim.spec.resources.requests.storage },
          accessModes: claim.spec.accessModes,
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: LOCAL_STORAGE_CLASS,
          claimRef: { namespace, name },
          local: { path: folder },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [worker.name] }] },
              ],
            },
          },
        },
      };
    });
  if (volumes.length > 0) {
    await cluster.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: volumes }));
  }
  return folders;
}

/**
 * What a cloud gives a cluster of real workers (kubelet.ts: no kwok, whose stages play it in the kwok tier) while
 * Pulumi's engine deploys to it and its provider waits for each object to be ready: a LoadBalancer Service gets the
 * static IP it asks for (spec.loadBalancerIP) as its ingress, as a cloud load balancer or MetalLB would give it, and
 * each new PersistentVolumeClaim a local volume of the worker bound to it (localVolumes.ts), as a provisioner would
 * make one. It asks the API server every POLL_MS until stopped.
 */
import { TestCluster } from './cluster';
import type { KubeletWorker } from './kubelet';
import { localVolumesFor } from './localVolumes';
import type { Manifest } from './manifests';

/** How often the stand-in looks for Services and claims to serve. */
const POLL_MS = 1_000;

/** A running cloud stand-in. */
export interface CloudStandin {
  /** The folders of the volumes made so far, by claim name. */
  volumes(): Record<string, string>;
  /** Stops it; returns what it could not do (each failed request's error), none when all went well. */
  stop(): Promise<string[]>;
}

/** Whether `service` is a LoadBalancer Service waiting for its static IP. */
const waitsForIngress = (service: Manifest) =>
  service.spec.type === 'LoadBalancer' && service.spec.loadBalancerIP && !service.status?.loadBalancer?.ingress;

/**
 * Starts serving `cluster`'s Services and claims, volumes on `worker`; `beforeBinding` is given each claim's name and
 * new folder before its volume is made (what a test puts there is there before any pod mounts it).
 */
export function startCloudStandin(
  cluster: TestCluster,
  worker: KubeletWorker,
  beforeBinding: (claim: string, folder: string) => void,
): CloudStandin {
  const folders: Record<string, string> = {};
  const errors: string[] = [];
  let stopped = false;

  async function serve() {
    const listed = await cluster.kubectlOk(['get', 'services,persistentvolumeclaims', '-A', '-o', 'json']);
    const items = (JSON.parse(listed) as { items: Manifest[] }).items;
    for (const service of items.filter((item) => item.kind === 'Service' && waitsForIngress(item))) {
      const status = { loadBalancer: { ingress: [{ ip: service.spec.loadBalancerIP, ipMode: 'VIP' }] } };
      await cluster.kubectlOk([
        'patch',
        'service',
        service.metadata.name,
        '-n',
        service.metadata.namespace!,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status }),
      ]);
    }
    const claims = items.filter(
      (item) => item.kind === 'PersistentVolumeClaim' && !item.spec.volumeName && !folders[item.metadata.name],
    );
    Object.assign(folders, await localVolumesFor(cluster, worker, claims, beforeBinding));
  }

  const loop = (async () => {
    while (!stopped) {
      await serve().catch((error: Error) => errors.push(error.message));
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();

  return {
    volumes: () => ({ ...folders }),
    stop: async () => {
      stopped = true;
      await loop;
      return errors;
    },
  };
}

/**
 * What a cloud gives a cluster of real workers (kubelet.ts: no kwok, whose stages play it in the kwok tier) while
 * Pulumi's engine deploys to it and its provider waits for each object to be ready: a LoadBalancer Service gets the
 * static IP it asks for (spec.loadBalancerIP) as its ingress, as a cloud load balancer or MetalLB would give it (or
 * what a test makes the cloud answer: another IP, a DNS name: `answer`, `giveIngress`), and
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

/** One entry of a Service's status.loadBalancer.ingress, as a cloud writes it. */
export interface IngressEntry {
  ip?: string;
  hostname?: string;
  ipMode?: string;
}

/** What the cloud gives a LoadBalancer Service: none (undefined) leaves it waiting. */
export type IngressAnswer = (service: Manifest) => IngressEntry[] | undefined;

/** As a cloud load balancer or MetalLB gives it: the static IP the Service asks for (spec.loadBalancerIP). */
export const STATIC_IP: IngressAnswer = (service) =>
  service.spec.loadBalancerIP ? [{ ip: service.spec.loadBalancerIP, ipMode: 'VIP' }] : undefined;

/** No address from this stand-in: the cluster's own load balancer (MetalLB on a real worker, metallb.ts) gives it. */
export const NO_INGRESS: IngressAnswer = () => undefined;

/** Whether `service` is a LoadBalancer Service still without an address. */
const waitsForIngress = (service: Manifest) =>
  service.spec.type === 'LoadBalancer' && !service.status?.loadBalancer?.ingress;

/** Writes what the cloud gives `service` (its namespace and name) into its status, as a load balancer controller does. */
export async function giveIngress(cluster: TestCluster, service: Manifest, ingress: IngressEntry[]): Promise<void> {
  const status = { loadBalancer: { ingress } };
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

/**
 * Starts serving `cluster`'s Services and claims: each LoadBalancer Service gets what `answer` gives it (by default
 * its static IP); with a `worker`, each new claim a volume there, `beforeBinding` given each claim's name and new
 * folder before its volume is made (what a test puts there is there before any pod mounts it).
 */
export function startCloudStandin(
  cluster: TestCluster,
  worker: KubeletWorker | undefined,
  beforeBinding: (claim: string, folder: string) => void = () => undefined,
  answer: IngressAnswer = STATIC_IP,
): CloudStandin {
  const folders: Record<string, string> = {};
  const errors: string[] = [];
  let stopped = false;

  async function serve() {
    const listed = await cluster.kubectlOk(['get', 'services,persistentvolumeclaims', '-A', '-o', 'json']);
    const items = (JSON.parse(listed) as { items: Manifest[] }).items;
    for (const service of items.filter((item) => item.kind === 'Service' && waitsForIngress(item))) {
      const ingress = answer(service);
      if (ingress) await giveIngress(cluster, service, ingress);
    }
    if (!worker) return;
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

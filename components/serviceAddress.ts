/**
 * The check after `pulumi up` that the node's LoadBalancer Service is on the enode's IP (issue 65): the Service's
 * `status.loadBalancer.ingress`, which the Kubernetes provider waits for before it counts the Service as created, is
 * judged by core/kubernetes/loadBalancer.ts (a DNS name resolved first, on a cloud that reports one). Not the enode's
 * IP: a RunError naming the value and the setting to fix, which fails the `up`. While the status is unknown (a
 * preview of a new Service, the offline plan) nothing is checked.
 */
import * as pulumi from '@pulumi/pulumi';
import { promises as dns } from 'dns';
import { LOAD_BALANCER_DNS_WAIT, LOAD_BALANCER_FACTS } from '../core/catalog/loadBalancers';
import { ingressFailure, ingressVerdict, ServiceIngress } from '../core/kubernetes/loadBalancer';
import type { KubernetesNodeSettings } from '../core/settings/model';
import { stopRun } from './runStop';

/** The IPv4 addresses a DNS name resolves to now; none when it does not (yet). */
export async function resolveIpv4(name: string): Promise<string[]> {
  try {
    return (await dns.lookup(name, { all: true, family: 4 })).map((entry) => entry.address);
  } catch {
    return [];
  }
}

/** The status a Service reports, as far as the check reads it. */
export interface ServiceStatusLike {
  loadBalancer?: { ingress?: ServiceIngress[] };
}

/**
 * The address the cloud gave `node`'s Service, checked: its IP (or DNS name) when it is the enode's, else a RunError.
 * Undefined while the status is unknown.
 */
export async function checkedServiceAddress(
  node: KubernetesNodeSettings,
  status: ServiceStatusLike | undefined,
  resolve: (name: string) => Promise<string[]> = resolveIpv4,
  // A preview says what it finds at once.
  wait: { seconds: number; everySeconds: number } = pulumi.runtime.isDryRun()
    ? { seconds: 0, everySeconds: 0 }
    : LOAD_BALANCER_DNS_WAIT,
): Promise<string | undefined> {
  if (status === undefined) return undefined;
  const ingress = status.loadBalancer?.ingress ?? [];
  const hostnames = ingress.flatMap((entry) => (entry.hostname ? [entry.hostname] : []));
  const resolveAll = async () =>
    Object.fromEntries(await Promise.all(hostnames.map(async (name) => [name, await resolve(name)] as const)));
  let resolved = LOAD_BALANCER_FACTS[node.loadBalancer.cloud].reportsHostname ? await resolveAll() : {};
  let verdict = ingressVerdict(node, ingress, resolved);
  // A new load balancer's DNS name is published a few minutes after the Service gets it: wait while it resolves to
  // nothing. A name that resolves elsewhere is the answer.
  const deadline = Date.now() + wait.seconds * 1000;
  const unpublished = () => Object.values(resolved).every((addresses) => addresses.length === 0);
  while (!verdict.ok && Object.keys(resolved).length > 0 && unpublished() && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, wait.everySeconds * 1000));
    resolved = await resolveAll();
    verdict = ingressVerdict(node, ingress, resolved);
  }
  if (!verdict.ok) throw stopRun(ingressFailure({ name: node.name }, verdict));
  return ingress.find((entry) => entry.ip === node.p2pHost)?.ip ?? hostnames[0];
}

/**
 * What the node's LoadBalancer Service says to its cloud's load balancer (`deploy.loadBalancer.cloud`): the
 * annotations and the spec fields each cloud documents for a static IP (core/catalog/loadBalancers.ts). `other` is
 * the Service as it was before the setting: spec.loadBalancerIP and the MetalLB and Azure IP annotations.
 */
import {
  ANY_CLOUD_IP_ANNOTATIONS,
  AWS_ANNOTATION_VALUES,
  AWS_ANNOTATIONS,
  AZURE_ANNOTATIONS,
  GKE_ANNOTATION_VALUES,
  GKE_ANNOTATIONS,
  LOAD_BALANCER_FACTS,
  METALLB_ANNOTATIONS,
} from '../catalog/loadBalancers';
import type { KubernetesNodeSettings } from '../settings/model';

/** The Service's part that depends on the cloud. */
export interface LoadBalancerFields {
  annotations: Record<string, string>;
  /**
   * The requested address, for the clouds that read it: every one but aws, whose controller ignores it, and metallb,
   * which refuses it beside its annotation.
   */
  loadBalancerIP?: string;
}

/** The annotations and spec fields of `node`'s Service on its cloud. */
export function loadBalancerFields(
  node: Pick<KubernetesNodeSettings, 'publicIP' | 'loadBalancer'>,
): LoadBalancerFields {
  const { publicIP, loadBalancer } = node;
  switch (loadBalancer.cloud) {
    case 'aws':
      return {
        annotations: {
          [AWS_ANNOTATIONS.type]: AWS_ANNOTATION_VALUES.type,
          [AWS_ANNOTATIONS.targetType]: AWS_ANNOTATION_VALUES.targetType,
          [AWS_ANNOTATIONS.scheme]: AWS_ANNOTATION_VALUES.scheme,
          [AWS_ANNOTATIONS.eipAllocations]: (loadBalancer.eipAllocations ?? []).join(','),
          ...(loadBalancer.subnets ? { [AWS_ANNOTATIONS.subnets]: loadBalancer.subnets.join(',') } : {}),
          [AWS_ANNOTATIONS.targetGroupAttributes]: AWS_ANNOTATION_VALUES.targetGroupAttributes,
          [AWS_ANNOTATIONS.tcpUdpListener]: AWS_ANNOTATION_VALUES.tcpUdpListener,
        },
      };
    case 'azure':
      return {
        annotations: {
          [AZURE_ANNOTATIONS.resourceGroup]: loadBalancer.resourceGroup ?? '',
          ...(loadBalancer.publicIpName ? { [AZURE_ANNOTATIONS.publicIpName]: loadBalancer.publicIpName } : {}),
          [AZURE_ANNOTATIONS.ipv4]: publicIP,
        },
        loadBalancerIP: publicIP,
      };
    case 'gcp':
      return {
        annotations: { [GKE_ANNOTATIONS.backendServiceBased]: GKE_ANNOTATION_VALUES.backendServiceBased },
        loadBalancerIP: publicIP,
      };
    case 'metallb':
      // The annotation alone: MetalLB refuses a Service that also sets spec.loadBalancerIP ("service can not have
      // both metallb.universe.tf/loadBalancerIPs and svc.Spec.LoadBalancerIP", its controller/service.go), and gives
      // it no address.
      return {
        annotations: {
          [METALLB_ANNOTATIONS.loadBalancerIPs]: publicIP,
          ...(loadBalancer.addressPool ? { [METALLB_ANNOTATIONS.addressPool]: loadBalancer.addressPool } : {}),
        },
      };
    case 'other':
      return {
        annotations: Object.fromEntries(ANY_CLOUD_IP_ANNOTATIONS.map((annotation) => [annotation, publicIP])),
        loadBalancerIP: publicIP,
      };
  }
}

/** One entry of a Service's `status.loadBalancer.ingress`: an address or a DNS name the cloud gave it. */
export interface ServiceIngress {
  ip?: string;
  hostname?: string;
}

/** Whether the Service is on the enode's IP, in one line, and what to fix when it is not. */
export interface IngressVerdict {
  ok: boolean;
  detail: string;
  /** The setting to fix, in its file. */
  fix?: string;
}

/**
 * The address the cloud gave the node's Service (`status.loadBalancer.ingress`) against the enode's IP (`p2p.host`):
 * peers dial the enode's IP, so the Service must be on it. A DNS name counts only on a cloud whose controller
 * reports one (aws: the NLB's name), by the addresses it resolves to (`resolved`, by name; none when it did not
 * resolve). Anything else names the setting that puts the Service on that IP on the node's cloud.
 */
export function ingressVerdict(
  node: Pick<KubernetesNodeSettings, 'p2pHost' | 'loadBalancer' | 'valuesFile'>,
  ingress: readonly ServiceIngress[],
  resolved: Readonly<Record<string, readonly string[]>> = {},
): IngressVerdict {
  const enodeIp = node.p2pHost;
  const facts = LOAD_BALANCER_FACTS[node.loadBalancer.cloud];
  const fix = `${node.valuesFile}: ${facts.ipSetting}`;
  const ips = ingress.flatMap((entry) => (entry.ip ? [entry.ip] : []));
  const hostnames = ingress.flatMap((entry) => (entry.hostname ? [entry.hostname] : []));
  if (ips.includes(enodeIp)) return { ok: true, detail: `the Service is on ${enodeIp}, the enode's IP` };
  const resolving = hostnames.find((name) => (resolved[name] ?? []).includes(enodeIp));
  if (facts.reportsHostname && resolving !== undefined) {
    return { ok: true, detail: `the Service's DNS name ${resolving} resolves to ${enodeIp}, the enode's IP` };
  }
  if (ips.length === 0 && hostnames.length === 0) {
    return { ok: false, detail: `the Service has no address from the cloud yet, not the enode's IP ${enodeIp}`, fix };
  }
  if (ips.length > 0) {
    return { ok: false, detail: `the Service is on ${ips.join(', ')}, not the enode's IP ${enodeIp}`, fix };
  }
  const name = hostnames[0];
  if (!facts.reportsHostname) {
    return {
      ok: false,
      detail: `the Service has the DNS name ${name}, not the enode's IP ${enodeIp} (cloud ${node.loadBalancer.cloud})`,
      fix: `${node.valuesFile}: deploy.loadBalancer.cloud, your cluster's (aws: with eipAllocations)`,
    };
  }
  const addresses = resolved[name] ?? [];
  const to = addresses.length > 0 ? `resolves to ${addresses.join(', ')}` : 'resolves to no address';
  return { ok: false, detail: `the Service's DNS name ${name} ${to}, not the enode's IP ${enodeIp}`, fix };
}

/** A verdict that is not ok as the one line a `pulumi up` fails with. */
export function ingressFailure(node: Pick<KubernetesNodeSettings, 'name'>, verdict: IngressVerdict): string {
  return `node ${node.name}: ${verdict.detail}: fix ${verdict.fix}`;
}

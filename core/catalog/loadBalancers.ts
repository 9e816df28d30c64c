/**
 * The load balancer of a cluster node's Service, per cloud (`deploy.loadBalancer.cloud`): what each cloud reads to put
 * the Service on the node's static IP, from each provider's own documentation (the sources are in
 * docs/kubernetes.md, "A static IP on each cloud"). The one place the annotation names live.
 */

/** The clouds a values file may name; `other` is the behaviour before the setting existed. */
export const LOAD_BALANCER_CLOUDS = ['aws', 'azure', 'gcp', 'metallb', 'other'] as const;
export type LoadBalancerCloud = (typeof LOAD_BALANCER_CLOUDS)[number];
/** What a values file without `deploy.loadBalancer` gets: today's Service, unchanged. */
export const DEFAULT_LOAD_BALANCER_CLOUD: LoadBalancerCloud = 'other';

/**
 * The AWS Load Balancer Controller's Service annotations (its guide, `guide/service/annotations`; the names are its
 * `pkg/annotations/constants.go`): an NLB the controller (not the in-tree one) reconciles, internet-facing, on the
 * operator's Elastic IPs (one per subnet), targets the workers (`instance`, which keeps the client's address), with
 * TCP and UDP on one port served by one TCP_UDP listener.
 */
export const AWS_ANNOTATIONS = {
  type: 'service.beta.kubernetes.io/aws-load-balancer-type',
  targetType: 'service.beta.kubernetes.io/aws-load-balancer-nlb-target-type',
  scheme: 'service.beta.kubernetes.io/aws-load-balancer-scheme',
  eipAllocations: 'service.beta.kubernetes.io/aws-load-balancer-eip-allocations',
  subnets: 'service.beta.kubernetes.io/aws-load-balancer-subnets',
  targetGroupAttributes: 'service.beta.kubernetes.io/aws-load-balancer-target-group-attributes',
  tcpUdpListener: 'service.beta.kubernetes.io/aws-load-balancer-enable-tcp-udp-listener',
} as const;

/** The values of the AWS annotations that do not depend on the node. */
export const AWS_ANNOTATION_VALUES = {
  /** The controller reconciles the Service (`external`; the target type then follows `targetType`). */
  type: 'external',
  /** Targets the workers' node ports: the client's address is kept by default for instance targets. */
  targetType: 'instance',
  /** The controller's default is `internal`; Elastic IPs need `internet-facing`. */
  scheme: 'internet-facing',
  /** The peers' source addresses reach Besu (on-chain node permissioning checks them). */
  targetGroupAttributes: 'preserve_client_ip.enabled=true',
  tcpUdpListener: 'true',
} as const;

/**
 * cloud-provider-azure's Service annotations (its `topics/loadbalancer` page; AKS's "static public IP" guide): the
 * resource group of the public IP when it is not the cluster's node resource group, the public IP by name, or the
 * address itself (`spec.loadBalancerIP` is deprecated there in favour of the annotation).
 */
export const AZURE_ANNOTATIONS = {
  resourceGroup: 'service.beta.kubernetes.io/azure-load-balancer-resource-group',
  publicIpName: 'service.beta.kubernetes.io/azure-pip-name',
  ipv4: 'service.beta.kubernetes.io/azure-load-balancer-ipv4',
} as const;

/**
 * GKE's Service parameters: `cloud.google.com/l4-rbs: "enabled"` makes a backend service-based external passthrough
 * Network Load Balancer, the kind that serves TCP and UDP on one Service (GKE's mixed-protocol guide); the reserved
 * regional address goes in `spec.loadBalancerIP`.
 */
export const GKE_ANNOTATIONS = { backendServiceBased: 'cloud.google.com/l4-rbs' } as const;
export const GKE_ANNOTATION_VALUES = { backendServiceBased: 'enabled' } as const;

/** MetalLB's Service annotations (its usage page): the address requested, and the pool it comes from. */
export const METALLB_ANNOTATIONS = {
  loadBalancerIPs: 'metallb.universe.tf/loadBalancerIPs',
  addressPool: 'metallb.universe.tf/address-pool',
} as const;

/**
 * What `other` (and the Service before `deploy.loadBalancer`) writes: spec.loadBalancerIP and every annotation some
 * implementation reads the requested IP from, each ignored where it does not apply.
 */
export const ANY_CLOUD_IP_ANNOTATIONS = [METALLB_ANNOTATIONS.loadBalancerIPs, AZURE_ANNOTATIONS.ipv4] as const;

/** What the operator and the checks need to know of each cloud. */
export interface LoadBalancerCloudFacts {
  /** The cloud, as `npm run init` and the docs name it. */
  title: string;
  /** The start of a worker's `spec.providerID` on that cloud (`npm run init` proposes the cloud from it). */
  providerIdPrefix?: string;
  /**
   * The setting that puts the Service on the node's IP there: what a Service on another address (or a DNS name)
   * says to fix.
   */
  ipSetting: string;
  /** Whether the cloud's controller reports a DNS name in `status.loadBalancer.ingress` (then resolved to its IPs). */
  reportsHostname: boolean;
  /** Where its documentation is (docs/kubernetes.md lists every source). */
  source: string;
}

export const LOAD_BALANCER_FACTS: Record<LoadBalancerCloud, LoadBalancerCloudFacts> = {
  aws: {
    title: 'AWS (EKS, with the AWS Load Balancer Controller)',
    providerIdPrefix: 'aws://',
    ipSetting: 'deploy.loadBalancer.eipAllocations (the Elastic IP allocation of deploy.publicIP)',
    // The controller writes the NLB's DNS name, never an IP (controllers/service/service_controller.go).
    reportsHostname: true,
    source: 'https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/service/annotations/',
  },
  azure: {
    title: 'Azure (AKS)',
    providerIdPrefix: 'azure://',
    ipSetting: 'deploy.publicIP with deploy.loadBalancer.resourceGroup (and publicIpName) of that public IP',
    reportsHostname: false,
    source: 'https://cloud-provider-azure.sigs.k8s.io/topics/loadbalancer/',
  },
  gcp: {
    title: 'Google Cloud (GKE)',
    providerIdPrefix: 'gce://',
    ipSetting: "deploy.publicIP (a regional static external address reserved in the cluster's region)",
    reportsHostname: false,
    source: 'https://cloud.google.com/kubernetes-engine/docs/how-to/service-parameters',
  },
  metallb: {
    title: 'MetalLB (bare metal)',
    ipSetting: 'deploy.publicIP (an address of a MetalLB pool, deploy.loadBalancer.addressPool)',
    reportsHostname: false,
    source: 'https://metallb.universe.tf/usage/',
  },
  other: {
    title: 'another load balancer (spec.loadBalancerIP and the MetalLB and Azure IP annotations)',
    ipSetting: 'deploy.publicIP, or deploy.loadBalancer.cloud for your cloud',
    reportsHostname: false,
    source: 'https://kubernetes.io/docs/concepts/services-networking/service/#loadbalancer',
  },
};

/** The fields of `deploy.loadBalancer` each cloud reads (any other is refused there), the required one first. */
export const LOAD_BALANCER_CLOUD_FIELDS: Record<LoadBalancerCloud, { reads: readonly string[]; requires?: string }> = {
  aws: { reads: ['eipAllocations', 'subnets'], requires: 'eipAllocations' },
  azure: { reads: ['resourceGroup', 'publicIpName'], requires: 'resourceGroup' },
  gcp: { reads: [] },
  metallb: { reads: ['addressPool'] },
  other: { reads: [] },
};

/** The cloud a worker's `spec.providerID` names (`aws:///eu-west-1a/i-…`), if one of the catalog's. */
export function cloudOfProviderId(providerId: string | undefined): LoadBalancerCloud | undefined {
  if (!providerId) return undefined;
  return LOAD_BALANCER_CLOUDS.find((cloud) => {
    const prefix = LOAD_BALANCER_FACTS[cloud].providerIdPrefix;
    return prefix !== undefined && providerId.startsWith(prefix);
  });
}

/**
 * How long `pulumi up` waits for a load balancer's DNS name (aws) to resolve to the enode's IP, and how often it
 * asks: a new NLB's name takes a few minutes to be published.
 */
export const LOAD_BALANCER_DNS_WAIT = { seconds: 300, everySeconds: 10 } as const;

/**
 * The NetworkPolicy of a node's pod: only what the node's `rpc.exposure` promises may open a connection to it. The
 * decisions (which ports are reachable, who may open Besu's RPC) are the description's; this only translates them.
 *
 * What a policy does not see, and so still works whatever it says:
 * - the probes: the kubelet connects from the pod's own node, which CNI implementations generally let through;
 * - `kubectl port-forward`: the kubelet opens the port inside the pod's network namespace;
 * - the writer's proxy: it reaches Besu over localhost, inside the pod.
 * Egress is left open: Besu dials its peers and the metrics relay pushes to the network's gateway.
 */
import { kubernetesNames } from '../catalog/kubernetes';
import { PORTS } from '../catalog/ports';
import type { NodeDescription } from '../node/description';
import type { KubernetesNodeSettings } from '../settings/model';
import { metadata, selectorLabels } from './podBasics';
import { scraperIngress } from './monitoring';

type Protocol = 'TCP' | 'UDP';

/** One ingress rule: ports of the pod, from anywhere or from the pods of the node's namespace only. */
function rule(ports: { port: number; protocol: Protocol }[], from: 'anywhere' | 'namespace') {
  // An empty podSelector in `from`, without a namespaceSelector, selects every pod of the policy's own namespace.
  return { ...(from === 'namespace' ? { from: [{ podSelector: {} }] } : {}), ports };
}

/**
 * The NetworkPolicy selecting the node's pod. Its ports are the pod's (a policy sees connections after the Service's
 * translation): p2p TCP and UDP from anywhere, always (peers must reach every node); the writer's proxy (the
 * Service's 80, the container's own port) from anywhere, or from the node's namespace with exposure `internal` (its
 * in-cluster clients use the gas model too); Besu's RPC from anywhere
 * (`public`), from the node's namespace only (`internal`), or from nowhere (`tls-only`); the metrics port from the
 * Prometheus the operator names only. Anything else is refused.
 */
export function networkPolicyManifest(description: NodeDescription<KubernetesNodeSettings>) {
  const { node, reachable, rpc } = description;
  const tcp = (port: number) => ({ port, protocol: 'TCP' as Protocol });
  const ingress = [
    rule([tcp(node.p2pPort), { port: node.p2pPort, protocol: 'UDP' }], 'anywhere'),
    // The writer's proxy (the gas model): from anywhere, or from its namespace's pods with exposure internal.
    ...(description.proxyServers.length > 0
      ? [
          rule(
            description.proxyServers.map((server) => tcp(server.port)),
            reachable.proxyHttp ? 'anywhere' : 'namespace',
          ),
        ]
      : []),
    ...(rpc.clusterPeers === 'none' ? [] : [rule([tcp(PORTS.rpcHttp)], rpc.clusterPeers)]),
    // The metrics port: the Prometheus the operator names (`lacchain:monitoring.scraper`) only.
    ...scraperIngress(node),
  ];
  return {
    apiVersion: 'networking.k8s.io/v1' as const,
    kind: 'NetworkPolicy' as const,
    metadata: metadata(node, kubernetesNames(node.name).networkPolicy),
    spec: {
      podSelector: { matchLabels: selectorLabels(node) },
      policyTypes: ['Ingress'],
      ingress,
    },
  };
}

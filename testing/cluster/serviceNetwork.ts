/**
 * The test cluster's Service network (kube-apiserver's `--service-cluster-ip-range`, testing/cluster/cluster.ts) and
 * the address the API server gives the `kubernetes` Service in it: the range's first address after the network's, as
 * kube-apiserver picks it. A pod reaches the API server there (KUBERNETES_SERVICE_HOST and _PORT, which the kubelet
 * sets in every container), routed on the real worker by apiServiceRoute.ts.
 */

/** The Service network's range. */
export const SERVICE_CLUSTER_IP_RANGE = '10.96.0.0/16';

/** The `kubernetes` Service's port (kube-apiserver's default, 443). */
export const API_SERVICE_PORT = 443;

/** The `kubernetes` Service's cluster IP: the first address of the range after its network address. */
export function apiServiceIP(range: string = SERVICE_CLUSTER_IP_RANGE): string {
  const [network, bits] = range.split('/');
  const value = network.split('.').reduce((sum, octet) => sum * 256 + Number(octet), 0);
  const mask = 2 ** 32 - 2 ** (32 - Number(bits));
  const first = (value & mask) >>> 0;
  const next = first + 1;
  return [24, 16, 8, 0].map((shift) => Math.floor(next / 2 ** shift) % 256).join('.');
}

/**
 * kube-proxy on the real worker (testing/cluster/kubelet.ts), built from the control plane's module
 * (tools/kubernetes/build-kube-proxy.sh), in its nftables mode: it takes the Services' cluster IPs, node ports and load
 * balancer addresses to their pods, as on any node, with its own nftables tables (`ip kube-proxy`, `ip6 kube-proxy`),
 * which go when it stops. What a shared test machine needs of it: its health and metrics on the loopback, and the
 * conntrack settings left as they are (each of its conntrack values 0: "leave as is").
 *
 * The `kubernetes` Service is not its: the API server listens on the loopback, which no Service endpoint may be, so
 * that Service keeps the test's own route (apiServiceRoute.ts) and carries kube-proxy's `service-proxy-name` label,
 * which tells kube-proxy to leave it alone (kube-proxy serves only the Services without that label).
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { signCertificate } from './certificates';
import { ClusterProcess, startProcess, stopProcess, waitFor } from './processes';
import { NFT } from './apiServiceRoute';
import { freePort } from '../ports';

/** kube-proxy's nftables tables. */
const TABLES = [
  ['ip', 'kube-proxy'],
  ['ip6', 'kube-proxy'],
];

/** The label that makes kube-proxy leave a Service to another proxy (KEP-2447's `service.kubernetes.io/service-proxy-name`). */
export const SERVICE_PROXY_NAME_LABEL = 'service.kubernetes.io/service-proxy-name';

/** What kube-proxy needs of the worker and its cluster. */
export interface ServiceProxyJoin {
  /** The worker's Node name. */
  node: string;
  server: string;
  ca: string;
  caKey: string;
  /** The pods' range (traffic from it is the cluster's own). */
  podNetwork: string;
  /** The administrator's kubectl, for the `kubernetes` Service's label. */
  admin: (args: string[]) => Promise<string>;
}

/** A running kube-proxy. */
export interface ServiceProxy {
  process: ClusterProcess;
  stop(): Promise<void>;
}

/** kube-proxy's configuration (KubeProxyConfiguration v1alpha1). */
function proxyConfig(join: ServiceProxyJoin, kubeconfig: string, healthzPort: number, metricsPort: number) {
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig },
    hostnameOverride: join.node,
    mode: 'nftables',
    clusterCIDR: join.podNetwork,
    detectLocalMode: 'ClusterCIDR',
    healthzBindAddress: `127.0.0.1:${healthzPort}`,
    metricsBindAddress: `127.0.0.1:${metricsPort}`,
    // 0 (not the default -999): lowering a score needs CAP_SYS_RESOURCE, which root lacks here.
    oomScoreAdj: 0,
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  };
}

/** Removes kube-proxy's tables, when there. */
export function removeServiceProxyTables(): void {
  for (const [family, table] of TABLES) {
    try {
      execFileSync(NFT, ['delete', 'table', family, table], { stdio: 'pipe' });
    } catch {
      // Not there.
    }
  }
}

/** Starts kube-proxy (its binary in `binDir`) for the worker, its files in `dir`; resolves once it serves its health. */
export async function startServiceProxy(dir: string, binDir: string, join: ServiceProxyJoin): Promise<ServiceProxy> {
  removeServiceProxyTables();
  await join.admin([
    'label',
    '--overwrite',
    'service',
    'kubernetes',
    '-n',
    'default',
    `${SERVICE_PROXY_NAME_LABEL}=lacchain-test-api-route`,
  ]);
  const pki = path.join(dir, 'pki');
  fs.mkdirSync(pki, { recursive: true });
  // The user the bootstrap RBAC binds to system:node-proxier.
  const client = signCertificate(
    pki,
    join.ca,
    join.caKey,
    'kube-proxy',
    '/CN=system:kube-proxy',
    'extendedKeyUsage=clientAuth\n',
  );
  const kubeconfig = path.join(dir, 'kube-proxy.kubeconfig');
  fs.writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: join.server, 'certificate-authority': join.ca } }],
      users: [{ name: 'kube-proxy', user: { 'client-certificate': client.cert, 'client-key': client.key } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'kube-proxy' } }],
      'current-context': 'test',
    }),
  );
  const [healthzPort, metricsPort] = [await freePort(), await freePort()];
  const config = path.join(dir, 'kube-proxy.yaml');
  fs.writeFileSync(config, JSON.stringify(proxyConfig(join, kubeconfig, healthzPort, metricsPort)));
  const proc = startProcess(dir, 'kube-proxy', path.join(binDir, 'kube-proxy'), [`--config=${config}`, '--v=2']);
  const stop = async () => {
    await stopProcess(proc);
    removeServiceProxyTables();
  };
  try {
    await waitFor(
      'kube-proxy synced',
      async () => (await fetch(`http://127.0.0.1:${healthzPort}/healthz`)).ok,
      60_000,
      proc,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { process: proc, stop };
}

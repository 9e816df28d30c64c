/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The program's Kubernetes manifests as the provider sends them to a cluster: every `kubernetes:` resource the
 * program declares (under the recording engine), secrets in clear, the Namespace first; and applying them
 * server-side (not a dry run), as the provider does.
 */
import { unwrapSecrets } from '../../tools/recording/engine';
import { Declared } from '../program';
import { TestCluster } from './cluster';

/** One manifest. */
export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } } & Record<
  string,
  any
>;

/** The declared Kubernetes manifests, the Namespaces first. */
export function kubernetesManifests(declared: Declared): Manifest[] {
  const manifests = declared.resources
    .filter((r) => r.type.startsWith('kubernetes:') && r.type !== 'pulumi:providers:kubernetes')
    .map((r) => unwrapSecrets(r.inputs) as Manifest);
  return [...manifests.filter((m) => m.kind === 'Namespace'), ...manifests.filter((m) => m.kind !== 'Namespace')];
}

/** Applies manifests server-side, as the provider's field manager would; throws with the API server's refusal. */
export async function applyServerSide(cluster: TestCluster, manifests: Manifest[]): Promise<string> {
  return cluster.kubectlOk(
    ['apply', '--server-side', '--field-manager=pulumi-kubernetes', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }),
  );
}

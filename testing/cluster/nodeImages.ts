/**
 * The images a node's pod runs on a real worker (testing/cluster/kubelet.ts), imported under the references the
 * program's manifests name (testing/cluster/images.ts): the Besu stand-in as hyperledger/besu (also under its digest,
 * which the values file's imageDigest pins; a writer's metrics relay runs in the same image) and restic's image, with
 * a validator's rotation client stand-in, or a writer's proxy stand-in (as openresty/openresty) and relay signer
 * stand-in; and the kubectl image of the backup schedule's steps (as registry.k8s.io/kubectl, also under its digest,
 * which the values file's kubectlImageDigest pins).
 */
import * as fs from 'fs';
import * as path from 'path';
import { BACKUP_TOOL, KUBECTL_IMAGE } from '../../core/catalog/backups';
import { RELAY_SIGNER, ROTATION_VALIDATOR } from '../../core/catalog/companions';
import { PROXY_IMAGE } from '../../core/catalog/kubernetes';
import {
  besuStandinImage,
  companionStandinImage,
  kubectlImage,
  openrestyStandinImage,
  resticImage,
  TestImage,
} from './images';
import type { KubeletWorker } from './kubelet';

/** The node types whose pods the kubelet tests run. */
export type PodNodeType = 'validator' | 'writer';

/** The images of a node type's own containers, built into `work`. */
async function ownImages(work: string, type: PodNodeType): Promise<TestImage[]> {
  if (type === 'validator') {
    const { name, imageExecutable, defaultImage } = ROTATION_VALIDATOR;
    return [await companionStandinImage(work, name, imageExecutable, defaultImage)];
  }
  const { name, imageExecutable, defaultImage } = RELAY_SIGNER;
  return [
    await openrestyStandinImage(work, PROXY_IMAGE),
    await companionStandinImage(work, name, imageExecutable, defaultImage),
  ];
}

/** An image's name pinned by its digest (`docker.io/hyperledger/besu@sha256:…`): how a tag@digest is looked up. */
function byDigest(image: TestImage): string {
  return `${image.reference.replace(/:[^:/]+$/, '')}@${image.digest}`;
}

/**
 * Builds (into a folder of its own under `work`) and imports into `worker` the Besu stand-in's image of release
 * `version`, under its tag and its digest; returns the digest.
 */
export async function importBesuImage(worker: KubeletWorker, work: string, version: string): Promise<string> {
  const besu = await besuStandinImage(
    fs.mkdtempSync(path.join(work, `besu-${version}-`)),
    version,
    `hyperledger/besu:${version}`,
  );
  await worker.importImage(besu.archive, besu.reference, [byDigest(besu)]);
  return besu.digest;
}

/**
 * Builds (into a folder of its own under `work`) and imports into `worker` the kubectl image of `kubectlBinary` (the
 * control plane's build), under its tag and its digest; returns the digest.
 */
export async function importKubectlImage(worker: KubeletWorker, work: string, kubectlBinary: string): Promise<string> {
  const kubectl = await kubectlImage(fs.mkdtempSync(path.join(work, 'kubectl-')), kubectlBinary, KUBECTL_IMAGE);
  await worker.importImage(kubectl.archive, kubectl.reference, [byDigest(kubectl)]);
  return kubectl.digest;
}

/** Builds (into `work`) and imports into `worker` the images of a `type`'s pod for Besu `version`; returns Besu's digest. */
export async function importNodeImages(
  worker: KubeletWorker,
  work: string,
  version: string,
  type: PodNodeType,
): Promise<string> {
  const digest = await importBesuImage(worker, work, version);
  for (const image of [...(await ownImages(work, type)), await resticImage(work, BACKUP_TOOL.image)]) {
    await worker.importImage(image.archive, image.reference);
  }
  return digest;
}

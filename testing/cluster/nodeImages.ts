/**
 * The images a node's pod runs on a real worker (testing/cluster/kubelet.ts), imported under the references the
 * program's manifests name (testing/cluster/images.ts): the Besu stand-in as hyperledger/besu (also under its digest,
 * which the values file's imageDigest pins; a writer's metrics relay runs in the same image) and restic's image, with
 * a validator's rotation client stand-in, or a writer's proxy stand-in (as openresty/openresty) and relay signer
 * stand-in; and the kubectl image of the backup schedule's steps (as registry.k8s.io/kubectl, also under its digest,
 * which the values file's kubectlImageDigest pins). Each built once per run of the tier (sharedImages.ts).
 */
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
import { sharedImage } from './sharedImages';

/** The node types whose pods the kubelet tests run. */
export type PodNodeType = 'validator' | 'writer';

/** A companion's stand-in image (the rotation client's, the relay signer's), built once per run of the tier. */
function companionImage(work: string, companion: typeof ROTATION_VALIDATOR | typeof RELAY_SIGNER) {
  const { name, imageExecutable, defaultImage } = companion;
  return sharedImage(`companion ${name} ${imageExecutable} ${defaultImage}`, work, (dir) =>
    companionStandinImage(dir, name, imageExecutable, defaultImage),
  );
}

/** The images of a node type's own containers (built into `work`, or once per run of the tier: sharedImages.ts). */
async function ownImages(work: string, type: PodNodeType): Promise<TestImage[]> {
  if (type === 'validator') return [await companionImage(work, ROTATION_VALIDATOR)];
  return [
    await sharedImage(`openresty ${PROXY_IMAGE}`, work, (dir) => openrestyStandinImage(dir, PROXY_IMAGE)),
    await companionImage(work, RELAY_SIGNER),
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
  const reference = `hyperledger/besu:${version}`;
  const besu = await sharedImage(`besu ${version} ${reference}`, work, (dir) =>
    besuStandinImage(dir, version, reference),
  );
  await worker.importImage(besu.archive, besu.reference, [byDigest(besu)]);
  return besu.digest;
}

/**
 * Builds (into a folder of its own under `work`) and imports into `worker` the kubectl image of `kubectlBinary` (the
 * control plane's build), under its tag and its digest; returns the digest.
 */
export async function importKubectlImage(worker: KubeletWorker, work: string, kubectlBinary: string): Promise<string> {
  const kubectl = await sharedImage(`kubectl ${kubectlBinary} ${KUBECTL_IMAGE}`, work, (dir) =>
    kubectlImage(dir, kubectlBinary, KUBECTL_IMAGE),
  );
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
  const restic = await sharedImage(`restic ${BACKUP_TOOL.image}`, work, (dir) => resticImage(dir, BACKUP_TOOL.image));
  for (const image of [...(await ownImages(work, type)), restic]) {
    await worker.importImage(image.archive, image.reference);
  }
  return digest;
}

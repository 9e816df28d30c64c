/**
 * The images a validator's pod runs on a real worker (testing/cluster/kubelet.ts), imported under the references the
 * program's manifests name: the Besu stand-in as hyperledger/besu (also under its digest, which the values file's
 * imageDigest pins), the validator's rotation client stand-in and restic's image (testing/cluster/images.ts).
 */
import { ROTATION_VALIDATOR } from '../../core/catalog/companions';
import { besuStandinImage, resticImage, rotationStandinImage } from './images';
import type { KubeletWorker } from './kubelet';

/** Builds (into `work`) and imports into `worker` a validator's images for Besu `version`; returns Besu's digest. */
export async function importValidatorImages(worker: KubeletWorker, work: string, version: string): Promise<string> {
  const besu = await besuStandinImage(work, version, `hyperledger/besu:${version}`);
  await worker.importImage(besu.archive, besu.reference, [`docker.io/hyperledger/besu@${besu.digest}`]);
  const rotation = await rotationStandinImage(
    work,
    ROTATION_VALIDATOR.imageExecutable,
    ROTATION_VALIDATOR.defaultImage,
  );
  await worker.importImage(rotation.archive, rotation.reference);
  const restic = await resticImage(work, 'restic/restic:0.18.1');
  await worker.importImage(restic.archive, restic.reference);
  return besu.digest;
}

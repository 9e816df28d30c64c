/**
 * The kubelet tier's images, built once per run of the tier: tests/run.sh gives the tier's jest a folder of its own
 * (LACCHAIN_KUBELET_IMAGES, removed after it), the first file that needs an image builds its archive there and the
 * later files import that same archive (each into its own worker's containerd: an image is an input, never state
 * a file leaves behind). A file run on its own (no folder named) builds its images into its own work folder, as
 * before. An archive is kept under a name made of what it is built from (the builder's name and arguments).
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { TestImage } from './images';

/** The environment variable naming the run's folder of built images. */
export const SHARED_IMAGES_VARIABLE = 'LACCHAIN_KUBELET_IMAGES';

/**
 * The image `key` names, built by `build` into a folder of its own (under `work`, or in the run's folder when there is
 * one, where a later call with the same key finds it).
 */
export async function sharedImage(
  key: string,
  work: string,
  build: (dir: string) => Promise<TestImage>,
): Promise<TestImage> {
  const shared = process.env[SHARED_IMAGES_VARIABLE];
  if (!shared) return build(fs.mkdtempSync(path.join(work, 'image-')));
  const dir = path.join(shared, createHash('sha256').update(key).digest('hex').slice(0, 16));
  const record = path.join(dir, 'image.json');
  if (fs.existsSync(record)) return JSON.parse(fs.readFileSync(record, 'utf8')) as TestImage;
  // Built beside, then put in place in one rename: a file cut while building leaves nothing half made to reuse.
  const building = fs.mkdtempSync(`${dir}.building-`);
  const built = await build(building);
  const image = { ...built, archive: path.join(dir, path.relative(building, built.archive)) };
  fs.writeFileSync(path.join(building, 'image.json'), JSON.stringify(image));
  fs.renameSync(building, dir);
  return image;
}

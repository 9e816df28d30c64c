/**
 * An OCI image layout as the tests' image builders write it (testing/cluster/images.ts for the kubelet's pods,
 * testing/ociImage.ts for podman on a test host): blobs named by their digest, the image's config and manifest, its
 * index.json and oci-layout. Same inputs, same bytes: the same digest.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

/** An OCI content descriptor. */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

/** Lowercase hex SHA-256 of `data`. */
export const sha256 = (data: Buffer): string => crypto.createHash('sha256').update(data).digest('hex');

/** Writes `data` as a blob of the layout and returns its OCI descriptor. */
export function writeBlob(layout: string, mediaType: string, data: Buffer): Descriptor {
  const hex = sha256(data);
  fs.writeFileSync(path.join(layout, 'blobs', 'sha256', hex), data);
  return { mediaType, digest: `sha256:${hex}`, size: data.length };
}

/** An image whose layers are already blobs of the layout. */
export interface LayoutImage {
  /** The layers' descriptors, bottom first. */
  layers: Descriptor[];
  /** The digests of the layers' uncompressed tars (`sha256:…`), bottom first. */
  diffIds: string[];
  /** What the image runs: the image config's `config`. */
  config: object;
  /** The history's `created_by`: what made the image. */
  createdBy: string;
  /** What the index says of the image besides its descriptor (its name, its platform). */
  indexEntry: object;
}

/** Writes the image's config, manifest, index.json and oci-layout into `layout`; returns the manifest's descriptor. */
export function writeImage(layout: string, image: LayoutImage): Descriptor {
  const created = new Date(0).toISOString();
  const imageConfig = {
    created,
    architecture: 'amd64',
    os: 'linux',
    config: image.config,
    rootfs: { type: 'layers', diff_ids: image.diffIds },
    history: [{ created, created_by: image.createdBy }],
  };
  const config = writeBlob(
    layout,
    'application/vnd.oci.image.config.v1+json',
    Buffer.from(JSON.stringify(imageConfig)),
  );
  const mediaType = 'application/vnd.oci.image.manifest.v1+json';
  const manifest = writeBlob(
    layout,
    mediaType,
    Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType, config, layers: image.layers })),
  );
  const index = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [{ ...manifest, ...image.indexEntry }],
  };
  fs.writeFileSync(path.join(layout, 'index.json'), JSON.stringify(index));
  fs.writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  return manifest;
}

/**
 * The network's genesis file: read from a local copy or downloaded from its published URL, and accepted only when
 * its SHA-256 equals the digest pinned in the catalog. The file itself is never part of this repository.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import type { PinnedGenesis } from './catalog/networks';

/** The genesis could not be obtained or is not the pinned one. */
export class GenesisError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GenesisError';
  }
}

/** SHA-256 of some bytes, lowercase hex. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Checks bytes against the pinned digest and that they are JSON; returns them as text. */
export function verifyGenesis(bytes: Buffer, pinned: PinnedGenesis, source: string): string {
  const actual = sha256Hex(bytes);
  if (actual !== pinned.sha256) {
    throw new GenesisError(
      `genesis from ${source} does not match the pinned digest: expected sha256 ${pinned.sha256}, got sha256 ${actual} ` +
        `(${bytes.length} bytes; the pinned file has ${pinned.bytes}). Use the network's published genesis file.`,
    );
  }
  const text = bytes.toString('utf8');
  try {
    JSON.parse(text);
  } catch {
    throw new GenesisError(`genesis from ${source} matches its digest but is not JSON`);
  }
  return text;
}

/** Where a genesis comes from: a local copy, or else the pinned URL. */
export interface GenesisSource {
  /** A local copy (absolute path), for machines without internet. */
  file?: string;
  /** How to download (the global fetch by default; tests pass their own). */
  fetch?: typeof fetch;
}

/** Reads or downloads the genesis and verifies it against the pinned digest. */
export async function loadGenesis(pinned: PinnedGenesis, source: GenesisSource = {}): Promise<string> {
  if (source.file) {
    if (!fs.existsSync(source.file)) throw new GenesisError(`genesis file ${source.file} does not exist`);
    return verifyGenesis(fs.readFileSync(source.file), pinned, source.file);
  }
  const download = source.fetch ?? fetch;
  let response: Response;
  try {
    response = await download(pinned.url);
  } catch (error) {
    throw new GenesisError(
      `cannot download the genesis from ${pinned.url} (${(error as Error).message}); without internet, download it ` +
        'elsewhere and name the copy in lacchain:genesisFile',
    );
  }
  if (!response.ok) throw new GenesisError(`cannot download the genesis from ${pinned.url}: HTTP ${response.status}`);
  return verifyGenesis(Buffer.from(await response.arrayBuffer()), pinned, pinned.url);
}

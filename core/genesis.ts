/**
 * The network's genesis file: read from a local copy or downloaded from its published URL, and accepted only when
 * its SHA-256 equals the digest pinned in the catalog. The file itself is never part of this repository.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import type { PinnedGenesis } from './catalog/networks';
import { fetchWithin, type WholeAnswer } from './fetchWithin';

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
  /** The download's time limit (GENESIS_DOWNLOAD_TIMEOUT_MS by default). */
  timeoutMs?: number;
}

/** How long the genesis download may take. */
export const GENESIS_DOWNLOAD_TIMEOUT_MS = 60_000;

/** A local genesis copy's bytes: a folder, a special file or one far larger than the pinned file is refused in one line. */
function readLocalGenesis(file: string, pinned: PinnedGenesis): Buffer {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new GenesisError(
      code === 'ENOENT' ? `genesis file ${file} does not exist` : `genesis file ${file} cannot be read (${code})`,
    );
  }
  if (stat.isDirectory()) throw new GenesisError(`genesis file ${file} is a folder, not a file`);
  if (!stat.isFile()) throw new GenesisError(`genesis file ${file} is not a regular file`);
  if (stat.size > pinned.bytes * 4 + 1024 * 1024) {
    throw new GenesisError(`genesis file ${file} has ${stat.size} bytes; the pinned genesis has ${pinned.bytes}`);
  }
  return fs.readFileSync(file);
}

/** Reads or downloads the genesis and verifies it against the pinned digest. */
export async function loadGenesis(pinned: PinnedGenesis, source: GenesisSource = {}): Promise<string> {
  if (source.file) return verifyGenesis(readLocalGenesis(source.file, pinned), pinned, source.file);
  let response: WholeAnswer;
  try {
    response = await fetchWithin(pinned.url, {}, source.timeoutMs ?? GENESIS_DOWNLOAD_TIMEOUT_MS, source.fetch);
  } catch (error) {
    const why =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${(source.timeoutMs ?? GENESIS_DOWNLOAD_TIMEOUT_MS) / 1000} s`
        : (error as Error).message;
    throw new GenesisError(
      `cannot download the genesis from ${pinned.url} (${why}); without internet, download it ` +
        'elsewhere and name the copy in lacchain:genesisFile',
    );
  }
  if (!response.ok) throw new GenesisError(`cannot download the genesis from ${pinned.url}: HTTP ${response.status}`);
  return verifyGenesis(response.body, pinned, pinned.url);
}

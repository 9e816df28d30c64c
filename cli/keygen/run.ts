/**
 * The work of `npm run keygen` (its options and help: cli/keygen/spec.ts): a new node key written to its file, its
 * identity printed as JSON. Loaded only to do it, so `--help` and a mistake in the command line answer at once.
 */
import { deriveIdentity, generatePrivateKey } from '../../core/identity/nodeKey';
import { PORTS } from '../../core/catalog/ports';
import { CommandLine, UsageError } from '../cli';
import { hostAndPort } from '../hostPort';
import { expandHome, writeNewKeyFile } from '../keyFile';
import type { KEYGEN_TOOL } from './spec';

/** Writes a new node key to --out and prints its identity (with --host, its enode). */
export function run({ values }: CommandLine<(typeof KEYGEN_TOOL)['options']>): void {
  if (!values.out) throw new UsageError('--out is required: the file to write the key to');
  const endpoint = values.host === undefined ? undefined : hostAndPort(values.host, values.port);
  const privateKey = generatePrivateKey();
  const keyFile = expandHome(values.out);
  writeNewKeyFile(keyFile, privateKey);
  const identity = deriveIdentity(privateKey, endpoint?.host ?? '0.0.0.0', endpoint?.port ?? PORTS.p2p);
  const shown: Record<string, string> = {
    keyFile,
    publicKey: identity.publicKey,
    address: identity.address,
  };
  if (endpoint) shown.enode = identity.enode;
  process.stdout.write(`${JSON.stringify(shown)}\n`);
}

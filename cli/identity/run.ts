/**
 * The work of `npm run identity` (its options and help: cli/identity/spec.ts): a node key's public identity printed as
 * JSON. Loaded only to do it, so `--help` and a mistake in the command line answer at once.
 */
import { deriveIdentity } from '../../core/identity/nodeKey';
import { CommandLine, UsageError } from '../cli';
import { hostAndPort } from '../hostPort';
import { readKeyFile } from '../keyFile';
import type { IDENTITY_TOOL } from './spec';

/** Reads --key-file and prints its public key, enode (--host, --port) and address. */
export function run({ values }: CommandLine<(typeof IDENTITY_TOOL)['options']>): void {
  if (!values['key-file']) throw new UsageError('--key-file is required: the node key file to read');
  const { host, port } = hostAndPort(values.host, values.port);
  const identity = deriveIdentity(readKeyFile(values['key-file']), host, port);
  process.stdout.write(
    `${JSON.stringify({ publicKey: identity.publicKey, enode: identity.enode, address: identity.address })}\n`,
  );
}

/**
 * What `npm run keygen` accepts, and its help (a new node key file and its identity):
 * only what the help and the command line's parse need.
 */
import type { ToolSpec } from '../cli';
import { hostPortOptions } from '../hostPortOptions';

/** What `npm run keygen` is, for its help and its errors; its work is cli/keygen/run.ts. */
export const KEYGEN_TOOL = {
  command: 'npm run --silent keygen --',
  usage: '--out FILE [--host HOST] [--port PORT]',
  summary:
    'Creates a new node key file (mode 0600; never overwrites one, never inside a git work tree) and prints the\n' +
    "node's identity as JSON: keyFile, publicKey, address, and with --host its enode. Never prints the private key.",
  options: {
    out: { type: 'string', value: 'FILE', help: 'where to write the key (required; ~ is your home folder)' },
    ...hostPortOptions("the node's public IP or DNS name, to print its enode"),
  },
  examples: [
    ['--out ~/.lacchain-besu-node/keys/testnet-writer.key', 'a new key and its address'],
    ['--out ~/.lacchain-besu-node/keys/mainnet-validator.key --host 203.0.113.10', '... and the enode to permission'],
  ],
} as const satisfies ToolSpec;

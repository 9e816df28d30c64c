/**
 * What `npm run identity` accepts, and its help (a node key's public identity):
 * only what the help and the command line's parse need.
 */
import type { ToolSpec } from '../cli';
import { hostPortOptions } from '../hostPortOptions';

/** What `npm run identity` is, for its help and its errors; its work is cli/identity/run.ts. */
export const IDENTITY_TOOL = {
  command: 'npm run --silent identity --',
  usage: '--key-file FILE --host HOST [--port PORT]',
  summary:
    "Prints a node key's public identity as JSON: publicKey, enode and address. Reads the key file as Besu does\n" +
    '(one line of 64 hex digits, with or without 0x). Never prints the private key.',
  options: {
    'key-file': { type: 'string', value: 'FILE', help: 'the node key file (required)' },
    ...hostPortOptions("the node's public IP or DNS name, as in its enode (required)"),
  },
  examples: [
    ['--key-file ~/.lacchain-besu-node/keys/testnet-writer.key --host 203.0.113.10', 'the enode to permission'],
    ['--key-file writer.key --host node.example.org --port 30303', 'the same for another host and port'],
  ],
} as const satisfies ToolSpec;

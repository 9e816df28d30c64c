/**
 * `npm run --silent identity -- --key-file FILE --host HOST [--port PORT]`: prints a node key's public identity as JSON: {"publicKey","enode","address"}. Never prints the private key.
 */
import { deriveIdentity } from '../core/identity/nodeKey';
import { runCli, ToolSpec, UsageError } from './cli';
import { hostAndPort, hostPortOptions } from './hostPort';
import { readKeyFile } from './keyFile';

const IDENTITY_TOOL = {
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

runCli(IDENTITY_TOOL, ({ values }) => {
  if (!values['key-file']) throw new UsageError('--key-file is required: the node key file to read');
  const { host, port } = hostAndPort(values.host, values.port);
  const identity = deriveIdentity(readKeyFile(values['key-file']), host, port);
  process.stdout.write(
    `${JSON.stringify({ publicKey: identity.publicKey, enode: identity.enode, address: identity.address })}\n`,
  );
});

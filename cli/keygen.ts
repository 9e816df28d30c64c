/**
 * `npm run --silent keygen -- --out FILE [--host HOST] [--port PORT]`: writes a new node key file (mode 0600, refuses to overwrite, refuses a place inside a git work tree; `~` is the
 * home folder) and prints the identity as JSON
 * ({"keyFile","publicKey","address"} and, with --host, "enode"). Never prints the private key.
 */
import { deriveIdentity, generatePrivateKey } from '../core/identity/nodeKey';
import { PORTS } from '../core/catalog/ports';
import { runCli, ToolSpec, UsageError } from './cli';
import { hostAndPort, hostPortOptions } from './hostPort';
import { expandHome, writeNewKeyFile } from './keyFile';

const KEYGEN_TOOL = {
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

runCli(KEYGEN_TOOL, ({ values }) => {
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
});

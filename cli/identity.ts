/**
 * `npm run --silent identity -- --key-file FILE --host HOST [--port PORT]`
 * Prints a node key's public identity as JSON: {"publicKey","enode","address"}. Never prints the private key.
 */
import { deriveIdentity } from '../core/identity/nodeKey';
import { parseOptions, runTool, UsageError } from './cli';
import { hostAndPort } from './hostPort';
import { readKeyFile } from './keyFile';

const USAGE = 'npm run --silent identity -- --key-file FILE --host HOST [--port PORT]';

runTool(() => {
  const { values } = parseOptions(
    process.argv.slice(2),
    { 'key-file': { type: 'string' }, host: { type: 'string' }, port: { type: 'string' } },
    USAGE,
  );
  if (!values['key-file']) throw new UsageError(`--key-file is required\nusage: ${USAGE}`);
  const { host, port } = hostAndPort(values.host, values.port);
  const identity = deriveIdentity(readKeyFile(values['key-file']), host, port);
  process.stdout.write(
    `${JSON.stringify({ publicKey: identity.publicKey, enode: identity.enode, address: identity.address })}\n`,
  );
});

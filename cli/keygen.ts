/**
 * `npm run --silent keygen -- --out FILE [--host HOST] [--port PORT]`
 * Writes a new node key file (mode 0600, refuses to overwrite, refuses a place inside a git work tree; `~` is the
 * home folder) and prints the identity as JSON
 * ({"keyFile","publicKey","address"} and, with --host, "enode"). Never prints the private key.
 */
import { deriveIdentity, generatePrivateKey } from '../core/identity/nodeKey';
import { PORTS } from '../core/catalog/ports';
import { parseOptions, runTool, UsageError } from './cli';
import { hostAndPort } from './hostPort';
import { expandHome, writeNewKeyFile } from './keyFile';

const USAGE = 'npm run --silent keygen -- --out FILE [--host HOST] [--port PORT]';

runTool(() => {
  const { values } = parseOptions(
    process.argv.slice(2),
    { out: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' } },
    USAGE,
  );
  if (!values.out) throw new UsageError(`--out is required\nusage: ${USAGE}`);
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

/**
 * `lacchain:rpc`, the stack's JSON-RPC access: its defaults (from the schema), the checks across its fields, the JWT
 * public key file, and the checks of the setting against each node (reachability, the node's Besu release).
 */
import * as path from 'path';
import { acceptedOptions } from '../catalog/besu';
import { configKey } from '../catalog/defaults';
import { UNSAFE_RPC_APIS } from '../catalog/nodeTypes';
import { RPC_DEFAULTS, RPC_EXPOSURES, RPC_OPTIONS, firstReleaseWith } from '../catalog/rpc';
import { plainTextRpcPorts, rpcApisOf, unsafeRpcOverride } from '../rpc/access';
import type { FileReader, RawStackConfig } from './load';
import type { NodeSettings, RpcSettings } from './model';
import { describeGiven, Problem } from './problems';
import { RpcInput, rpcProxySchema, rpcSchema } from './schema';
import { UnreadableFileError } from './yamlFile';

const RPC_KEY = configKey('rpc');
const PEM_PUBLIC_KEY = /^-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----\s*$/;
const PUBLIC_KEY_ALLOWED =
  'a PEM public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----), as text or a file beside the stack config';

/** `lacchain:rpc` with its defaults, and the checks that involve several of its fields. */
export function readRpc(
  given: RpcInput | undefined,
  raw: RawStackConfig,
  readFile: FileReader,
  problems: Problem[],
): RpcSettings {
  // The schema's defaults, and nothing else, fill in what the operator left out.
  const input = given ?? rpcSchema.parse({});
  const file = raw.file;
  const rpc: RpcSettings = {
    apis: input.apis ? [...new Set(input.apis)] : undefined,
    exposure: input.exposure,
    hostAllowlist: input.hostAllowlist ?? [],
    corsOrigins: input.corsOrigins ?? [],
    noAuthMethods: input.noAuthMethods ?? [],
    allowUnsafeApis: input.allowUnsafeApis,
    maxActiveConnections: input.maxActiveConnections,
    proxy: input.proxy ?? rpcProxySchema.parse({}),
  };
  const auth = input.authentication;
  if (auth?.method === 'password') {
    if (auth.publicKey !== undefined || auth.algorithm !== undefined) {
      problems.push({
        file,
        key: `${RPC_KEY}.authentication.${auth.publicKey !== undefined ? 'publicKey' : 'algorithm'}`,
        given: auth.publicKey !== undefined ? 'given a public key' : describeGiven(auth.algorithm),
        allowed: 'no public key or algorithm with password authentication (they belong to method jwt)',
      });
    }
    if (!auth.users) {
      problems.push({
        file,
        key: `${RPC_KEY}.authentication.users`,
        given: 'missing',
        allowed: 'the users of password authentication: a list of { name, permissions? }',
      });
    } else {
      const seen = new Set<string>();
      auth.users.forEach((user, index) => {
        if (seen.has(user.name)) {
          problems.push({
            file,
            key: `${RPC_KEY}.authentication.users[${index}].name`,
            given: describeGiven(user.name),
            allowed: 'a user name not used by another user',
          });
        }
        seen.add(user.name);
      });
      rpc.authentication = {
        method: 'password',
        users: auth.users.map((u) => ({
          name: u.name,
          permissions: u.permissions ?? [...RPC_DEFAULTS.userPermissions],
        })),
      };
    }
  } else if (auth?.method === 'jwt') {
    if (auth.users !== undefined) {
      problems.push({
        file,
        key: `${RPC_KEY}.authentication.users`,
        given: describeGiven(auth.users),
        allowed: 'no users with jwt authentication (they belong to method password)',
      });
    }
    const publicKey = auth.publicKey === undefined ? undefined : readPublicKey(auth.publicKey, raw, readFile, problems);
    if (auth.publicKey === undefined) {
      problems.push({
        file,
        key: `${RPC_KEY}.authentication.publicKey`,
        given: 'missing',
        allowed: PUBLIC_KEY_ALLOWED,
      });
    }
    if (publicKey !== undefined) {
      rpc.authentication = { method: 'jwt', publicKey, ...(auth.algorithm ? { algorithm: auth.algorithm } : {}) };
    }
  }
  if (rpc.noAuthMethods.length > 0 && !auth) {
    problems.push({
      file,
      key: `${RPC_KEY}.noAuthMethods`,
      given: describeGiven(rpc.noAuthMethods),
      allowed: `no exempt methods without ${RPC_KEY}.authentication (every method is open then)`,
    });
  }
  return rpc;
}

/** A JWT public key given as PEM text, or as a file relative to the stack config. */
function readPublicKey(
  value: string,
  raw: RawStackConfig,
  readFile: FileReader,
  problems: Problem[],
): string | undefined {
  const key = `${RPC_KEY}.authentication.publicKey`;
  let text: string | undefined;
  try {
    text = value.trimStart().startsWith('-----BEGIN') ? value : readFile(path.resolve(raw.baseDir, value));
  } catch (error) {
    if (!(error instanceof UnreadableFileError)) throw error;
    problems.push({
      file: raw.file,
      key,
      given: `given the file ${JSON.stringify(value)}, which ${error.message}`,
      allowed: PUBLIC_KEY_ALLOWED,
    });
    return undefined;
  }
  if (text === undefined) {
    problems.push({
      file: raw.file,
      key,
      given: `given the file ${JSON.stringify(value)}, which does not exist`,
      allowed: PUBLIC_KEY_ALLOWED,
    });
    return undefined;
  }
  if (!PEM_PUBLIC_KEY.test(text.trim() + '\n')) {
    problems.push({
      file: raw.file,
      key,
      given:
        text === value
          ? 'given a text that is not a PEM public key'
          : `given the file ${JSON.stringify(value)}, which does not hold a PEM public key`,
      allowed: PUBLIC_KEY_ALLOWED,
    });
    return undefined;
  }
  return `${text.trim()}\n`;
}

/** The RPC setting against each node: unsafe choices on a reachable port, options the node's release lacks. */
export function checkRpcForNodes(rpc: RpcSettings, nodes: NodeSettings[], file: string, problems: Problem[]): void {
  const exposed = nodes.filter((n) => unsafeRpcOverride(n, rpc).length > 0);
  if (exposed.length > 0 && !rpc.allowUnsafeApis) {
    const where = `${exposed.map((n) => `node ${n.name}`).join(', ')}: RPC publicly reachable with exposure ${rpc.exposure}`;
    const apis = rpcApisOf(exposed[0], rpc).filter((a) => (UNSAFE_RPC_APIS as readonly string[]).includes(a));
    if (apis.length > 0) {
      problems.push({
        file,
        key: `${RPC_KEY}.apis`,
        given: describeGiven(rpc.apis),
        allowed: `API groups without ${UNSAFE_RPC_APIS.join(', ')} (${where}); use exposure internal, or set ${RPC_KEY}.allowUnsafeApis: true to override (the plan and the policy flag it)`,
      });
    }
    if (rpc.corsOrigins.includes('*')) {
      problems.push({
        file,
        key: `${RPC_KEY}.corsOrigins`,
        given: describeGiven(rpc.corsOrigins),
        allowed: `named origins such as https://app.example.org, not * (${where}); set ${RPC_KEY}.allowUnsafeApis: true to override (the plan and the policy flag it)`,
      });
    }
  }
  checkCredentialsStayEncrypted(rpc, nodes, file, problems);
  const needs = (option: string, why: string, wanted: boolean) => {
    if (!wanted) return;
    const from = firstReleaseWith(option);
    for (const node of nodes) {
      if (acceptedOptions(node.releaseVersion).has(option)) continue;
      problems.push({
        file,
        key: why,
        given: `given for node ${node.name}, which runs Besu ${node.releaseVersion}`,
        allowed: `a node on Besu ${from} or newer (Besu ${node.releaseVersion} has no ${option}${option === RPC_OPTIONS.noAuthMethods ? ', which keeps the start check and npm run node working with authentication on' : ''}), or no such setting`,
      });
    }
  };
  needs(RPC_OPTIONS.noAuthMethods, `${RPC_KEY}.authentication`, rpc.authentication !== undefined);
  needs(
    RPC_OPTIONS.jwtAlgorithm,
    `${RPC_KEY}.authentication.algorithm`,
    rpc.authentication?.method === 'jwt' && rpc.authentication.algorithm !== undefined,
  );
  needs(
    RPC_OPTIONS.maxActiveConnections,
    `${RPC_KEY}.maxActiveConnections`,
    rpc.maxActiveConnections !== RPC_DEFAULTS.maxActiveConnections,
  );
}

/**
 * With authentication on, logins and tokens never cross a port reachable from outside in plain text. Per path and
 * exposure (the README's table): `public` is refused on both paths (Besu's 4545 has no TLS); `tls-only` is kept on a
 * machine (TLS on 443, its 80 only redirects there) and refused for a Kubernetes writer (the Service's 80 is plain
 * HTTP and the pod has no TLS: keep it `internal` behind your own TLS ingress); `internal` is always kept. One
 * problem for the stack, naming each node and port, the why, and the exposures that would do.
 */
function checkCredentialsStayEncrypted(rpc: RpcSettings, nodes: NodeSettings[], file: string, problems: Problem[]) {
  if (!rpc.authentication) return;
  const plain = nodes
    .map((node) => ({ node, ports: plainTextRpcPorts(node, rpc) }))
    .filter(({ ports }) => ports.length > 0);
  if (plain.length === 0) return;
  const instead = RPC_EXPOSURES.filter(
    (exposure) =>
      exposure !== rpc.exposure && nodes.every((n) => plainTextRpcPorts(n, { ...rpc, exposure }).length === 0),
  );
  const where = plain.map(({ node, ports }) => `node ${node.name}: ${ports.join(' and ')}`).join(', ');
  const hints = [
    ...(instead.includes('tls-only') ? ['tls-only serves the RPC over TLS on 443 (80 then only redirects there)'] : []),
    ...(nodes.some((n) => n.target === 'kubernetes')
      ? ['a Kubernetes pod has no TLS: keep its RPC internal and put your own TLS ingress in front of it']
      : ['internal keeps the RPC inside the machine']),
  ];
  problems.push({
    file,
    key: `${RPC_KEY}.exposure`,
    given: describeGiven(rpc.exposure),
    allowed: `${instead.join(' or ')} while ${RPC_KEY}.authentication is on, so logins and tokens never cross the network in plain text (with exposure ${rpc.exposure}, plain HTTP reaches ${where}); ${hints.join('; ')}`,
  });
}

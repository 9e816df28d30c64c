/**
 * JSON-RPC access: the stack's `lacchain:rpc` and a node's own `lacchain:nodes[i].rpc` over it, with their defaults
 * (the catalog's, the node type's exposure), the checks across their fields, the JWT public key file, and the checks
 * of each setting against its nodes (reachability from outside, logins in plain text, the node's Besu release).
 */
import * as path from 'path';
import { acceptedOptions } from '../catalog/besu';
import { NODE_TYPE_FACTS, NodeType, UNSAFE_RPC_APIS } from '../catalog/nodeTypes';
import {
  CONSENSUS_RPC_APIS,
  CONSENSUS_VOTE_METHODS,
  firstReleaseWith,
  RPC_DEFAULTS,
  RPC_EXPOSURES,
  RPC_OPTIONS,
  RpcExposure,
} from '../catalog/rpc';
import { plainTextRpcPorts, rpcPubliclyReachable } from '../rpc/access';
import type { FileReader, RawStackConfig } from './sources';
import type { NodeSettings, RpcSettings } from './model';
import { describeGiven, Problem } from './problems';
import { RpcInput, rpcProxySchema } from './schema';
import { UnreadableFileError } from './settingsFiles';

const PEM_PUBLIC_KEY = /^-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----\s*$/;
const PUBLIC_KEY_ALLOWED =
  'a PEM public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----), as text or a file beside the stack config';

/** What one `rpc` mapping says, before the node type fills in the exposure it leaves out. */
export type RpcChoice = Omit<RpcSettings, 'exposure' | 'nodeKey'> & { exposure?: RpcExposure };

/**
 * A node's own `rpc` over the stack's: each field the node gives replaces the stack's field of that name (a mapping
 * such as `authentication` or `proxy` is replaced whole, not merged).
 */
export function mergeRpcInput(stack: RpcInput | undefined, node: RpcInput): RpcInput {
  const given = Object.fromEntries(Object.entries(node).filter(([, value]) => value !== undefined));
  return { ...(stack ?? {}), ...given } as RpcInput;
}

/** A node's RPC access: the choice, with the node type's exposure where the choice has none. */
export function rpcOfNode(choice: RpcChoice, typenode: NodeType, nodeKey: string): RpcSettings {
  return { ...choice, nodeKey, exposure: choice.exposure ?? NODE_TYPE_FACTS[typenode].rpcExposure };
}

/**
 * One `rpc` mapping (at `key`: `lacchain:rpc`, or a node's `lacchain:nodes[i].rpc` merged over it) with the catalog's
 * defaults, and the checks that involve several of its fields.
 */
export function readRpc(
  given: RpcInput | undefined,
  key: string,
  raw: RawStackConfig,
  readFile: FileReader,
  problems: Problem[],
): RpcChoice {
  const input = given ?? {};
  const file = raw.file;
  const rpc: RpcChoice = {
    key,
    apis: input.apis ? [...new Set(input.apis)] : undefined,
    exposure: input.exposure,
    hostAllowlist: input.hostAllowlist ?? [],
    corsOrigins: input.corsOrigins ?? [],
    noAuthMethods: input.noAuthMethods ?? [],
    allowUnsafeApis: input.allowUnsafeApis ?? false,
    allowConsensusVotesFromOutside: input.allowConsensusVotesFromOutside ?? false,
    maxActiveConnections: input.maxActiveConnections ?? RPC_DEFAULTS.maxActiveConnections,
    proxy: input.proxy ?? rpcProxySchema.parse({}),
  };
  const auth = input.authentication;
  if (auth?.method === 'password') {
    if (auth.publicKey !== undefined || auth.algorithm !== undefined) {
      problems.push({
        file,
        key: `${key}.authentication.${auth.publicKey !== undefined ? 'publicKey' : 'algorithm'}`,
        given: auth.publicKey !== undefined ? 'given a public key' : describeGiven(auth.algorithm),
        allowed: 'no public key or algorithm with password authentication (they belong to method jwt)',
      });
    }
    if (!auth.users) {
      problems.push({
        file,
        key: `${key}.authentication.users`,
        given: 'missing',
        allowed: 'the users of password authentication: a list of { name, permissions? }',
      });
    } else {
      const seen = new Set<string>();
      auth.users.forEach((user, index) => {
        if (seen.has(user.name)) {
          problems.push({
            file,
            key: `${key}.authentication.users[${index}].name`,
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
        key: `${key}.authentication.users`,
        given: describeGiven(auth.users),
        allowed: 'no users with jwt authentication (they belong to method password)',
      });
    }
    const publicKey =
      auth.publicKey === undefined ? undefined : readPublicKey(auth.publicKey, key, raw, readFile, problems);
    if (auth.publicKey === undefined) {
      problems.push({
        file,
        key: `${key}.authentication.publicKey`,
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
      key: `${key}.noAuthMethods`,
      given: describeGiven(rpc.noAuthMethods),
      allowed: `no exempt methods without ${key}.authentication (every method is open then)`,
    });
  }
  return rpc;
}

/** A JWT public key given as PEM text, or as a file relative to the stack config. */
function readPublicKey(
  value: string,
  rpcKey: string,
  raw: RawStackConfig,
  readFile: FileReader,
  problems: Problem[],
): string | undefined {
  const key = `${rpcKey}.authentication.publicKey`;
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

/**
 * The RPC settings against their nodes: unsafe or consensus choices on an RPC reachable from outside, logins in plain
 * text, options the node's release lacks. Nodes that share a setting (the stack's `lacchain:rpc`) share a problem.
 */
export function checkRpcForNodes(nodes: NodeSettings[], file: string, problems: Problem[]): void {
  const bySetting = new Map<string, NodeSettings[]>();
  for (const node of nodes) bySetting.set(node.rpc.key, [...(bySetting.get(node.rpc.key) ?? []), node]);
  for (const [key, sharing] of bySetting) {
    checkOutsideApis(key, sharing, file, problems);
    checkCredentialsStayEncrypted(key, sharing, file, problems);
    checkReleaseOptions(key, sharing, file, problems);
  }
}

/** Where nodes' RPC is reachable from outside, for messages: `node w: exposure public`. */
const reachableFrom = (nodes: NodeSettings[]) =>
  `${nodes.map((n) => `node ${n.name}`).join(', ')}: RPC reachable from outside with exposure ${[...new Set(nodes.map((n) => n.rpc.exposure))].join(', ')}`;

/**
 * Groups the operator listed in `apis` that may not be reachable from outside: unsafe ones and CORS * without
 * `allowUnsafeApis`; consensus ones without the node's own `allowConsensusVotesFromOutside` (a node's defaults simply
 * leave the consensus groups out while it is reachable: core/rpc/access.ts).
 */
function checkOutsideApis(key: string, nodes: NodeSettings[], file: string, problems: Problem[]) {
  const reachable = nodes.filter((n) => rpcPubliclyReachable(n, n.rpc));
  const rpc = nodes[0].rpc;
  const listed = (groups: readonly string[]) => (rpc.apis ?? []).filter((api) => groups.includes(api));
  const unsafe = reachable.filter((n) => !n.rpc.allowUnsafeApis);
  if (unsafe.length > 0 && listed(UNSAFE_RPC_APIS).length > 0) {
    problems.push({
      file,
      key: `${key}.apis`,
      given: describeGiven(rpc.apis),
      allowed: `API groups without ${UNSAFE_RPC_APIS.join(', ')} (${reachableFrom(unsafe)}); use exposure internal, or set ${key}.allowUnsafeApis: true to override (the plan and the policy flag it)`,
    });
  }
  if (unsafe.length > 0 && rpc.corsOrigins.includes('*')) {
    problems.push({
      file,
      key: `${key}.corsOrigins`,
      given: describeGiven(rpc.corsOrigins),
      allowed: `named origins such as https://app.example.org, not * (${reachableFrom(unsafe)}); set ${key}.allowUnsafeApis: true to override (the plan and the policy flag it)`,
    });
  }
  const voting = reachable.filter((n) => !n.rpc.allowConsensusVotesFromOutside);
  const consensus = listed(CONSENSUS_RPC_APIS);
  if (voting.length > 0 && consensus.length > 0) {
    const methods = consensus.flatMap((group) => CONSENSUS_VOTE_METHODS[group as keyof typeof CONSENSUS_VOTE_METHODS]);
    problems.push({
      file,
      key: `${key}.apis`,
      given: describeGiven(rpc.apis),
      allowed: `API groups without ${CONSENSUS_RPC_APIS.join(', ')} (${reachableFrom(voting)}, and ${methods.join(', ')} sent to a majority of validators add or remove validators); use exposure internal for the node, or opt that node in with ${voting.map((n) => `${n.rpc.nodeKey}.allowConsensusVotesFromOutside: true`).join(', ')} (the plan and the policy flag it)`,
    });
  }
}

/** Options of the setting that a node's Besu release may not have. */
function checkReleaseOptions(key: string, nodes: NodeSettings[], file: string, problems: Problem[]) {
  const rpc = nodes[0].rpc;
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
  needs(RPC_OPTIONS.noAuthMethods, `${key}.authentication`, rpc.authentication !== undefined);
  needs(
    RPC_OPTIONS.jwtAlgorithm,
    `${key}.authentication.algorithm`,
    rpc.authentication?.method === 'jwt' && rpc.authentication.algorithm !== undefined,
  );
  needs(
    RPC_OPTIONS.maxActiveConnections,
    `${key}.maxActiveConnections`,
    rpc.maxActiveConnections !== RPC_DEFAULTS.maxActiveConnections,
  );
}

/**
 * With authentication on, logins and tokens never cross a port reachable from outside in plain text. Per path and
 * exposure (docs' exposure table): `public` is refused on both paths (Besu's 4545 has no TLS); `tls-only` is kept on a
 * machine (TLS on 443; its 80 refuses what carries credentials and redirects the rest there) and refused for a
 * Kubernetes writer (the Service's 80 is plain HTTP and the pod has no TLS: keep it `internal` behind your own TLS
 * ingress); `internal` is always kept. One problem for the setting, naming each node and port, the why, and the
 * exposures that would do.
 */
function checkCredentialsStayEncrypted(key: string, nodes: NodeSettings[], file: string, problems: Problem[]) {
  const rpc = nodes[0].rpc;
  if (!rpc.authentication) return;
  const plain = nodes
    .map((node) => ({ node, ports: plainTextRpcPorts(node, node.rpc) }))
    .filter(({ ports }) => ports.length > 0);
  if (plain.length === 0) return;
  const exposures = [...new Set(plain.map(({ node }) => node.rpc.exposure))];
  const instead = RPC_EXPOSURES.filter(
    (exposure) =>
      !exposures.includes(exposure) &&
      plain.every(({ node }) => plainTextRpcPorts(node, { ...node.rpc, exposure }).length === 0),
  );
  const where = plain.map(({ node, ports }) => `node ${node.name}: ${ports.join(' and ')}`).join(', ');
  const hints = [
    ...(instead.includes('tls-only') ? ['tls-only serves the RPC over TLS on 443'] : []),
    ...(plain.some(({ node }) => node.target === 'kubernetes')
      ? ['a Kubernetes pod has no TLS: keep its RPC internal and put your own TLS ingress in front of it']
      : ['internal keeps the RPC inside the machine']),
  ];
  problems.push({
    file,
    key: `${key}.exposure`,
    given: describeGiven(exposures.length === 1 ? exposures[0] : exposures),
    allowed: `${instead.join(' or ')} while ${key}.authentication is on, so logins and tokens never cross the network in plain text (with exposure ${exposures.join(', ')}, plain HTTP reaches ${where}); ${hints.join('; ')}`,
  });
}

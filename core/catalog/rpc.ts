/**
 * JSON-RPC access facts: API groups, where the RPC may be reachable, authentication, limits and their defaults.
 */
import { acceptedOptions, KNOWN_RELEASES } from './besu';

/** Every API group Besu accepts in `rpc-http-api`. */
export const RPC_API_GROUPS = [
  'ADMIN',
  'CLIQUE',
  'DEBUG',
  'EEA',
  'ETH',
  'IBFT',
  'MINER',
  'NET',
  'PERM',
  'PLUGINS',
  'PRIV',
  'QBFT',
  'TRACE',
  'TXPOOL',
  'WEB3',
] as const;
export type RpcApiGroup = (typeof RPC_API_GROUPS)[number];

/**
 * Where the RPC is reachable:
 * - `public`: Besu's port 4545 on the node's public address (the reference's behaviour), plus the proxies;
 * - `tls-only`: only through the reverse proxy (443 with TLS on a machine, the writer's 80 on both paths);
 * - `internal`: only inside the machine (127.0.0.1) or the cluster (no RPC port on the Service).
 */
export const RPC_EXPOSURES = ['public', 'tls-only', 'internal'] as const;
export type RpcExposure = (typeof RPC_EXPOSURES)[number];

/** Authentication methods: Besu's username/password (credentials file, /login) or JWT signed by the operator. */
export const RPC_AUTH_METHODS = ['password', 'jwt'] as const;

/** JWT signature algorithms Besu accepts (`rpc-http-authentication-jwt-algorithm`). */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512'] as const;

/**
 * The methods that change consensus, by the API group that holds them: proposing or discarding a vote to add or remove
 * a validator. Sent to a majority of validators they add or remove validators (and cancel the rotation client's
 * votes), so no group holding one is enabled on an RPC reachable from outside unless the operator opts that node in
 * (`lacchain:nodes[i].rpc.allowConsensusVotesFromOutside`).
 */
export const CONSENSUS_VOTE_METHODS = {
  CLIQUE: ['clique_propose', 'clique_discard'],
  IBFT: ['ibft_proposeValidatorVote', 'ibft_discardValidatorVote'],
  QBFT: ['qbft_proposeValidatorVote', 'qbft_discardValidatorVote'],
} as const satisfies Partial<Record<RpcApiGroup, readonly string[]>>;

/** The API groups holding a consensus vote method (CONSENSUS_VOTE_METHODS). */
export const CONSENSUS_RPC_APIS = Object.keys(CONSENSUS_VOTE_METHODS) as (keyof typeof CONSENSUS_VOTE_METHODS)[];

/** Defaults of the `lacchain:rpc` setting (the exposure's is the node type's: core/catalog/nodeTypes.ts). */
export const RPC_DEFAULTS = {
  /** Besu's own default: at most 80 open RPC connections. */
  maxActiveConnections: 80,
  /** The proxy's largest request body (nginx size). */
  proxyMaxBodySize: '1m',
  /** Requests per second and client address through the proxy, and the burst allowed above it. */
  proxyRequestsPerSecond: 20,
  proxyBurst: 40,
  /** Connections open at once per client address through the proxy; beyond it the proxy answers 429. */
  proxyMaxConnectionsPerClient: 20,
  /** Permissions of a password user when none are given: every method. */
  userPermissions: ['*:*'],
} as const;

/**
 * Methods the start step's identity check and the day-2 operations (`npm run node -- status|check`) call. With
 * authentication on they are exempt from it (`rpc-http-api-methods-no-auth`): read-only facts the network already
 * knows, so the checks need no token and no password lives on the operator's machine or in a script.
 */
export const CHECK_METHODS = ['net_enode', 'net_peerCount', 'eth_blockNumber', 'eth_syncing', 'web3_clientVersion'];

/**
 * How long the day-2 operations wait for one JSON-RPC answer of a node (curl's `--max-time` on a machine, the answer's
 * bound on a cluster), its body included. A node that answers in milliseconds when idle can take seconds on a busy
 * machine (a fresh clone's CI run at load 12 read a 5 s bound as no answer); one that has not answered by then is shown
 * as not answering.
 */
export const RPC_ANSWER_SECONDS = 10;

/** Config keys of RPC authentication, limits and exemptions (their presence depends on the release). */
export const RPC_OPTIONS = {
  noAuthMethods: 'rpc-http-api-methods-no-auth',
  jwtAlgorithm: 'rpc-http-authentication-jwt-algorithm',
  maxActiveConnections: 'rpc-http-max-active-connections',
} as const;

/** The first known release that accepts an option, or undefined. */
export function firstReleaseWith(option: string): string | undefined {
  return KNOWN_RELEASES.find((release) => acceptedOptions(release).has(option));
}

/** Label and annotation that record the operator's explicit override of the RPC safety rules (plan and policy). */
export const UNSAFE_RPC_OVERRIDE_LABEL = 'lacchain.net/unsafe-rpc-override';
export const UNSAFE_RPC_OVERRIDE_ANNOTATION = 'lacchain.net/unsafe-rpc';

/**
 * How the reverse proxy bounds what slow or silent clients hold (bench/proxyLoad.ts measures it): a small body
 * buffer per request that spills to a temporary file (the body limit is the setting's), and time-outs for headers,
 * bodies, answers and idle connections, so a client that sends slowly cannot hold a worker's memory for long.
 */
export const PROXY_CLIENT_BOUNDS = {
  /** In-memory buffer of a request body; the rest of a larger body waits in a temporary file. */
  bodyBufferSize: '16k',
  /** Buffers for a long request line or header: this many of this size at most. */
  largeHeaderBuffers: '4 8k',
  /** Seconds a client may take between two reads of its headers or body, or of the answer, before it is closed. */
  clientTimeoutSeconds: 10,
  /** Seconds an idle kept-alive connection stays open. */
  keepaliveSeconds: 15,
} as const;

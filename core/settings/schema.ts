/**
 * The shapes of the operator's settings files, with zod: the stack config (`Pulumi.<stack>.yaml`),
 * a Kubernetes node's values file (`values/<typenode>.yml`, `deploy` section) and an SSH node's inventory.
 */
import { z } from 'zod';
import { PORTS } from '../catalog/ports';
import { DEFAULT_SSH_PORT, DEFAULT_SSH_USER } from '../catalog/defaults';
import { MAX_START_TIMEOUT_SECONDS, MIN_START_TIMEOUT_SECONDS, START_TIMEOUT_SECONDS } from '../catalog/remote';
import { JWT_ALGORITHMS, RPC_API_GROUPS, RPC_AUTH_METHODS, RPC_DEFAULTS, RPC_EXPOSURES } from '../catalog/rpc';
import {
  bool,
  companionVersion,
  containerImage,
  contractAddress,
  email,
  hostAddress,
  HOSTNAME_PATTERN,
  hostname,
  httpsUrl,
  imageDigest,
  ipv4,
  kubernetesLabel,
  kubernetesSubdomain,
  nodeName,
  nodeType,
  port,
  releaseUrlTemplate,
  releaseVersion,
  resourceLabel,
  serverUrl,
  sha256Digest,
  sshHostKey,
  storageSize,
  strict,
  text,
  unixUser,
  nodeHome,
  serviceName,
} from './fields';

const TARGET = 'kubernetes or ssh';
const START_TIMEOUT = `a whole number of seconds from ${MIN_START_TIMEOUT_SECONDS} to ${MAX_START_TIMEOUT_SECONDS}`;

/** An SSH node's inventory: the seed's inventory elements, plus how to reach the machine. */
export const inventorySchema = strict({
  /** The address this machine uses to reach the remote one (IP or DNS name). */
  host: hostAddress,
  /** SSH port. */
  port: port.default(DEFAULT_SSH_PORT),
  /** The user to log in as (sudo is used when it is not root). */
  user: unixUser.default(DEFAULT_SSH_USER),
  /** The remote machine's SSH host key: the connection refuses any other. Required, except with accept_any_host_key. */
  host_key: sshHostKey.optional(),
  /** Test networks only: connect without a pinned host key (the node key then goes to whatever answers); flagged. */
  accept_any_host_key: bool.default(false),
  /** The node's public IPv4 address: advertised as its p2p host, part of its enode. */
  node_ip: ipv4,
  /** The node's name on the network. */
  node_name: nodeName,
  /** The operator's contact e-mail. */
  node_email: email,
  /** The Besu release to run. */
  node_release_version: releaseVersion.optional(),
  /** A DNS name of the machine, added to the TLS certificate. */
  dns_name: hostname.optional(),
  /** The node's home folder on the machine. */
  node_home: nodeHome.optional(),
  /** The systemd service name (also the log file prefix). */
  node_service: serviceName.optional(),
  /** Where releases are downloaded from: an https: or file: URL template holding {version}. */
  release_url: releaseUrlTemplate.optional(),
  /** SHA-256 of the release archive; required for a release whose digest the catalog does not pin. */
  release_sha256: sha256Digest.optional(),
  /** How long the start step waits for the node to answer after a (re)start; a large database opens slowly. */
  start_timeout_seconds: z
    .number({ error: START_TIMEOUT })
    .int({ error: START_TIMEOUT })
    .min(MIN_START_TIMEOUT_SECONDS, { error: START_TIMEOUT })
    .max(MAX_START_TIMEOUT_SECONDS, { error: START_TIMEOUT })
    .default(START_TIMEOUT_SECONDS),
  /** Deploy on a machine below the network's minimum hardware anyway. */
  allow_below_minimum_hardware: bool.default(false),
});

const list = <T extends z.ZodType>(item: T, what: string) =>
  z.array(item, { error: `a list of ${what}` }).min(1, { error: `a list of at least one ${what.replace(/s$/, '')}` });

const API = `an API group: one of ${RPC_API_GROUPS.join(', ')}`;
/** A Besu API group, as written in rpc-http-api (upper case). */
const rpcApi = z.enum(RPC_API_GROUPS, { error: API });

const ALLOWED_HOST = 'a host name or IPv4 address the RPC answers to, such as rpc.example.org, or * (any host)';
/** An entry of the host allowlist. */
const allowedHost = z
  .string({ error: ALLOWED_HOST })
  .refine((v) => v === '*' || z.ipv4().safeParse(v).success || HOSTNAME_PATTERN.test(v), { error: ALLOWED_HOST });

const ORIGIN = 'an origin such as https://app.example.org (scheme, host and optional port), or *';
/** A CORS origin. */
const corsOrigin = z
  .string({ error: ORIGIN })
  .regex(/^(\*|https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?)$/, { error: ORIGIN });

const METHOD = 'a JSON-RPC method name such as eth_chainId';
/** A JSON-RPC method name. */
const rpcMethod = z.string({ error: METHOD }).regex(/^[a-z0-9]+_[A-Za-z0-9]+$/, { error: METHOD });

const USER_NAME = 'a user name of letters, digits, dots, hyphens and underscores, 1 to 64 characters';
const PERMISSION = 'a permission <api>:<method> such as *:*, net:* or eth:blockNumber';

const WHOLE = (min: number, max: number) => `a whole number from ${min} to ${max}`;
const whole = (min: number, max: number) =>
  z
    .number({ error: WHOLE(min, max) })
    .int({ error: WHOLE(min, max) })
    .min(min, { error: WHOLE(min, max) })
    .max(max, { error: WHOLE(min, max) });

const BODY_SIZE = 'an nginx size such as 1m or 512k (1k to 100m)';

/** The RPC's reverse proxy limits. */
export const rpcProxySchema = strict({
  /** Largest JSON-RPC request body through the proxy. */
  maxBodySize: z
    .string({ error: BODY_SIZE })
    .regex(/^([1-9][0-9]{0,5}k|([1-9]|[1-9][0-9]|100)m)$/, { error: BODY_SIZE })
    .default(RPC_DEFAULTS.proxyMaxBodySize),
  /** Requests per second per client address. */
  requestsPerSecond: whole(1, 10000).default(RPC_DEFAULTS.proxyRequestsPerSecond),
  /** Requests allowed above the rate in a burst. */
  burst: whole(0, 100000).default(RPC_DEFAULTS.proxyBurst),
  /** Connections open at once per client address. */
  maxConnectionsPerClient: whole(1, 10000).default(RPC_DEFAULTS.proxyMaxConnectionsPerClient),
});

/** RPC authentication: `password` (users, passwords in lacchain:rpcPasswords) or `jwt` (the operator's public key). */
export const rpcAuthenticationSchema = strict({
  method: z.enum(RPC_AUTH_METHODS, { error: `one of ${RPC_AUTH_METHODS.join(', ')}` }),
  /** password: the users. */
  users: z
    .array(
      strict({
        name: z.string({ error: USER_NAME }).regex(/^[A-Za-z0-9._-]{1,64}$/, { error: USER_NAME }),
        permissions: z
          .array(z.string({ error: PERMISSION }).regex(/^(\*|[a-z0-9]+):(\*|[A-Za-z0-9_]+)$/, { error: PERMISSION }), {
            error: `a list of permissions (${PERMISSION})`,
          })
          .min(1, { error: `a list of at least one permission (${PERMISSION})` })
          .optional(),
      }),
      { error: 'a list of users, each { name, permissions? }' },
    )
    .min(1, { error: 'a list of at least one user' })
    .optional(),
  /** jwt: the public key, PEM text or a file relative to the stack config. */
  publicKey: text.optional(),
  /** jwt: the signature algorithm (Besu's default RS256 when absent). */
  algorithm: z.enum(JWT_ALGORITHMS, { error: `one of ${JWT_ALGORITHMS.join(', ')}` }).optional(),
});

/**
 * `lacchain:rpc`: JSON-RPC access and authentication, the default of every node of the stack; a node's own `rpc`
 * (in `lacchain:nodes`) replaces the fields it gives. Absent fields take the defaults of core/catalog/rpc.ts
 * (RPC_DEFAULTS) and the node type's (NODE_TYPE_FACTS), filled in by core/settings/rpcSetting.ts.
 */
export const rpcSchema = strict({
  /** API groups enabled; default the node type's. */
  apis: list(rpcApi, 'API groups').optional(),
  /** Where the RPC is reachable; default the node type's (validators and bootnodes internal, writers public). */
  exposure: z.enum(RPC_EXPOSURES, { error: `one of ${RPC_EXPOSURES.join(', ')}` }).optional(),
  /** Extra host names the RPC answers to (besides localhost, 127.0.0.1, the node's addresses and DNS name). */
  hostAllowlist: list(allowedHost, 'host names').optional(),
  /** Origins browsers may call the RPC from (none by default). */
  corsOrigins: list(corsOrigin, 'origins').optional(),
  /** Authentication; none by default. */
  authentication: rpcAuthenticationSchema.optional(),
  /** Methods callable without authentication (besides the checks' read-only methods). */
  noAuthMethods: list(rpcMethod, 'method names').optional(),
  /** Allow ADMIN, DEBUG, TXPOOL, PERM or CORS * on an RPC reachable from outside (default false); the policy flags it. */
  allowUnsafeApis: bool.optional(),
  /**
   * One node only (`lacchain:nodes[i].rpc`): let its RPC reachable from outside serve the methods that propose and
   * discard validator votes (IBFT, QBFT, CLIQUE groups). Default false; the policy flags it.
   */
  allowConsensusVotesFromOutside: bool.optional(),
  /** Besu's rpc-http-max-active-connections (from 21.1.2); default Besu's 80. */
  maxActiveConnections: whole(1, 10000).optional(),
  /** The reverse proxy's limits. */
  proxy: rpcProxySchema.optional(),
});

/** One node of the stack, as listed in `lacchain:nodes`. */
export const stackNodeSchema = strict({
  /** The node's name in this stack (resource names, outputs). */
  name: resourceLabel,
  /** writer, validator or bootnode. */
  typenode: nodeType,
  /** Where the node runs. */
  target: z.enum(['kubernetes', 'ssh'], { error: TARGET }),
  /** Kubernetes nodes: the values file, default values/<typenode>.yml. */
  values: text.optional(),
  /** SSH nodes: the inventory elements. */
  inventory: inventorySchema.optional(),
  /** This node's JSON-RPC access: its fields replace the stack's `lacchain:rpc` fields of the same name. */
  rpc: rpcSchema.optional(),
});

/** What every companion service has: on/off, the release a machine installs, the image a cluster runs. */
const companionFields = {
  /** Run it (default: on for the node type that needs it, on both networks). */
  enabled: bool.optional(),
  /** The release installed on a machine (x.y.z). */
  version: companionVersion.optional(),
  /** Where a machine downloads the executable from (https; {version} is replaced). */
  releaseUrl: httpsUrl.optional(),
  /** SHA-256 of that executable: required for SSH nodes that run it (nobody publishes one). */
  sha256: sha256Digest.optional(),
  /** The container image a Kubernetes node runs it from. */
  image: containerImage.optional(),
  /** That image's registry digest (sha256:…), pinning it in the pod: it receives the node key. */
  imageDigest: imageDigest.optional(),
};

/** `lacchain:companions`: the network's companion services beside Besu, for every node of the stack that runs them. */
export const companionsSchema = strict({
  /** The writer's relay signer (gas model). */
  relaySigner: strict({
    ...companionFields,
    /** The network's relay hub contract (default: the network's). */
    relayHubContract: contractAddress.optional(),
  }).optional(),
  /** The validator's rotation client. */
  rotationValidator: strict({
    ...companionFields,
    /** The network's validator rotation contract (default: the network's). */
    rotationContract: contractAddress.optional(),
  }).optional(),
  /** The network's monitoring client (ethstats-cli), on every node. */
  ethstats: strict({
    /** Run it (default: on for every node, on both networks). */
    enabled: bool.optional(),
    /** The container image it runs from, on both paths (default: the reference's docker.io/alethio/ethstats-cli:latest). */
    image: containerImage.optional(),
    /** The image's registry digest (sha256:…): required for SSH nodes that run it, and pins the image in pods too. */
    imageDigest: imageDigest.optional(),
    /** The network's ethstats server (default: the network's). */
    serverUrl: serverUrl.optional(),
  }).optional(),
});

const SSH_KEY = 'an SSH private key (PEM or OpenSSH, beginning with -----BEGIN), set with pulumi config set --secret';
const RPC_PASSWORDS = 'a mapping from RPC user name to password, set with --secret';
const NODE_KEYS = 'a mapping from node name to node private key (64 hex digits), set with --secret';

/** How the engine's text of each top-level key is read: as it is, as true/false, or as JSON (see engineConfig.ts). */
export type ConfigKeyKind = 'text' | 'boolean' | 'list' | 'mapping';

/** One top-level key of the stack config: its shape, how the engine's text of it is read, and whether it is secret. */
interface StackKey<S extends z.ZodType> {
  schema: S;
  kind: ConfigKeyKind;
  /** It must be set as a secret (`pulumi config set --secret`): a plain value is refused. */
  secret?: true;
}
const key = <S extends z.ZodType>(schema: S, kind: ConfigKeyKind, secret?: true): StackKey<S> => ({
  schema,
  kind,
  ...(secret ? { secret } : {}),
});

/**
 * Every `lacchain:` key of a stack config file, in the order messages list them: the one table the schema, the
 * secret keys and the key kinds are made from. Keys keep their namespace so messages name them as written.
 */
const STACK_KEYS = {
  'lacchain:network': key(text, 'text'),
  'lacchain:nodes': key(
    z.array(stackNodeSchema, { error: 'a list of nodes' }).min(1, { error: 'a list of at least one node' }),
    'list',
  ),
  'lacchain:sshPrivateKey': key(
    z
      .string({ error: SSH_KEY })
      .refine((v) => v.trimStart().startsWith('-----BEGIN'), { error: SSH_KEY })
      .optional(),
    'text',
    true,
  ),
  // Each key's value is checked by the loader, which knows how to describe a bad key without showing it.
  'lacchain:nodeKeys': key(z.record(z.string(), z.unknown(), { error: NODE_KEYS }).optional(), 'mapping', true),
  'lacchain:genesisFile': key(text.optional(), 'text'),
  'lacchain:kubeContext': key(text.optional(), 'text'),
  'lacchain:allowKeyDeletion': key(bool.default(false), 'boolean'),
  'lacchain:supportContact': key(text.optional(), 'text'),
  'lacchain:rpc': key(rpcSchema.optional(), 'mapping'),
  'lacchain:companions': key(companionsSchema.optional(), 'mapping'),
  // Each password is checked by the loader, which never shows it.
  'lacchain:rpcPasswords': key(z.record(z.string(), z.unknown(), { error: RPC_PASSWORDS }).optional(), 'mapping', true),
};
type StackKeys = typeof STACK_KEYS;

/** The `lacchain:` settings of a stack config file. */
export const stackConfigSchema = strict(
  Object.fromEntries(Object.entries(STACK_KEYS).map(([name, k]) => [name, k.schema])) as {
    [K in keyof StackKeys]: StackKeys[K]['schema'];
  },
);

/** The settings that must be set as secrets (`pulumi config set --secret`): a plain value is refused. */
export const SECRET_CONFIG_KEYS: readonly string[] = Object.entries(STACK_KEYS)
  .filter(([, k]) => 'secret' in k)
  .map(([name]) => name);

/** The kind of every top-level key of the stack config. */
export const CONFIG_KEY_KINDS: Readonly<Record<string, ConfigKeyKind>> = Object.fromEntries(
  Object.entries(STACK_KEYS).map(([name, k]) => [name, k.kind]),
);

/** The `deploy` section of a Kubernetes node's values file (the seed's Helm values, same field names). */
export const deploySchema = strict({
  /** Helm name of the network: main-net or open-protest-net. */
  network: text,
  /** writer, validator or bootnode. */
  typenode: nodeType,
  /** The static public IP of the LoadBalancer Service. */
  publicIP: ipv4,
  p2p: strict({
    /** The IP advertised to peers (part of the enode): the node's permissioned IP. */
    host: ipv4,
    /** The p2p port, TCP and UDP. */
    port: port.default(PORTS.p2p),
  }),
  /** The Kubernetes worker the pod is pinned to (its egress IP must not change). */
  workerName: kubernetesSubdomain,
  /** The node's name on the network. */
  nodeName: nodeName,
  /** The operator's contact e-mail. */
  nodeEmail: email,
  /** A DNS name for the node (optional). */
  dnsName: hostname.optional(),
  /** Kubernetes namespace, default lacchain. */
  namespace: kubernetesLabel.optional(),
  /** The Besu release to run (image tag). */
  releaseVersion: releaseVersion.optional(),
  /** The registry digest of that release's Besu image, pinning it (`hyperledger/besu:<release>@sha256:…`). */
  imageDigest: imageDigest.optional(),
  /** Writers: the registry digest of the reverse proxy's image, pinning it. */
  proxyImageDigest: imageDigest.optional(),
  /** Storage class of the data volume (the cluster's default when absent). */
  storageClass: kubernetesSubdomain.optional(),
  /** Size of the data volume (the network's size when absent). */
  volumeSize: storageSize.optional(),
});

/** A values file: only the `deploy` section. */
export const valuesFileSchema = strict({ deploy: deploySchema });

export type StackConfigInput = z.infer<typeof stackConfigSchema>;
export type StackNodeInput = z.infer<typeof stackNodeSchema>;
export type RpcInput = z.infer<typeof rpcSchema>;
export type CompanionsInput = z.infer<typeof companionsSchema>;
export type DeployInput = z.infer<typeof deploySchema>;

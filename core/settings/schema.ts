/**
 * The shapes of the operator's settings files, with zod: the stack config (`Pulumi.<stack>.yaml`),
 * a Kubernetes node's values file (`values/<typenode>.yml`, `deploy` section) and an SSH node's inventory. Each
 * setting carries its meaning and, where a loader fills it in, its default in words (`setting()`, settingDoc.ts): the
 * settings docs and `npm run init` are made from them.
 */
import { z } from 'zod';
import { PORTS } from '../catalog/ports';
import { METRICS } from '../catalog/metrics';
import {
  BESU_CHANGES,
  BESU_IMAGE_REPOSITORY,
  HELM_CHART_OPTIONS,
  LAST_JFROG_RELEASE,
  RELEASE_ARCHIVE_SHA256,
} from '../catalog/besu';
import {
  BACKUP_SCHEDULE_NAMES,
  BACKUP_TOOL,
  CLUSTER_REPOSITORY_MOUNT,
  DEFAULT_BACKUPS_KEPT,
  defaultMachineRepository,
  MAX_BACKUPS_KEPT,
  KUBECTL_IMAGE,
} from '../catalog/backups';
import { ETHSTATS, RELEASED_COMPANIONS } from '../catalog/companions';
import {
  DEFAULT_NAMESPACE,
  DEFAULT_NODE_HOME,
  DEFAULT_NODE_SERVICE,
  DEFAULT_SSH_PORT,
  DEFAULT_SSH_USER,
} from '../catalog/defaults';
import { PROXY_IMAGE } from '../catalog/kubernetes';
import { DEFAULT_LOAD_BALANCER_CLOUD, LOAD_BALANCER_CLOUDS, LOAD_BALANCER_FACTS } from '../catalog/loadBalancers';
import {
  DEFAULT_KEY_CUSTODY,
  DEFAULT_KEY_SECRET_ENTRY,
  KEY_CUSTODIES,
  KEY_CUSTODY_FACTS,
  TARGETS,
} from '../catalog/keyCustody';
import { NETWORKS, stackOfNetwork } from '../catalog/networks';
import { NODE_TYPE_FACTS, NODE_TYPES, NodeType, UNSAFE_RPC_APIS } from '../catalog/nodeTypes';
import { MAX_START_TIMEOUT_SECONDS, MIN_START_TIMEOUT_SECONDS, START_TIMEOUT_SECONDS } from '../catalog/remote';
import { SSH_AGENT_VARIABLE, SSH_AUTHENTICATIONS } from '../catalog/sshLogin';
import { DEFAULT_GATE_TIMEOUT_SECONDS, MAX_GATE_TIMEOUT_SECONDS, MIN_GATE_TIMEOUT_SECONDS } from '../catalog/rollout';
import {
  CONSENSUS_RPC_APIS,
  JWT_ALGORITHMS,
  RPC_API_GROUPS,
  RPC_AUTH_METHODS,
  RPC_DEFAULTS,
  RPC_EXPOSURES,
} from '../catalog/rpc';
import {
  backupRepository,
  bool,
  companionVersion,
  containerImage,
  contractAddress,
  email,
  hostAddress,
  HOSTNAME_PATTERN,
  hostname,
  operatingSystem,
  httpsUrl,
  imageDigest,
  ipv4,
  javaRuntimeUrl,
  kubernetesLabel,
  kubernetesLabels,
  kubernetesSubdomain,
  nodePublicKey,
  secretEntry,
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
import { setting } from './settingDoc';
import { ENCRYPTED_VALUE } from './sources';

/** The networks a stack may deploy to (the deprecated one is refused). */
const SUPPORTED_NETWORKS = Object.values(NETWORKS).filter((network) => !network.deprecated);
/** The networks' default Besu release, in words. */
const NETWORK_RELEASE = `the network's (${[...new Set(SUPPORTED_NETWORKS.map((n) => n.defaultBesuVersion))].join(' or ')})`;
/** The releases whose archive digest the catalog pins. */
const PINNED_RELEASES = Object.keys(RELEASE_ARCHIVE_SHA256).join(', ');

/** Where a node runs. */
const TARGET = TARGETS.join(' or ');
/** Where a node's key lives. */
const KEY_CUSTODY = KEY_CUSTODIES.map((c) => `${c} (${KEY_CUSTODY_FACTS[c].targets.join(' or ')} nodes)`).join(', ');
const NO_NODE =
  'a list of at least one node: the stack holds none yet; `npm run init -- --stack <stack>` adds yours (README, "First steps")';
const START_TIMEOUT = `a whole number of seconds from ${MIN_START_TIMEOUT_SECONDS} to ${MAX_START_TIMEOUT_SECONDS}`;

/** An SSH node's inventory: the seed's inventory elements, plus how to reach the machine. */
export const inventorySchema = strict({
  host: setting(hostAddress, { description: 'The address this machine uses to reach the remote one.' }),
  port: setting(port.default(DEFAULT_SSH_PORT), { description: 'The SSH port.' }),
  user: setting(unixUser.default(DEFAULT_SSH_USER), {
    description: 'The login user; any other user than root needs passwordless sudo.',
  }),
  host_key: setting(sshHostKey.optional(), {
    required: 'yes, unless `accept_any_host_key`',
    description:
      "The machine's SSH host key, e.g. from `ssh-keyscan -t ed25519 <host> \\| cut -d' ' -f2-`, checked on a channel you trust; `npm run init` reads it itself and writes it once you confirm its SHA-256 fingerprint (or with `--host-key-fingerprint SHA256:…`, when it matches). Any other key is refused, by `pulumi up` and `npm run node` alike: the node key is sent over this connection.",
  }),
  accept_any_host_key: setting(bool.default(false), {
    description:
      'Test networks only: `true` connects without a pinned `host_key`, so the node key goes to whatever answers at `host`. Refused on mainnet and beside a `host_key`; the offline plan and the policy pack flag it (`ssh-host-key-opt-out`), `npm run node` warns each time.',
  }),
  node_ip: setting(ipv4, { description: "The node's public IPv4 address: advertised to peers, part of the enode." }),
  node_name: setting(nodeName, { description: "The node's name on the network." }),
  node_email: setting(email, { description: 'Your contact e-mail.' }),
  node_release_version: setting(releaseVersion.optional(), {
    default: NETWORK_RELEASE,
    description: 'The Besu release.',
  }),
  dns_name: setting(hostname.optional(), { description: 'A DNS name of the machine (added to the TLS certificate).' }),
  os: setting(operatingSystem.optional(), {
    description:
      "The machine's system, `<ID> <VERSION_ID>` of its `/etc/os-release` (e.g. `ubuntu 24.04`): `npm run init` and `npm run plan` refuse, before any `pulumi up`, a system the `preflight` step would refuse or one that refuses the node type. `npm run init` writes it, read from the machine over SSH, when the host key is pinned. Without it the `preflight` step is the first to check.",
  }),
  node_home: setting(nodeHome.optional(), {
    default: `\`${DEFAULT_NODE_HOME}\``,
    description:
      "The node's home folder. Two nodes on one machine need two homes, neither inside the other (not in another node's `data/`, nor holding another node's home).",
  }),
  node_service: setting(serviceName.optional(), {
    default: `\`${DEFAULT_NODE_SERVICE}\``,
    description:
      "The systemd service name (also the log file prefix). Two nodes on one machine need two names, and the units of one (its service and its companions' `<node_service>-<companion>`, e.g. `besu-ethstats`) may not be the other's.",
  }),
  release_url: setting(releaseUrlTemplate.optional(), {
    default: `each release's published sources in order, the pinned digest deciding: up to ${LAST_JFROG_RELEASE} the JFrog URL Besu's changelog gives, then its GitHub release asset; from 24.3.0 the GitHub asset alone (the \`release\` step says which served it)`,
    description:
      'Where releases are downloaded: a mirror (redirects must stay on https), or a path on the machine for air-gapped machines; it alone is tried.',
  }),
  release_sha256: setting(sha256Digest.optional(), {
    required: 'for releases without a pinned digest',
    description: `The SHA-256 of \`besu-<version>.tar.gz\`. The catalog (\`core/catalog/besu.ts\`) pins the digests the Besu project published (${PINNED_RELEASES}); any other release needs this field, and with the default \`release_url\` it must equal the pinned digest. Change it together with \`node_release_version\`.`,
  }),
  java_runtime_url: setting(javaRuntimeUrl.optional(), {
    default: "Eclipse Temurin's JRE for the machine's architecture (`core/catalog/java.ts`)",
    description:
      "Where a machine whose own package sources lack the Java the release needs (Debian 11 and 12 for Java 21) downloads the pinned runtime instead: a mirror of the JRE archive, or a path on the machine for air-gapped machines. It is unpacked under `/opt/lacchain-java` and used by the node's launcher only. Give `java_runtime_sha256` with it.",
  }),
  java_runtime_sha256: setting(sha256Digest.optional(), {
    required: 'with `java_runtime_url`',
    description:
      'The SHA-256 of the archive at `java_runtime_url`; the `packages` step checks the download against it.',
  }),
  start_timeout_seconds: setting(
    z
      .number({ error: START_TIMEOUT })
      .int({ error: START_TIMEOUT })
      .min(MIN_START_TIMEOUT_SECONDS, { error: START_TIMEOUT })
      .max(MAX_START_TIMEOUT_SECONDS, { error: START_TIMEOUT })
      .default(START_TIMEOUT_SECONDS),
    {
      description:
        'How long the `start` step waits for the node to answer after a (re)start: a large database takes minutes to open.',
    },
  ),
  allow_below_minimum_hardware: setting(bool.default(false), {
    description: "`true` deploys on a mainnet machine below the network's minimum hardware anyway.",
  }),
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
  maxBodySize: setting(
    z
      .string({ error: BODY_SIZE })
      .regex(/^([1-9][0-9]{0,5}k|([1-9]|[1-9][0-9]|100)m)$/, { error: BODY_SIZE })
      .default(RPC_DEFAULTS.proxyMaxBodySize),
    { description: 'Largest request body through the proxy (`client_max_body_size`).' },
  ),
  requestsPerSecond: setting(whole(1, 10000).default(RPC_DEFAULTS.proxyRequestsPerSecond), {
    description:
      'Requests per second per client address through the proxy; beyond it (and `burst`) the proxy answers 429.',
  }),
  burst: setting(whole(0, 100000).default(RPC_DEFAULTS.proxyBurst), {
    description: 'Requests a client address may send above `requestsPerSecond` in a burst.',
  }),
  maxConnectionsPerClient: setting(whole(1, 10000).default(RPC_DEFAULTS.proxyMaxConnectionsPerClient), {
    description:
      'Connections open at once per client address on the proxy (`limit_conn`); beyond it the proxy answers 429. Every server of the proxy also keeps a request body in a 16 KiB buffer (a larger one waits in a temporary file) and closes a client that is silent for 10 s while sending its headers or body or reading the answer (`core/catalog/rpc.ts`, `PROXY_CLIENT_BOUNDS`), so many slow clients cannot exhaust its memory ([benchmarks](benchmarks.md)).',
  }),
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

const byNodeType = (fact: (type: NodeType) => string) =>
  NODE_TYPES.map((type) => `${type} \`${fact(type)}\``).join('; ');

/**
 * `lacchain:rpc`: JSON-RPC access and authentication, the default of every node of the stack; a node's own `rpc`
 * (in `lacchain:nodes`) replaces the fields it gives. Absent fields take the defaults of core/catalog/rpc.ts
 * (RPC_DEFAULTS) and the node type's (NODE_TYPE_FACTS), filled in by core/settings/rpcSetting.ts.
 */
export const rpcSchema = strict({
  apis: setting(list(rpcApi, 'API groups').optional(), {
    default: `${byNodeType((type) => NODE_TYPE_FACTS[type].rpcApis.join(','))}; in each, ${CONSENSUS_RPC_APIS.join(', ')} only while nothing outside reaches the RPC`,
    description: `API groups enabled. While the RPC is reachable from outside, ${UNSAFE_RPC_APIS.join(', ')} are refused unless \`allowUnsafeApis\`, and ${CONSENSUS_RPC_APIS.join(', ')} (their methods propose and discard validator votes) unless the node's \`allowConsensusVotesFromOutside\`.`,
  }),
  exposure: setting(z.enum(RPC_EXPOSURES, { error: `one of ${RPC_EXPOSURES.join(', ')}` }).optional(), {
    default: `the node type's: ${byNodeType((type) => NODE_TYPE_FACTS[type].rpcExposure)}`,
    description:
      "`public`: Besu's 4545 on the node's public address, as the reference Helm chart has it (the reference Ansible roles keep 4545 on the loopback, Besu's default `rpc-http-host`, and reach the outside through nginx: `roles/lacchain-writer-node/templates/pantheon-config-*.j2` of LACNetNetworks/besu-networks), plus the proxies. `tls-only`: only through the reverse proxy (443 with TLS on a machine; the writer's 80 on both paths). `internal`: only inside the machine or the cluster. A writer's default is `public` on both paths, a machine's too: both of the network's guides send applications to 4545 (DEPLOY_NODE.md lists it among the ports to open for them, DEPLOY_NODE_HELM.md reads the enode from it), and every writer this project deployed answers there; on a machine `tls-only` is the Ansible role's layout (4545 on the loopback, the outside through the proxy's 443 and 80), a one-line choice for a writer whose applications use TLS.",
  }),
  hostAllowlist: setting(list(allowedHost, 'host names').optional(), {
    description:
      "Extra host names the RPC answers to, besides `localhost`, `127.0.0.1`, the node's IPs and `dnsName`. `*` (any host) only when written explicitly. Besu and the proxy both refuse other Hosts with 403.",
  }),
  corsOrigins: setting(list(corsOrigin, 'origins').optional(), {
    description:
      'Origins browsers may call from, e.g. `https://app.example.org`. `*` is refused on a public RPC unless `allowUnsafeApis`.',
  }),
  authentication: setting(rpcAuthenticationSchema.optional(), {
    default: 'off',
    description: `\`{method: password, users: [{name, permissions?}]}\`: Besu's credentials file with bcrypt hashes; \`POST /login {"username","password"}\` returns a token for \`Authorization: Bearer\`. \`permissions\` default \`${JSON.stringify(RPC_DEFAULTS.userPermissions)}\`. Or \`{method: jwt, publicKey: <PEM text or file>, algorithm?: ${JWT_ALGORITHMS[0]}…${JWT_ALGORITHMS[JWT_ALGORITHMS.length - 1]}}\`. Needs Besu 23.4.1 or newer, and an \`exposure\` that keeps logins and tokens off plain HTTP (below).`,
  }),
  noAuthMethods: setting(list(rpcMethod, 'method names').optional(), {
    description:
      "Methods callable without authentication. `net_enode`, `net_peerCount`, `eth_blockNumber`, `eth_syncing` and `web3_clientVersion` are always exempt, so the start step's identity check and `npm run node` keep working. `/liveness` and `/readiness` never need authentication.",
  }),
  allowUnsafeApis: setting(bool.optional(), {
    default: '`false`',
    description: `The explicit override for unsafe APIs (${UNSAFE_RPC_APIS.join(', ')}) or CORS \`*\` on a reachable RPC. Recorded as label \`lacchain.net/unsafe-rpc-override\` and annotation \`lacchain.net/unsafe-rpc\` (Kubernetes), or parameter \`UNSAFE_RPC_OVERRIDE\` of the \`node-files\` step (SSH); on mainnet every \`pulumi up\` refuses it (policy rule \`rpc-safe-on-public-ports\`), on testnet the offline plan and the policy pack flag it as a warning (\`rpc-outside-opt-in\`).`,
  }),
  allowConsensusVotesFromOutside: setting(bool.optional(), {
    default: '`false`',
    description: `A node's own \`rpc\` only (refused in \`lacchain:rpc\`): lets that node's RPC reachable from outside serve ${CONSENSUS_RPC_APIS.join(', ')}, whose \`*_proposeValidatorVote\`/\`*_discardValidatorVote\` sent to a majority of validators add or remove validators. Recorded like \`allowUnsafeApis\`, shown in the node's \`reachableFromOutside\` output, refused by every \`pulumi up\` on mainnet and flagged on testnet the same way.`,
  }),
  maxActiveConnections: setting(whole(1, 10000).optional(), {
    default: `${RPC_DEFAULTS.maxActiveConnections} (Besu's default)`,
    description: `\`rpc-http-max-active-connections\`, written when not ${RPC_DEFAULTS.maxActiveConnections}; Besu 21.1.2 or newer.`,
  }),
  proxy: setting(rpcProxySchema.optional(), { expand: true, description: "The reverse proxy's limits." }),
});

const TX_POOL_LEGACY = `from Besu ${BESU_CHANGES.layeredTxPool} it also writes \`tx-pool="legacy"\`, which that option needs (the layered pool, Besu's default there, refuses it)`;

/**
 * Besu options the network's Helm chart writes and its Ansible roles do not (LACNetNetworks/besu-networks): each off,
 * Besu's own default, on both paths unless set.
 */
export const besuOptionsSchema = strict({
  revertReason: setting(bool.optional(), {
    default: '`false` on both paths',
    description: `\`revert-reason-enabled\`: a failed transaction's reason in its receipt and its trace. The Helm chart turns it on, the Ansible roles leave it off; off by default because Besu warns that it "may use a significant amount of memory" (its revert reason page), and every node this project deployed so far runs without it (a change rewrites config.toml and restarts the node). Set \`true\` where your applications read revert reasons.`,
  }),
  txPoolRetentionHours: setting(whole(1, 100_000).optional(), {
    default: "Besu's (13 hours)",
    description: `\`tx-pool-retention-hours\`: how long a pending transaction stays in the pool. The Helm chart writes ${HELM_CHART_OPTIONS.txPoolRetentionHours}, the Ansible roles nothing; ${TX_POOL_LEGACY}. Not written unless set: the legacy pool it needs is the older one.`,
  }),
  txPoolMaxSize: setting(whole(1, 1_000_000).optional(), {
    default: "Besu's (4096 transactions)",
    description: `\`tx-pool-max-size\`: the most transactions the pool holds. The Helm chart writes ${HELM_CHART_OPTIONS.txPoolMaxSize}, the Ansible roles nothing; ${TX_POOL_LEGACY}. Not written unless set, as \`txPoolRetentionHours\`.`,
  }),
  accountPermissioning: setting(bool.optional(), {
    default: '`false` on both paths',
    description:
      "`permissions-accounts-contract-enabled` with the network's account contract (`permissions-accounts-contract-address`, 0x…8888): the node checks each transaction's sender against that contract. The Helm chart turns it on, the Ansible roles off; off by default: the roles most operators run leave it off and every node this project deployed so far runs without it (a change rewrites config.toml and restarts the node). Set `true` for the Helm chart's behaviour.",
  }),
});

/** One node of the stack, as listed in `lacchain:nodes`. */
export const stackNodeSchema = strict({
  name: setting(resourceLabel, { description: "The node's name in the stack, used in resource names and outputs." }),
  typenode: setting(nodeType, { description: 'The node type.' }),
  target: setting(z.enum(TARGETS, { error: TARGET }), {
    description: 'Where the node runs: a Kubernetes cluster, or a remote machine over SSH.',
  }),
  values: setting(text.optional(), {
    default: '`values/<typenode>.yml`',
    description: "Kubernetes nodes: the node's values file.",
  }),
  inventory: setting(inventorySchema.optional(), {
    required: 'SSH nodes',
    description: 'The inventory elements (below).',
  }),
  keyCustody: setting(z.enum(KEY_CUSTODIES, { error: KEY_CUSTODY }).optional(), {
    default: `\`${DEFAULT_KEY_CUSTODY}\``,
    description:
      "Where the node's private key lives ([Key custody](security.md#key-custody)). `stack`: in the stack's state (generated once, or imported with `lacchain:nodeKeys.<node>`), the enode known before the first start. `machine` (SSH nodes): made on the machine by the node-key step and never leaving it (not in the state, an output, a log or a backup); the enode is read back and known after the first `pulumi up`. `secret` (Kubernetes nodes): in a Secret you make with your own tooling (`keySecret`), mounted and never read by the program; the enode comes from `publicKey`.",
  }),
  keySecret: setting(kubernetesSubdomain.optional(), {
    required: '`keyCustody: secret`',
    description:
      "`keyCustody: secret`: the name of your Secret, in the node's namespace, holding the node's private key (one line of 64 hex digits, as Besu's key file). The program mounts it and never creates or reads it.",
  }),
  keySecretEntry: setting(secretEntry.optional(), {
    default: `\`${DEFAULT_KEY_SECRET_ENTRY}\``,
    description: '`keyCustody: secret`: the entry of `keySecret` that holds the key.',
  }),
  publicKey: setting(nodePublicKey.optional(), {
    required: '`keyCustody: secret`',
    description:
      "The node's public key, `0x` + 128 hex. `keyCustody: secret`: the public key of the key in `keySecret` (`besu public-key export`): the enode and address come from it, and the pod's key check refuses to start Besu (at every start of its container) and its companions on another key. `keyCustody: machine` (optional, recommended once known): the `publicKey` output of the first `pulumi up`, which pins the key: the node-key step then never makes a new key (on a new machine, say) and refuses a machine holding another. Without it, the key the first `pulumi up` accepted is recorded on the machine (root's `<node_home>/machine-public-key`) and pins it there.",
  }),
  besu: setting(besuOptionsSchema.optional(), {
    description:
      "This node's Besu options: the fields of `lacchain:besu` (below), each replacing the stack's field of that name for this node only.",
  }),
  rpc: setting(rpcSchema.optional(), {
    description:
      "This node's JSON-RPC access: the fields of `lacchain:rpc` (below), each replacing the stack's field of that name for this node only (a mapping such as `authentication` or `proxy` is replaced whole), plus `allowConsensusVotesFromOutside`, which only a node's own `rpc` may set. Example: a validator `internal` beside a public writer.",
  }),
});

const IMAGE_PINNING = '[Pinning images](kubernetes.md#pinning-images)';

/** What every companion service has: on/off, the release a machine installs, the image a cluster runs. */
const companionFields = {
  enabled: setting(bool.optional(), {
    default: '`true`',
    description:
      '`false` turns it off on every node of its type. On a machine, turning it off stops it and removes its service (its files stay).',
  }),
  version: setting(companionVersion.optional(), {
    default: "the catalog's (above)",
    description: 'The release a machine installs.',
  }),
  releaseUrl: setting(httpsUrl.optional(), {
    default: "the catalog's",
    description: 'Where a machine downloads the executable (redirects must stay on https).',
  }),
  sha256: setting(sha256Digest.optional(), {
    required: "for SSH nodes that run it, unless the catalog pins the release (the relay signer's catalog releases)",
    description: `The SHA-256 of that executable. The relay signer's executable is committed at its release tag and the rotation client's at the commit the catalog's URL names, and the catalog pins their git blob ids for its own releases (${catalogBlobs()}): with that release from the catalog's URL, the \`companions\` step checks the download against that id and no digest is needed. For another release, an own build or another URL, nobody publishes a digest, so download the file on a machine you trust, check it, and pin \`sha256sum\`'s answer: \`pulumi config set --path 'lacchain:companions.<companion>.sha256' <digest>\`. The \`companions\` step checks the download against every pin given before installing anything.`,
  }),
  image: setting(containerImage.optional(), {
    default: "the catalog's",
    description: 'The container image on Kubernetes.',
  }),
  imageDigest: setting(imageDigest.optional(), {
    default: 'the tag alone',
    description: `That image's registry digest: the pod runs \`<repository>@sha256:…\` (as the monitoring client's), so a moved tag changes nothing. The container receives the node key: on mainnet every \`pulumi up\` requires it (policy rule \`node-key-images-pinned\`), on testnet the policy flags its absence (${IMAGE_PINNING}). A digest written in \`image\` (\`…:tag@sha256:…\`) pins it too; this setting wins over it.`,
  }),
};

const NETWORK_CONTRACT = "The network's contract it works with.";

/** The catalog's pinned releases, for the docs: `relay signer 1.0.1: git blob d06a…`. */
function catalogBlobs(): string {
  return RELEASED_COMPANIONS.flatMap((c) =>
    Object.entries(c.releaseBlobs).map(([version, blob]) => `${c.name} \`${version}\`: git blob \`${blob}\``),
  ).join('; ');
}

/** `lacchain:companions`: the network's companion services beside Besu, for every node of the stack that runs them. */
export const companionsSchema = strict({
  /** The writer's relay signer (gas model). */
  relaySigner: strict({
    ...companionFields,
    relayHubContract: setting(contractAddress.optional(), { default: "the network's", description: NETWORK_CONTRACT }),
  }).optional(),
  /** The validator's rotation client. */
  rotationValidator: strict({
    ...companionFields,
    rotationContract: setting(contractAddress.optional(), { default: "the network's", description: NETWORK_CONTRACT }),
  }).optional(),
  /** The network's monitoring client (ethstats-cli), on every node. */
  ethstats: strict({
    enabled: setting(bool.optional(), {
      default: '`true`',
      description:
        '`false` turns it off on every node. On a machine, turning it off stops it and removes its service; its registration stays, and is used again when it is turned back on.',
    }),
    image: setting(containerImage.optional(), {
      default: `\`${ETHSTATS.defaultImage}\`, the reference's`,
      description: 'The container image it runs from, on both paths.',
    }),
    imageDigest: setting(imageDigest.optional(), {
      required: 'for SSH nodes on mainnet',
      description:
        "The image's registry digest. A machine pulls the image by this digest (`<repository>@<digest>`); nobody publishes one, so `npm run init` offers to read it with podman or docker when either is at hand (`--read-image-digest yes` without a terminal), or pull the image on a machine you trust, check it, and pin `podman image inspect --format '{{.Digest}}' <image>`: `pulumi config set --path 'lacchain:companions.ethstats.imageDigest' sha256:<digest>`. Required on mainnet; on a test network a machine without it pulls the tag, which the policy flags (`node-key-images-by-tag`, as a pod's image by tag). In a pod it pins the image too when given.",
    }),
    serverUrl: setting(serverUrl.optional(), {
      default: "the network's",
      description: "The network's ethstats server (`--server-url`).",
    }),
  }).optional(),
});

/** Backups of each node's chain data (`lacchain:backups`): where, when, how many, and before a release change. */
export const backupsSchema = strict({
  repository: setting(backupRepository.optional(), {
    default: `on a machine \`${defaultMachineRepository('<service>')}\`; on a cluster a volume of its own mounted at \`${CLUSTER_REPOSITORY_MOUNT}\``,
    description: `Where the backups go: a [restic](https://restic.net) repository, a folder on the machine or \`sftp:user@host:/folder\` (the machine's root logs in with its own SSH key). A repository on the node's own disk does not survive the disk: name another machine for that.`,
  }),
  beforeReleaseChange: setting(bool.default(true), {
    description:
      '`true` backs the chain data up, node stopped, just before `pulumi up` switches the node to another release, so that `npm run node -- rollback` can return to it; `false` upgrades without one.',
  }),
  schedule: setting(
    z.enum(BACKUP_SCHEDULE_NAMES, { error: `one of ${BACKUP_SCHEDULE_NAMES.join(', ')}` }).default('off'),
    {
      description:
        'Scheduled backups: a systemd timer on a machine, a CronJob on a cluster (`daily` at 03:17, `weekly` on Sundays at 03:17, `hourly` at :17). A restic copy stops the node while it copies; a VolumeSnapshot does not.',
    },
  ),
  keep: setting(
    z
      .number({ error: `a whole number from 1 to ${MAX_BACKUPS_KEPT}` })
      .int({ error: `a whole number from 1 to ${MAX_BACKUPS_KEPT}` })
      .min(1, { error: `a whole number from 1 to ${MAX_BACKUPS_KEPT}` })
      .max(MAX_BACKUPS_KEPT, { error: `a whole number from 1 to ${MAX_BACKUPS_KEPT}` })
      .default(DEFAULT_BACKUPS_KEPT),
    {
      description:
        "How many of a node's backups are kept, newest first; the ones taken before a release change are kept as well.",
    },
  ),
});

/** How a change that restarts several nodes rolls out (`lacchain:rollout`): one node at a time, each healthy first. */
export const rolloutSchema = strict({
  gateTimeoutSeconds: setting(
    whole(MIN_GATE_TIMEOUT_SECONDS, MAX_GATE_TIMEOUT_SECONDS).default(DEFAULT_GATE_TIMEOUT_SECONDS),
    {
      description:
        "How long a restarted node may take to be healthy again (it answers with its enode, has a peer, is within the readiness probe's blocks of the head and its head advances; a validator also proposes again) before the rollout stops there and the nodes after it stay as they were.",
    },
  ),
});

/** How the operator's Prometheus watches the cluster's nodes (`lacchain:monitoring`). Machines: `lacchain:metricsToken`. */
export const monitoringSchema = strict({
  scraper: setting(
    strict({
      namespace: setting(kubernetesLabel, { description: "The namespace of your Prometheus's pods." }),
      podLabels: setting(kubernetesLabels, {
        description:
          "Labels your Prometheus's pods carry, at least one, all of which a pod must have to be admitted (e.g. `app.kubernetes.io/name: prometheus`; with the CLI: `pulumi config set --path 'lacchain:monitoring.scraper.podLabels[\"app.kubernetes.io/name\"]' prometheus`).",
      }),
    }).optional(),
    {
      default: "none: the pods' metrics port admits nobody (the metrics are still pushed to the network)",
      description: `The Prometheus that scrapes the Kubernetes nodes: \`namespace\`, the namespace of its pods, and \`podLabels\`, labels they all carry, at least one (none would admit the whole namespace; e.g. \`app.kubernetes.io/name: prometheus\`). The pods' NetworkPolicy admits those pods, and nothing else, to the metrics port (${METRICS.podPort}). With the CLI: \`pulumi config set --path 'lacchain:monitoring.scraper.podLabels["app.kubernetes.io/name"]' prometheus\`.`,
    },
  ),
  prometheusOperator: setting(bool.default(false), {
    description:
      '`true` when your cluster runs the Prometheus Operator: each Kubernetes node gets a `ServiceMonitor` and a `PrometheusRule` (monitoring.coreos.com/v1, the alerts of `monitoring/alerts.yml` for that node). `false`: the pods carry the `prometheus.io/*` annotations, for the scrape job of `monitoring/prometheus-kubernetes.yml`. Needs `scraper`.',
  }),
  resourceLabels: setting(kubernetesLabels.default({}), {
    description:
      'With `prometheusOperator`: labels of the `ServiceMonitor` and `PrometheusRule`, those your Prometheus selects them by (kube-prometheus-stack: `release: <its release>`).',
  }),
});

const SSH_KEY = 'an SSH private key (PEM or OpenSSH, beginning with -----BEGIN), set with pulumi config set --secret';
const SSH_AUTHENTICATION = `one of ${SSH_AUTHENTICATIONS.join(', ')}`;
const RPC_PASSWORDS = 'a mapping from RPC user name to password, set with --secret';
const BACKUP_PASSWORD = 'a password of at least 12 characters, set with --secret';
const METRICS_TOKEN =
  'a token of 32 to 256 characters of letters, digits and . _ ~ + / = -, set with --secret (e.g. openssl rand -hex 32)';
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
  'lacchain:network': key(
    setting(text, {
      description: `${SUPPORTED_NETWORKS.map((n) => `\`${n.name}\` for stack \`${stackOfNetwork(n)}\``).join(', ')}.`,
    }),
    'text',
  ),
  'lacchain:nodes': key(
    setting(z.array(stackNodeSchema, { error: 'a list of nodes' }).min(1, { error: NO_NODE }), {
      description: 'The nodes of the stack: a list of entries (below).',
    }),
    'list',
  ),
  'lacchain:sshPrivateKey': key(
    setting(
      z
        .string({ error: SSH_KEY })
        .refine((v) => v.trimStart().startsWith('-----BEGIN'), { error: SSH_KEY })
        .optional(),
      {
        required: 'with `lacchain:sshAuthentication: privateKey`',
        description:
          'The SSH private key `pulumi up` logs in with when `lacchain:sshAuthentication` is `privateKey` (a runner without an ssh agent). It is kept in the stack file and the state, encrypted. Secret: `pulumi config set --secret lacchain:sshPrivateKey < ~/.ssh/id_ed25519`.',
      },
    ),
    'text',
    true,
  ),
  'lacchain:sshAuthentication': key(
    setting(z.enum(SSH_AUTHENTICATIONS, { error: SSH_AUTHENTICATION }).optional(), {
      default: '`privateKey` when `lacchain:sshPrivateKey` is set, else `agent`',
      description: `How \`pulumi up\` logs in to the SSH nodes' machines. \`agent\`: with your ssh agent, through \`${SSH_AGENT_VARIABLE}\` as it is when \`pulumi up\` runs (load a key file into it with \`ssh-add ~/.ssh/id_ed25519\`): the private key stays out of the stack file and the state. \`privateKey\`: with \`lacchain:sshPrivateKey\`, stored encrypted in the stack file and the state, for a runner without an agent. \`npm run plan\` and \`pulumi up\` say which one a stack uses (an \`SSH login:\` line).`,
    }),
    'text',
  ),
  // Each key's value is checked by the loader, which knows how to describe a bad key without showing it.
  'lacchain:nodeKeys': key(
    setting(z.record(z.string(), z.unknown(), { error: NODE_KEYS }).optional(), {
      shownAs: 'lacchain:nodeKeys.<node>',
      default: 'a new key, made on the first `pulumi up`',
      description:
        "An existing node private key to keep (64 hex digits). Secret, from its key file on standard input, never on a command line: `pulumi config set --secret --path 'lacchain:nodeKeys.<node>' < ~/.lacchain-besu-node/keys/<stack>-<node>.key`.",
    }),
    'mapping',
    true,
  ),
  'lacchain:genesisFile': key(
    setting(text.optional(), {
      default: 'downloaded from its pinned URL',
      description:
        "A local copy of the network's genesis file, for machines without internet. It must match the pinned SHA-256 like a download.",
    }),
    'text',
  ),
  'lacchain:kubeContext': key(
    setting(text.optional(), { default: 'the current context', description: 'The kubeconfig context of the cluster.' }),
    'text',
  ),
  'lacchain:allowKeyDeletion': key(
    setting(bool.default(false), {
      description:
        '`true` lets `pulumi destroy` delete the node key Secrets; `false` leaves them in the cluster. Set it with `pulumi config set lacchain:allowKeyDeletion true` or as a YAML boolean.',
    }),
    'boolean',
  ),
  'lacchain:supportContact': key(
    setting(text.optional(), {
      default: "the network's: its operator (testnet), the LACChain support portal (mainnet)",
      description: "Where to open a support request when a restart does not help (the health check's recovery rule).",
    }),
    'text',
  ),
  'lacchain:rpc': key(
    setting(rpcSchema.optional(), {
      default:
        "a writer's RPC public on 4545, a validator's and a bootnode's inside only; the node type's APIs, without the consensus groups where the outside reaches them; no authentication",
      description:
        "JSON-RPC access and authentication, the default of every node of the stack (fields below); a node's own `rpc` replaces the fields it gives.",
    }),
    'mapping',
  ),
  'lacchain:companions': key(
    setting(companionsSchema.optional(), {
      default: 'each on for the node type that runs it',
      description:
        "The network's companion services beside Besu ([companion services](companions.md)): the writer's relay signer, the validator's rotation client and every node's monitoring client (ethstats); an SSH node that runs one needs its executable's `sha256` unless the catalog pins the release (the relay signer's and the rotation client's catalog releases are), and the monitoring client its image's `imageDigest`.",
    }),
    'mapping',
  ),
  'lacchain:backups': key(
    setting(backupsSchema.optional(), {
      default: 'a backup before every release change, none scheduled, the last 7 kept, in the default repository',
      description: `Backups of every node's chain data with ${BACKUP_TOOL.package} (fields below; [backups](backups.md#backups-restore-and-rollback)).`,
    }),
    'mapping',
  ),
  'lacchain:besu': key(
    setting(besuOptionsSchema.optional(), {
      default: "Besu's own: none of the options below written",
      description:
        "Besu options the network's Helm chart writes and its Ansible roles do not, for every node of the stack (fields below); a node's own `besu` replaces the fields it gives. Each is checked against the node's release.",
    }),
    'mapping',
  ),
  'lacchain:rollout': key(
    setting(rolloutSchema.optional(), {
      default: `each node's health gate waits up to ${DEFAULT_GATE_TIMEOUT_SECONDS} s`,
      description:
        'How a `pulumi up` that restarts several nodes changes them: one at a time, writers first, then bootnodes, then validators, each healthy again before the next ([rolling out a change](upgrades.md#rolling-out-a-change)).',
    }),
    'mapping',
  ),
  'lacchain:monitoring': key(
    setting(monitoringSchema.optional(), {
      default: "no scraper: a cluster node's metrics are only pushed to the network",
      description:
        'How your Prometheus scrapes the Kubernetes nodes (fields below; [monitoring](monitoring.md#monitoring-and-alerts)). Machines are scraped through their TLS proxy with `lacchain:metricsToken`.',
    }),
    'mapping',
  ),
  'lacchain:backupPassword': key(
    setting(z.string({ error: BACKUP_PASSWORD }).min(12, { error: BACKUP_PASSWORD }).optional(), {
      default: "each node's own, derived from its node key (HMAC-SHA-256): your copy of the key opens its backups",
      description:
        "The backup repositories' password. Secret: `pulumi config set --secret lacchain:backupPassword …`. Needed when nodes share one repository (an SFTP server); keep a copy: it is what opens the backups after the stack is gone.",
    }),
    'text',
    true,
  ),
  'lacchain:backupS3Keys': key(
    setting(
      strict({
        accessKeyId: setting(text, { description: 'The access key id.' }),
        secretAccessKey: setting(text, { description: 'The secret access key.' }),
      }).optional(),
      {
        required: 'with an `s3:` repository',
        description:
          "The S3 repository's keys, `accessKeyId` and `secretAccessKey`. Secret: `pulumi config set --secret --path 'lacchain:backupS3Keys.accessKeyId' …` (and `secretAccessKey`).",
      },
    ),
    'mapping',
    true,
  ),
  'lacchain:metricsToken': key(
    setting(
      z
        .string({ error: METRICS_TOKEN })
        // What the day-2 tools read of it: only pulumi can decrypt it, and only its presence matters to them.
        .refine((v) => v === ENCRYPTED_VALUE || /^[A-Za-z0-9._~+/=-]{32,256}$/.test(v), { error: METRICS_TOKEN })
        .optional(),
      {
        default: "none: a machine's metrics stay on the machine (Besu's on the loopback, pushed to the network)",
        description:
          "The bearer token your Prometheus sends to scrape a machine's metrics over TLS on port 9443 ([monitoring](monitoring.md#monitoring-and-alerts)). Secret, on standard input: `openssl rand -hex 32 > FILE && pulumi config set --secret lacchain:metricsToken < FILE` (keep FILE for your Prometheus: `npm run monitoring -- --stack <stack> --token-file FILE`). Setting it opens 9443 on the machines.",
      },
    ),
    'text',
    true,
  ),
  // Each password is checked by the loader, which never shows it.
  'lacchain:rpcPasswords': key(
    setting(z.record(z.string(), z.unknown(), { error: RPC_PASSWORDS }).optional(), {
      shownAs: 'lacchain:rpcPasswords.<user>',
      required: 'with password authentication',
      description:
        "The password of an RPC user, 12 characters to 72 bytes. Secret: `pulumi config set --secret --path 'lacchain:rpcPasswords.<user>' …`. Never echoed.",
    }),
    'mapping',
    true,
  ),
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

const EIP_ALLOCATION = 'an Elastic IP allocation id such as eipalloc-0123456789abcdef0';
const SUBNET = "a subnet id such as subnet-0123456789abcdef0, or a subnet's Name tag";
const RESOURCE_GROUP =
  "an Azure resource group's name: 1 to 90 letters, digits, hyphens, underscores, periods or parentheses, not ending in a period";
const PUBLIC_IP_NAME =
  "an Azure public IP's name: 1 to 80 letters, digits, underscores, periods or hyphens, starting with a letter or digit and ending with a letter, digit or underscore";

/** `deploy.loadBalancer`: what the node's cloud reads to put the Service on `deploy.publicIP`. */
export const loadBalancerSchema = strict({
  cloud: setting(
    z
      .enum(LOAD_BALANCER_CLOUDS, { error: `one of ${LOAD_BALANCER_CLOUDS.join(', ')}` })
      .default(DEFAULT_LOAD_BALANCER_CLOUD),
    {
      description: `The cluster's load balancer: ${LOAD_BALANCER_CLOUDS.map((c) => `\`${c}\` ${LOAD_BALANCER_FACTS[c].title}`).join('; ')}. Each writes the Service its cloud documents for a static IP ([a static IP on each cloud](kubernetes.md#a-static-ip-on-each-cloud)); \`npm run init\` proposes it from the workers' \`providerID\`.`,
    },
  ),
  eipAllocations: setting(
    list(
      z.string({ error: EIP_ALLOCATION }).regex(/^eipalloc-[0-9a-f]{8,17}$/, { error: EIP_ALLOCATION }),
      'Elastic IP allocation ids',
    ).optional(),
    {
      required: 'with `cloud: aws`',
      description:
        "`aws`: the Elastic IP allocations of the NLB, one per subnet it spans (the AWS Load Balancer Controller's `aws-load-balancer-eip-allocations`); the NLB answers on each, so give one subnet and the allocation of `deploy.publicIP`, the address in the enode.",
    },
  ),
  subnets: setting(
    list(
      z.string({ error: SUBNET }).regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/, { error: SUBNET }),
      'subnets',
    ).optional(),
    {
      default: "the controller's discovery of the cluster's public subnets (then give as many allocations as it finds)",
      description:
        '`aws`: the public subnets of the NLB, one per Availability Zone, as many as `eipAllocations`, in the same order.',
    },
  ),
  resourceGroup: setting(
    z
      .string({ error: RESOURCE_GROUP })
      .regex(/^[-\w._()]{0,89}[-\w_()]$/, { error: RESOURCE_GROUP })
      .optional(),
    {
      required: 'with `cloud: azure`',
      description:
        "`azure`: the resource group the static public IP lives in (`azure-load-balancer-resource-group`), when it is not the cluster's node resource group; the cluster's identity needs the Network Contributor role on it.",
    },
  ),
  publicIpName: setting(
    z
      .string({ error: PUBLIC_IP_NAME })
      .regex(/^[A-Za-z0-9]([A-Za-z0-9_.-]{0,78}[A-Za-z0-9_])?$/, { error: PUBLIC_IP_NAME })
      .optional(),
    {
      default: 'the public IP found by its address, `deploy.publicIP`',
      description: '`azure`: the public IP resource by name (`azure-pip-name`), in `resourceGroup`.',
    },
  ),
  addressPool: setting(kubernetesSubdomain.optional(), {
    default: 'any pool holding `deploy.publicIP`',
    description:
      '`metallb`: the MetalLB IPAddressPool `deploy.publicIP` is taken from (`metallb.universe.tf/address-pool`).',
  }),
});

/** The `deploy` section of a Kubernetes node's values file (the seed's Helm values, same field names). */
export const deploySchema = strict({
  network: setting(text, {
    description: `The Helm name of the stack's network: ${SUPPORTED_NETWORKS.map((n) => `\`${n.helmName}\` (${stackOfNetwork(n)})`).join(' or ')}.`,
  }),
  typenode: setting(nodeType, { description: "Must equal the node's `typenode` in the stack config." }),
  publicIP: setting(ipv4, { description: 'The static public IPv4 address of the LoadBalancer Service.' }),
  loadBalancer: setting(loadBalancerSchema.optional(), {
    expand: true,
    default: '`cloud: other`',
    description: "The cluster's load balancer and what it needs for the static IP (fields below).",
  }),
  p2p: setting(
    strict({
      host: setting(ipv4, {
        description: 'The IPv4 address advertised to peers: part of the enode, the address that gets permissioned.',
      }),
      port: setting(port.default(PORTS.p2p), { description: 'The p2p port, TCP and UDP.' }),
    }),
    { expand: true, description: 'The p2p address.' },
  ),
  workerName: setting(kubernetesSubdomain, {
    description: 'The Kubernetes worker the pod is pinned to, so its egress IP never changes.',
  }),
  nodeName: setting(nodeName, {
    description: "The node's name on the network (monitoring job, permissioning request).",
  }),
  nodeEmail: setting(email, { description: 'Your contact e-mail.' }),
  dnsName: setting(hostname.optional(), { description: 'A DNS name of the node.' }),
  namespace: setting(kubernetesLabel.optional(), {
    default: `\`${DEFAULT_NAMESPACE}\``,
    description: 'The Kubernetes namespace.',
  }),
  releaseVersion: setting(releaseVersion.optional(), {
    default: NETWORK_RELEASE,
    description: 'The Besu release (image tag).',
  }),
  imageDigest: setting(imageDigest.optional(), {
    default: 'the tag alone',
    description: `The registry digest of that release's Besu image: the image becomes \`${BESU_IMAGE_REPOSITORY}:<release>@sha256:…\`, so the pod runs that image even if the tag is moved. The tag stays, for readers and the policy pack: give the digest of \`releaseVersion\`'s image. Required on mainnet, where every \`pulumi up\` refuses Besu's image by tag (policy rule \`node-key-images-pinned\`).`,
  }),
  proxyImageDigest: setting(imageDigest.optional(), {
    default: 'the tag alone',
    description: `Writers only: the registry digest of the reverse proxy's image (\`${PROXY_IMAGE}\`: nginx with Lua and cjson, for the [gas-model routing](kubernetes.md#the-writers-gas-model-routing)), pinned the same way. A digest pinned for the earlier image (\`nginxinc/nginx-unprivileged\`) must be replaced by this image's.`,
  }),
  storageClass: setting(kubernetesSubdomain.optional(), {
    default: "the cluster's default class",
    description: 'Storage class of the data volume.',
  }),
  volumeSnapshotClass: setting(kubernetesSubdomain.optional(), {
    default: 'no snapshots: backups are copied by a Job',
    description:
      'A VolumeSnapshotClass of the cluster: `npm run node -- backup` and the schedule make VolumeSnapshots of the data volume (snapshot.storage.k8s.io/v1), cut at one instant while the node runs, instead of copies made with restic by a Job with the node stopped. The backup before a release change stays a restic copy.',
  }),
  kubectlImageDigest: setting(imageDigest.optional(), {
    default: 'the tag alone',
    description: `With \`lacchain:backups.schedule\`: the registry digest of the image the schedule stops and starts the node with (\`${KUBECTL_IMAGE}\`; its steps alone hold the schedule's account token), pinned the same way. Required on mainnet with a schedule, where every \`pulumi up\` refuses it by tag (policy rule \`node-key-images-pinned\`).`,
  }),
  backupImageDigest: setting(imageDigest.optional(), {
    default: 'the tag alone',
    description: `The registry digest of restic's image (\`${BACKUP_TOOL.image}\`), which the pod's backup before a release change, the backup Jobs and the schedule run on the node's data, pinned the same way. Required on mainnet, where every \`pulumi up\` refuses it by tag (policy rule \`node-key-images-pinned\`).`,
  }),
  volumeSize: setting(storageSize.optional(), {
    default: `the network's (${[...new Set(SUPPORTED_NETWORKS.map((n) => n.volumeSize))].join(' or ')})`,
    description: 'Size of the data volume; mainnet refuses less than its own.',
  }),
});

/** A values file: only the `deploy` section. */
export const valuesFileSchema = strict({ deploy: deploySchema });

export type StackConfigInput = z.infer<typeof stackConfigSchema>;
export type StackNodeInput = z.infer<typeof stackNodeSchema>;
export type RpcInput = z.infer<typeof rpcSchema>;
export type CompanionsInput = z.infer<typeof companionsSchema>;
export type DeployInput = z.infer<typeof deploySchema>;
export type LoadBalancerInput = z.infer<typeof loadBalancerSchema>;
export type BackupsInput = z.infer<typeof backupsSchema>;
export type MonitoringInput = z.infer<typeof monitoringSchema>;

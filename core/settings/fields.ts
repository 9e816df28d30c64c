/**
 * Field rules shared by every settings file: each one carries, as its error, the sentence saying what is allowed.
 */
import { z } from 'zod';
import { NODE_TYPES } from '../catalog/nodeTypes';
import { PORTS } from '../catalog/ports';
import { BESU_CHANGES, unsupportedReason, OLDEST_SUPPORTED_RELEASE } from '../catalog/besu';
import { CONTRACT_ADDRESS_PATTERN } from '../catalog/companions';
import { defaultMachineRepository, REPOSITORY_REFUSED_FOLDERS } from '../catalog/backups';
import { DEFAULT_NODE_SERVICE } from '../catalog/defaults';
import { Network, networkOfStack, STACK_NAMES } from '../catalog/networks';
import { MAX_NODE_SERVICE_LENGTH, SHARED_TOP_FOLDERS, SYSTEM_FOLDERS } from '../catalog/remote';
import { supportedSystem, supportedSystemIdsText } from '../catalog/systems';
import type { Problem } from './problems';
import { parsePublicKey } from '../identity/nodeKey';

/** A mapping that refuses unknown fields, naming the ones it allows. */
export function strict<S extends z.ZodRawShape>(shape: S) {
  const fields = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `only the fields ${fields}` : `a mapping with the fields ${fields}`,
  });
}

/** The kind of the example address ranges (RFC 5737). */
const DOCUMENTATION = 'documentation';

/** The networks of a stack that take public addresses only (production). */
const PUBLIC_ONLY = STACK_NAMES.map(networkOfStack).filter((n) => !n.allowsNonPublicAddresses);
const IPV4 = `an IPv4 address such as 203.0.113.10 (not 0.0.0.0, loopback or multicast); for a node's enode not a documentation one (192.0.2/24, 198.51.100/24, 203.0.113/24), and on ${PUBLIC_ONLY.map((n) => n.name).join(', ')} a public one (no private, shared, link-local or documentation range)`;

/** True for a dotted-quad IPv4 address another machine can reach: not unspecified, loopback, multicast or broadcast. */
export function isReachableIpv4(ip: string): boolean {
  if (!z.ipv4().safeParse(ip).success) return false;
  const first = Number(ip.split('.')[0]);
  return ip !== '0.0.0.0' && first !== 127 && first < 224;
}

/** An IPv4 address another machine can reach. */
export const ipv4 = z.string({ error: IPV4 }).refine(isReachableIpv4, { error: IPV4 });

const OPERATING_SYSTEM = `the machine's system as the ID and VERSION_ID of its /etc/os-release, such as "ubuntu 24.04", one the preflight step accepts: ${supportedSystemIdsText()}`;
/** A machine's system, `<ID> <VERSION_ID>` of its os-release: one the preflight step accepts. */
export const operatingSystem = z.string({ error: OPERATING_SYSTEM }).refine(
  (value) => {
    const [id, version, ...rest] = value.split(' ');
    return rest.length === 0 && version !== undefined && supportedSystem(id, version) !== undefined;
  },
  { error: OPERATING_SYSTEM },
);

/**
 * The IPv4 ranges no peer on the Internet reaches a node at: a production network refuses them as a node's public IP
 * or p2p host (the address in the enode sent for permissioning). A test network accepts them but the documentation
 * ones (an example address: no peer reaches it and no network permissions it).
 */
const NON_PUBLIC_IPV4_RANGES: readonly { cidr: string; kind: string }[] = [
  { cidr: '0.0.0.0/8', kind: 'unspecified' },
  { cidr: '10.0.0.0/8', kind: 'private' },
  { cidr: '100.64.0.0/10', kind: 'shared (carrier-grade NAT)' },
  { cidr: '127.0.0.0/8', kind: 'loopback' },
  { cidr: '169.254.0.0/16', kind: 'link-local' },
  { cidr: '172.16.0.0/12', kind: 'private' },
  { cidr: '192.0.2.0/24', kind: DOCUMENTATION },
  { cidr: '192.168.0.0/16', kind: 'private' },
  { cidr: '198.18.0.0/15', kind: 'benchmarking' },
  { cidr: '198.51.100.0/24', kind: DOCUMENTATION },
  { cidr: '203.0.113.0/24', kind: DOCUMENTATION },
];

/** An IPv4 address as a 32-bit number. */
const ipv4Number = (ip: string) => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);

/** The non-public range an IPv4 address is in, if any. */
function rangeOf(ip: string): { cidr: string; kind: string } | undefined {
  if (!z.ipv4().safeParse(ip).success) return undefined;
  const address = ipv4Number(ip);
  return NON_PUBLIC_IPV4_RANGES.find(({ cidr }) => {
    const [base, bits] = cidr.split('/');
    const size = 2 ** (32 - Number(bits));
    return Math.floor(address / size) === Math.floor(ipv4Number(base) / size);
  });
}

/** The range that makes an IPv4 address unreachable from the Internet (`a private address (10.0.0.0/8)`), if any. */
export function nonPublicIpv4Range(ip: string): string | undefined {
  const range = rangeOf(ip);
  return range && `${/^[aeiou]/.test(range.kind) ? 'an' : 'a'} ${range.kind} address (${range.cidr})`;
}

/** True for an address of a documentation range (RFC 5737): an example, never a real node's. */
export function isDocumentationAddress(ip: string): boolean {
  return rangeOf(ip)?.kind === DOCUMENTATION;
}

/**
 * A node's public IP or p2p host (`key` in `file`), the address in the enode sent for permissioning: the problem when
 * it is a documentation (example) address on any network, or, on a network that takes public addresses only, in any
 * range no peer on the Internet reaches.
 */
export function publicAddressProblem(ip: string, network: Network, file: string, key: string): Problem | undefined {
  const range = rangeOf(ip);
  if (!range || (network.allowsNonPublicAddresses && range.kind !== DOCUMENTATION)) return undefined;
  const allowed = network.allowsNonPublicAddresses
    ? `on ${network.name}, an IPv4 address peers reach (a private one too, on this test network), not in a documentation range (192.0.2/24, 198.51.100/24, 203.0.113/24): it is in the enode, and no network permissions an example address`
    : `on ${network.name}, a public IPv4 address that peers reach and the network permissions (it is in the enode): not in a private (10/8, 172.16/12, 192.168/16), shared (100.64/10), loopback, link-local (169.254/16), unspecified, benchmarking (198.18/15) or documentation (192.0.2/24, 198.51.100/24, 203.0.113/24) range`;
  return { file, key, given: `given ${JSON.stringify(ip)}, ${nonPublicIpv4Range(ip)}`, allowed };
}

/**
 * The shape of a DNS name. Its last label is never all digits (RFC 3696: no top-level domain is), so a mistyped IPv4
 * address such as 203.0.113.999 is no name either.
 */
export const HOSTNAME_PATTERN =
  /^(?=.{1,253}$)(?!(?:.*\.)?[0-9]+$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const HOSTNAME = 'a DNS name such as node1.example.org (letters, digits, hyphens and dots)';

/** A DNS name. */
export const hostname = z.string({ error: HOSTNAME }).regex(HOSTNAME_PATTERN, { error: HOSTNAME });

const ADDRESS = 'an IPv4 address or a DNS name';
/** Where this machine reaches a remote one: an IPv4 address or a DNS name. */
export const hostAddress = z
  .string({ error: ADDRESS })
  .refine((v) => z.ipv4().safeParse(v).success || HOSTNAME_PATTERN.test(v), ADDRESS);

const PORT = `a whole number from ${PORTS.min} to ${PORTS.max}`;
/** A TCP/UDP port. */
export const port = z
  .number({ error: PORT })
  .int({ error: PORT })
  .min(PORTS.min, { error: PORT })
  .max(PORTS.max, { error: PORT });

const EMAIL = 'an e-mail address such as ops@example.org';
/** An e-mail address. */
export const email = z.string({ error: EMAIL }).check(z.email({ error: EMAIL }));

const NODE_TYPE = `one of ${NODE_TYPES.join(', ')}`;
/** A node type. */
export const nodeType = z.enum(NODE_TYPES, { error: NODE_TYPE });

const LABEL = 'a name of lowercase letters, digits and hyphens, starting with a letter, at most 40 characters';
/** A name used inside Kubernetes and Pulumi resource names. */
export const resourceLabel = z.string({ error: LABEL }).regex(/^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$/, { error: LABEL });

const K8S_LABEL = 'a Kubernetes name: lowercase letters, digits and hyphens, at most 63 characters';
/** A Kubernetes namespace. */
export const kubernetesLabel = z
  .string({ error: K8S_LABEL })
  .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, { error: K8S_LABEL });

const K8S_LABELS =
  'a mapping of Kubernetes labels: keys [prefix/]name (name: letters, digits, - _ . inside, at most 63), values the same or empty';
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_PREFIX = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Whether a text is a Kubernetes label key: `[prefix/]name`. */
function isLabelKey(key: string): boolean {
  const parts = key.split('/');
  if (parts.length > 2) return false;
  return LABEL_NAME.test(parts[parts.length - 1]) && (parts.length === 1 || LABEL_PREFIX.test(parts[0]));
}
/** Kubernetes labels (a selector's, an object's): valid keys and values. */
export const kubernetesLabels = z
  .record(z.string(), z.string({ error: K8S_LABELS }), { error: K8S_LABELS })
  .refine((labels) => Object.entries(labels).every(([k, v]) => isLabelKey(k) && (v === '' || LABEL_NAME.test(v))), {
    error: K8S_LABELS,
  });

const K8S_SUBDOMAIN = 'a Kubernetes object name: lowercase letters, digits, hyphens and dots, at most 253 characters';
/** A Kubernetes node or storage-class name. */
export const kubernetesSubdomain = z
  .string({ error: K8S_SUBDOMAIN })
  .regex(/^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, { error: K8S_SUBDOMAIN });

const SECRET_ENTRY = "a Secret entry's name: letters, digits, '-', '_' and '.', at most 253 characters";
/** The name of one entry (data key) of a Kubernetes Secret. */
export const secretEntry = z
  .string({ error: SECRET_ENTRY })
  .regex(/^[-._a-zA-Z0-9]{1,253}$/, { error: SECRET_ENTRY })
  .refine((name) => name !== '.' && name !== '..', { error: SECRET_ENTRY });

const PUBLIC_KEY =
  "a node public key: 0x followed by 128 hex digits (the enode's node id, as `besu public-key export` prints it), a point of secp256k1";
/** A node's public key, as `0x` + 128 lowercase hex. */
export const nodePublicKey = z
  .string({ error: PUBLIC_KEY })
  .refine((text) => parsePublicKey(text) !== undefined, { error: PUBLIC_KEY })
  .transform((text) => parsePublicKey(text) as string);

const NODE_NAME = 'a node name of letters, digits, dots, hyphens and underscores, 1 to 63 characters';
/** The node's name on the network (monitoring job, ethstats, permissioning request). */
export const nodeName = z.string({ error: NODE_NAME }).regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, { error: NODE_NAME });

const VERSION = `a Besu release <major>.<minor>.<patch> from ${OLDEST_SUPPORTED_RELEASE} up to, not including, ${BESU_CHANGES.permissioningRemoved}`;
/** A Besu release version this project deploys. */
export const releaseVersion = z
  .string({ error: VERSION })
  .refine((v) => unsupportedReason(v) === undefined, { error: VERSION });

const USER = 'a Unix user name (lowercase letters, digits, underscores and hyphens)';
/** A Unix user name. */
export const unixUser = z.string({ error: USER }).regex(/^[a-z_][a-z0-9_-]{0,31}$/, { error: USER });

const NODE_HOME =
  'an absolute, normalised path without spaces outside the system folders, such as /opt/lacchain (not /, /etc, /usr, /root, /home/..., /tmp and the like)';

/** Why a node home is refused, or undefined when it may be used. */
export function nodeHomeProblem(home: string): string | undefined {
  if (!/^\/[A-Za-z0-9._/-]*$/.test(home))
    return 'not an absolute path of letters, digits, dots, hyphens, underscores and slashes';
  if (home.includes('//') || home.endsWith('/') || home.split('/').some((part) => part === '.' || part === '..')) {
    return 'not normalised';
  }
  if ((SHARED_TOP_FOLDERS as readonly string[]).includes(home)) return 'a shared top-level folder';
  const system = SYSTEM_FOLDERS.find((folder) => home === folder || home.startsWith(`${folder}/`));
  return system ? `inside the system folder ${system}` : undefined;
}

/** A node's home folder on a remote machine. */
export const nodeHome = z
  .string({ error: NODE_HOME })
  .refine((v) => nodeHomeProblem(v) === undefined, { error: NODE_HOME });

const SERVICE = `a systemd service name of the project's own form, which no system service has: ${DEFAULT_NODE_SERVICE}, or ${DEFAULT_NODE_SERVICE}-<label> such as ${DEFAULT_NODE_SERVICE}-validator (<label>: lowercase letters and digits, words joined by single hyphens), at most ${MAX_NODE_SERVICE_LENGTH} characters`;

/**
 * A node's systemd service name: the default, or the default and a label (`besu-validator`). Only names of this form
 * are taken, so none can be one of the machine's own services (a deny-list would always miss some); the node's
 * companions add `-<companion>` to it.
 */
export const serviceName = z
  .string({ error: SERVICE })
  .max(MAX_NODE_SERVICE_LENGTH, { error: SERVICE })
  .regex(new RegExp(`^${DEFAULT_NODE_SERVICE}(-[a-z0-9]+)*$`), { error: SERVICE });

const QUANTITY = 'a Kubernetes storage size such as 375Gi';
/** A storage size. */
export const storageSize = z.string({ error: QUANTITY }).regex(/^[1-9][0-9]*(Mi|Gi|Ti)$/, { error: QUANTITY });

const IMAGE_DIGEST = 'an image digest: sha256: followed by 64 lowercase hex digits, as the registry shows it';
/** A container image's digest, to pin an image beside its tag. */
export const imageDigest = z.string({ error: IMAGE_DIGEST }).regex(/^sha256:[0-9a-f]{64}$/, { error: IMAGE_DIGEST });

const URL_TEMPLATE =
  'an https: URL holding {version}, such as https://mirror.example.org/besu-{version}.tar.gz, or a file: path on the machine such as file:///srv/besu/besu-{version}.tar.gz (no http:)';
/** Where release archives are downloaded from: https only (redirects too), or a local file for air-gapped machines. */
export const releaseUrlTemplate = z
  .string({ error: URL_TEMPLATE })
  .regex(/^(https:\/\/[^\s'"/]+\/|file:\/\/\/)[^\s'"]+$/, { error: URL_TEMPLATE })
  .refine((v) => v.includes('{version}'), { error: URL_TEMPLATE });

const ARCHIVE_URL =
  'an https: URL such as https://mirror.example.org/OpenJDK21U-jre_x64_linux_hotspot_21.0.11_10.tar.gz, or a file: path on the machine such as file:///srv/java/jre-21.tar.gz (no http:)';
/** Where a runtime archive is downloaded from: https only (redirects too), or a local file for air-gapped machines. */
export const javaRuntimeUrl = z
  .string({ error: ARCHIVE_URL })
  .regex(/^(https:\/\/[^\s'"/]+\/|file:\/\/\/)[^\s'"]+$/, { error: ARCHIVE_URL });

const SHA256 = 'a SHA-256 digest: 64 hex digits';
/** A SHA-256 digest, as sha256sum prints it (read in lower case). */
export const sha256Digest = z
  .string({ error: SHA256 })
  .regex(/^[0-9a-fA-F]{64}$/, { error: SHA256 })
  .transform((v) => v.toLowerCase());

const CONTRACT = 'a contract address: 0x followed by 40 hex digits';
/** A contract address on the network. */
export const contractAddress = z.string({ error: CONTRACT }).regex(CONTRACT_ADDRESS_PATTERN, { error: CONTRACT });

const COMPANION_VERSION = 'a version x.y.z such as 1.0.1';
/** A companion service's version. */
export const companionVersion = z
  .string({ error: COMPANION_VERSION })
  .regex(/^\d+\.\d+\.\d+$/, { error: COMPANION_VERSION });

const HTTPS_URL = 'an https: URL such as https://mirror.example.org/gas-relay-signer-{version} ({version} is replaced)';
/** Where a companion's executable is downloaded from: https only. */
export const httpsUrl = z.string({ error: HTTPS_URL }).regex(/^https:\/\/[^\s'"/]+\/[^\s'"]*$/, { error: HTTPS_URL });

const SERVER_URL =
  'a server address such as http://34.138.63.51:3000 (http, https, ws or wss; host, optional port and path)';
/** The address of a network's ethstats server, as its client takes it (--server-url). */
export const serverUrl = z
  .string({ error: SERVER_URL })
  .regex(/^(https?|wss?):\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?(\/[A-Za-z0-9._~/-]*)?$/, { error: SERVER_URL });

const IMAGE = 'a container image such as registry.example.org/relay-signer:1.0.2, optionally ending @sha256:<64 hex>';
/** A container image reference. */
export const containerImage = z
  .string({ error: IMAGE })
  .regex(
    /^[a-z0-9]([a-z0-9._-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$/,
    { error: IMAGE },
  );

const SSH_HOST_KEY = 'an SSH public host key line such as "ssh-ed25519 AAAAC3..."';
/** A pinned SSH host key. */
export const sshHostKey = z
  .string({ error: SSH_HOST_KEY })
  .regex(/^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/=]+( .*)?$/, { error: SSH_HOST_KEY });

const BOOL = 'true or false';
/** A yes/no switch. */
export const bool = z.boolean({ error: BOOL });

const TEXT = 'a non-empty text';
/** Any non-empty text. */
export const text = z.string({ error: TEXT }).min(1, { error: TEXT });

/** The explanation of why a version is refused (used in cross-checks). */
export { unsupportedReason };

const REPOSITORY_FOLDER = `on the machine, a folder of the backups' own such as ${defaultMachineRepository(DEFAULT_NODE_SERVICE)} (the backups step makes it root's only, mode 0700): not ${REPOSITORY_REFUSED_FOLDERS.itself.join(', ')} themselves, nor ${REPOSITORY_REFUSED_FOLDERS.withInside.join(', ')} or a folder inside them; or sftp:user@host:/folder, or s3:https://host/bucket/folder`;

/** The system folder a repository on the machine is, or is inside, where it may not be; undefined where it may. */
export function repositorySystemFolder(repository: string): string | undefined {
  if (!repository.startsWith('/')) return undefined;
  const folder = `/${repository
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/')}`;
  if ((REPOSITORY_REFUSED_FOLDERS.itself as readonly string[]).includes(folder)) return folder;
  return REPOSITORY_REFUSED_FOLDERS.withInside.find(
    (refused) => folder === refused || folder.startsWith(`${refused}/`),
  );
}

const BACKUP_REPOSITORY =
  'a restic repository: an absolute folder on the machine such as /var/backups/lacchain/besu, sftp:user@host:/folder, or s3:https://host/bucket/folder (no spaces or quotes)';
/** An S3 repository, as restic names one: `s3:` then an endpoint (with its scheme, or Amazon's host) and a bucket. */
export const S3_REPOSITORY = /^s3:(https?:\/\/)?[A-Za-z0-9.-]+(:\d+)?\/[a-z0-9][a-z0-9.-]{1,62}(\/[^\s'"\\$`]*)?$/;
/** Where a node's backups go, as restic names a repository: a folder on the machine, an SFTP server or S3. */
export const backupRepository = z
  .string({ error: BACKUP_REPOSITORY })
  .refine(
    (v) =>
      /^(\/[^\s'"\\$`]*[^\s'"\\$`/]|sftp:[^\s'"\\$`@]+@[^\s'"\\$`:]+:\/?[^\s'"\\$`]+)$/.test(v) ||
      S3_REPOSITORY.test(v),
    { error: BACKUP_REPOSITORY },
  )
  .refine((v) => !v.split('/').includes('..'), { error: BACKUP_REPOSITORY })
  .refine((v) => repositorySystemFolder(v) === undefined, { error: REPOSITORY_FOLDER });

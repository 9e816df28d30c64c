/**
 * An SSH node's settings: the `inventory` of its entry in `lacchain:nodes` (the reference Ansible inventory's fields).
 */
import { DEFAULT_RELEASE_URL, RELEASE_ARCHIVE_SHA256 } from '../catalog/besu';
import { DEFAULT_NODE_HOME, DEFAULT_NODE_SERVICE } from '../catalog/defaults';
import type { Network } from '../catalog/networks';
import { PORTS } from '../catalog/ports';
import type { RpcSettings, SshNodeSettings } from './model';
import { describeGiven, Problem } from './problems';
import type { BackupsInput, StackNodeInput } from './schema';
import { machineBackups } from './backups';
import { publicAddressProblem } from './fields';
import { readKeyCustody } from './keyCustody';
import { supportedSystem } from '../catalog/systems';
import type { NodeType } from '../catalog/nodeTypes';

/** An SSH node of the stack, from its entry in `lacchain:nodes`. */
export function sshNode(
  entry: StackNodeInput,
  key: string,
  network: Network,
  file: string,
  problems: Problem[],
  rpc: RpcSettings,
  backups: BackupsInput | undefined,
): SshNodeSettings | undefined {
  if (entry.values !== undefined) {
    problems.push({
      file,
      key: `${key}.values`,
      given: describeGiven(entry.values),
      allowed: 'no values file for an ssh node: its settings are its inventory',
    });
  }
  const inventory = entry.inventory;
  if (!inventory) {
    problems.push({
      file,
      key: `${key}.inventory`,
      given: 'missing',
      allowed: 'the inventory of an ssh node: host, node_ip, node_name, node_email (and optional fields)',
    });
    return undefined;
  }
  const releaseVersion = inventory.node_release_version ?? network.defaultBesuVersion;
  const releaseUrl = inventory.release_url ?? DEFAULT_RELEASE_URL;
  checkHostKey(inventory, `${key}.inventory`, network, file, problems);
  const nodeIp = publicAddressProblem(inventory.node_ip, network, file, `${key}.inventory.node_ip`);
  if (nodeIp) problems.push(nodeIp);
  const system = systemProblem(inventory.os, entry.typenode, file, `${key}.inventory.os`);
  if (system) problems.push(system);
  const releaseSha256 = releaseDigest(inventory, releaseVersion, releaseUrl, `${key}.inventory`, file, problems);
  return {
    name: entry.name,
    typenode: entry.typenode,
    target: 'ssh',
    ...readKeyCustody(entry, 'ssh', key, file, problems),
    metricsEndpoint: false,
    network,
    nodeName: inventory.node_name,
    nodeEmail: inventory.node_email,
    p2pHost: inventory.node_ip,
    p2pPort: PORTS.p2p,
    releaseVersion,
    dnsName: inventory.dns_name,
    settingsFile: file,
    host: inventory.host,
    sshPort: inventory.port,
    user: inventory.user,
    system: inventory.os,
    hostKey: inventory.host_key,
    acceptAnyHostKey: inventory.accept_any_host_key,
    nodeHome: inventory.node_home ?? DEFAULT_NODE_HOME,
    serviceName: inventory.node_service ?? DEFAULT_NODE_SERVICE,
    releaseUrl,
    releaseSha256: releaseSha256 ?? '',
    javaRuntime: javaRuntimeOf(inventory, `${key}.inventory`, file, problems),
    startTimeoutSeconds: inventory.start_timeout_seconds,
    allowBelowMinimumHardware: inventory.allow_below_minimum_hardware,
    rpc,
    companions: [],
    backups: machineBackups(
      backups,
      {
        name: entry.name,
        serviceName: inventory.node_service ?? DEFAULT_NODE_SERVICE,
        nodeHome: inventory.node_home ?? DEFAULT_NODE_HOME,
      },
      file,
      problems,
    ),
  };
}

type InventoryInput = NonNullable<StackNodeInput['inventory']>;

/** The operator's Java runtime archive: its URL and digest given together, or neither. */
function javaRuntimeOf(inventory: InventoryInput, key: string, file: string, problems: Problem[]) {
  const { java_runtime_url: url, java_runtime_sha256: sha256 } = inventory;
  if (url !== undefined && sha256 !== undefined) return { url, sha256 };
  if (url !== undefined || sha256 !== undefined) {
    problems.push({
      file,
      key: `${key}.${url === undefined ? 'java_runtime_url' : 'java_runtime_sha256'}`,
      given: 'missing',
      allowed: `java_runtime_url and java_runtime_sha256 together: the archive and its SHA-256 (${url === undefined ? 'a digest without its archive' : 'an archive is only taken with its digest'})`,
    });
  }
  return undefined;
}

/**
 * The node key travels over this connection: the machine must prove who it is with a pinned host key. Production
 * networks always need one; a test network accepts the operator's explicit opt-out (accept_any_host_key).
 */
function checkHostKey(inventory: InventoryInput, key: string, network: Network, file: string, problems: Problem[]) {
  if (inventory.host_key !== undefined) {
    if (inventory.accept_any_host_key) {
      problems.push({
        file,
        key: `${key}.accept_any_host_key`,
        given: 'true beside a host_key',
        allowed: 'either a pinned host_key (recommended) or accept_any_host_key: true, not both',
      });
    }
    return;
  }
  const pinIt = `the machine's SSH host key, e.g. the output of: ssh-keyscan -t ed25519 ${inventory.host} | cut -d' ' -f2-`;
  if (!network.allowsUnpinnedHostKey) {
    problems.push({
      file,
      key: `${key}.host_key`,
      given: inventory.accept_any_host_key ? 'missing (accept_any_host_key is for test networks only)' : 'missing',
      allowed: `${pinIt} (required on ${network.name}: the node key is sent over this connection)`,
    });
  } else if (!inventory.accept_any_host_key) {
    problems.push({
      file,
      key: `${key}.host_key`,
      given: 'missing',
      allowed: `${pinIt}; or, on a test network only, accept_any_host_key: true to send the node key to whatever answers at ${inventory.host}`,
    });
  }
}

/** The SHA-256 the release archive must have: the inventory's, or the one the catalog pins for the version. */
function releaseDigest(
  inventory: InventoryInput,
  version: string,
  releaseUrl: string,
  key: string,
  file: string,
  problems: Problem[],
): string | undefined {
  const pinned = RELEASE_ARCHIVE_SHA256[version];
  const given = inventory.release_sha256;
  if (given === undefined) {
    if (pinned === undefined) {
      problems.push({
        file,
        key: `${key}.release_sha256`,
        given: 'missing',
        allowed: `the SHA-256 of besu-${version}.tar.gz: Besu ${version} has no published digest in the catalog (pinned: ${Object.keys(RELEASE_ARCHIVE_SHA256).join(', ')})`,
      });
    }
    return pinned;
  }
  if (pinned !== undefined && given !== pinned && releaseUrl === DEFAULT_RELEASE_URL) {
    problems.push({
      file,
      key: `${key}.release_sha256`,
      given: describeGiven(given),
      allowed: `the published digest of besu-${version}.tar.gz, ${pinned} (a different archive needs its own release_url)`,
    });
  }
  return given;
}

/** The machine's system as the inventory names it (`os`), when the packages step would refuse the node type there. */
function systemProblem(os: string | undefined, typenode: NodeType, file: string, key: string): Problem | undefined {
  if (os === undefined) return undefined;
  const [id, version] = os.split(' ');
  const system = supportedSystem(id, version);
  if (!system?.refuses?.includes(typenode)) return undefined;
  return {
    file,
    key,
    given: `given ${JSON.stringify(os)} for a ${typenode}`,
    allowed: `on ${system.name}, ${system.limits}; a ${typenode} on another system (Debian or Ubuntu)`,
  };
}

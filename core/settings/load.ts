/**
 * Reads and validates a stack's settings: the stack config and, for Kubernetes nodes, their values files.
 * Every problem found is reported at once (one line each); nothing is returned unless all is well.
 */
import * as path from 'path';
import { z } from 'zod';
import { NODE_TYPES, UNSAFE_RPC_APIS } from '../catalog/nodeTypes';
import {
  findNetwork,
  Network,
  NETWORK_NAMES,
  NETWORKS,
  STACK_NAMES,
  STACK_NETWORKS,
  StackName,
} from '../catalog/networks';
import { DEFAULT_RELEASE_URL } from '../catalog/besu';
import { PORTS } from '../catalog/ports';
import {
  CONFIG_NAMESPACE,
  DEFAULT_NAMESPACE,
  DEFAULT_NODE_HOME,
  DEFAULT_NODE_SERVICE,
  defaultValuesFile,
} from '../catalog/defaults';
import { InvalidNodeKeyError, parsePrivateKey } from '../identity/nodeKey';
import { describeGiven, Problem, problemsFromZod, SettingsError } from './problems';
import { DeployInput, rpcProxySchema, RpcInput, StackNodeInput, stackConfigSchema, valuesFileSchema } from './schema';
import {
  KubernetesNodeSettings,
  NodeSettings,
  RpcSettings,
  SshNodeSettings,
  StackSecrets,
  StackSettings,
} from './model';
import { acceptedOptions } from '../catalog/besu';
import { rpcApisOf, unsafeRpcOverride } from '../rpc/access';
import { RPC_DEFAULTS, RPC_OPTIONS, firstReleaseWith } from '../catalog/rpc';
import { ENCRYPTED_VALUE, parseYamlFile } from './yamlFile';
import { decodeEngineValues } from './engineConfig';

/** Stands for an encrypted SSH key while its shape is checked (the engine checks the real one). */
const ENCRYPTED_PEM_STAND_IN = `-----BEGIN ${ENCRYPTED_VALUE}`;

/** The raw stack config as the engine hands it to the program (see engineConfig.ts): every value a string. */
export interface RawStackConfig {
  /** The file name shown in messages, e.g. `Pulumi.testnet.yaml`. */
  file: string;
  /** Folder that relative paths (values files, genesis file) are resolved against. */
  baseDir: string;
  /** Every config value, keyed `namespace:key`, as the engine's text (objects and lists as JSON). */
  values: Record<string, string>;
  /** The keys the engine marks secret. */
  secretKeys?: readonly string[];
  /**
   * Keys (`namespace:key` or `namespace:key.sub`) whose values are encrypted and cannot be read here (the offline
   * plan): they hold ENCRYPTED_VALUE, are not validated and are passed on as that marker.
   */
  encrypted?: readonly string[];
}

/** Reads a file relative to the settings' folder; undefined when it does not exist. */
export type FileReader = (absolutePath: string) => string | undefined;

/** The result of loading: validated settings and the secrets kept apart. */
export interface LoadedStack {
  settings: StackSettings;
  secrets: StackSecrets;
}

const SECRET_KEYS = new Set([
  `${CONFIG_NAMESPACE}:sshPrivateKey`,
  `${CONFIG_NAMESPACE}:nodeKeys`,
  `${CONFIG_NAMESPACE}:rpcPasswords`,
]);
const ALLOWED_STACKS = `${STACK_NAMES.map((s) => `${s} (${STACK_NETWORKS[s]})`).join(' or ')}`;

/** Validates a stack name; the deprecated network's name gets its deprecation message. */
export function checkStackName(stack: string, where = 'pulumi stack'): StackName {
  if ((STACK_NAMES as string[]).includes(stack)) return stack as StackName;
  const network = findNetwork(stack);
  const allowed = network?.deprecated ? `${ALLOWED_STACKS} — ${network.deprecated}` : ALLOWED_STACKS;
  throw new SettingsError([{ file: where, key: 'stack', given: describeGiven(stack), allowed }]);
}

/** Loads and validates everything a stack deploys. Throws SettingsError listing every problem. */
export function loadStack(stackName: string, raw: RawStackConfig, readFile: FileReader): LoadedStack {
  const stack = checkStackName(stackName);
  const network = NETWORKS[STACK_NETWORKS[stack]];
  const problems: Problem[] = [];
  const ours = decodeEngineValues(
    Object.fromEntries(Object.entries(raw.values).filter(([key]) => key.startsWith(`${CONFIG_NAMESPACE}:`))),
  );
  const encrypted = new Set(raw.encrypted ?? []);
  const sshKeyName = `${CONFIG_NAMESPACE}:sshPrivateKey`;
  if (encrypted.has(sshKeyName)) ours[sshKeyName] = ENCRYPTED_PEM_STAND_IN;
  const parsed = stackConfigSchema.safeParse(ours, { reportInput: true });
  const networkKey = `${CONFIG_NAMESPACE}:network`;
  if (typeof ours[networkKey] === 'string') {
    checkNetwork(ours[networkKey] as string, stack, network, raw.file, networkKey, problems);
  }
  if (!parsed.success) {
    problems.push(...problemsFromZod(raw.file, '', parsed.error, SECRET_KEYS));
    // Still check the values files of the nodes that can be read, so the operator sees everything at once.
    const rawNodes = Array.isArray(ours[`${CONFIG_NAMESPACE}:nodes`])
      ? (ours[`${CONFIG_NAMESPACE}:nodes`] as unknown[])
      : [];
    const entries = rawNodes.filter((e): e is Partial<StackNodeInput> => typeof e === 'object' && e !== null);
    for (const node of entries) {
      if (node.target === 'kubernetes' && (NODE_TYPES as readonly unknown[]).includes(node.typenode)) {
        readDeploy(node as StackNodeInput, network, raw, readFile, problems);
      }
    }
    const keys = ours[`${CONFIG_NAMESPACE}:nodeKeys`];
    if (typeof keys === 'object' && keys !== null) {
      const names = entries.map((e) => e.name).filter((n): n is string => typeof n === 'string');
      readNodeKeys(keys as Record<string, unknown>, names, raw.file, problems);
    }
    throw new SettingsError(problems);
  }
  const config = parsed.data;
  const rpc = readRpc(config[`${CONFIG_NAMESPACE}:rpc`], raw, readFile, problems);

  const nodes: NodeSettings[] = [];
  const seen = new Map<string, number>();
  config[`${CONFIG_NAMESPACE}:nodes`].forEach((entry, index) => {
    const key = `${CONFIG_NAMESPACE}:nodes[${index}]`;
    if (seen.has(entry.name)) {
      problems.push({
        file: raw.file,
        key: `${key}.name`,
        given: describeGiven(entry.name),
        allowed: `a name not used by another node of the stack (already used by ${CONFIG_NAMESPACE}:nodes[${seen.get(entry.name)}])`,
      });
    }
    seen.set(entry.name, index);
    const node =
      entry.target === 'kubernetes'
        ? kubernetesNode(entry, key, network, raw, readFile, problems, rpc)
        : sshNode(entry, key, network, raw.file, problems, rpc);
    if (node) nodes.push(node);
  });
  checkDistinctNodes(nodes, problems);
  checkRpcForNodes(rpc, nodes, raw.file, problems);

  const secrets = readSecrets(config, nodes, raw.file, problems);
  if (problems.length > 0) throw new SettingsError(problems);
  return {
    settings: {
      stack,
      network,
      configFile: raw.file,
      nodes,
      genesisFile: config[`${CONFIG_NAMESPACE}:genesisFile`]
        ? path.resolve(raw.baseDir, config[`${CONFIG_NAMESPACE}:genesisFile`] as string)
        : undefined,
      kubeContext: config[`${CONFIG_NAMESPACE}:kubeContext`],
      allowKeyDeletion: config[`${CONFIG_NAMESPACE}:allowKeyDeletion`],
      supportContact: config[`${CONFIG_NAMESPACE}:supportContact`] ?? network.supportContact,
      rpc,
    },
    secrets,
  };
}

function checkNetwork(
  given: string,
  stack: StackName,
  network: Network,
  file: string,
  key: string,
  problems: Problem[],
): void {
  const named = findNetwork(given);
  if (named?.deprecated) {
    problems.push({ file, key, given: describeGiven(given), allowed: `${network.name} — ${named.deprecated}` });
  } else if (!named) {
    problems.push({
      file,
      key,
      given: describeGiven(given),
      allowed: `${network.name} for stack ${stack} (networks: ${NETWORK_NAMES.filter((n) => !NETWORKS[n].deprecated).join(', ')})`,
    });
  } else if (named.name !== network.name) {
    problems.push({
      file,
      key,
      given: describeGiven(given),
      allowed: `${network.name}: stack ${stack} deploys to ${network.name}; ${named.name} belongs to another stack`,
    });
  }
}

function kubernetesNode(
  entry: StackNodeInput,
  key: string,
  network: Network,
  raw: RawStackConfig,
  readFile: FileReader,
  problems: Problem[],
  rpc: RpcSettings,
): KubernetesNodeSettings | undefined {
  if (entry.inventory !== undefined) {
    problems.push({
      file: raw.file,
      key: `${key}.inventory`,
      given: 'given an inventory',
      allowed: 'no inventory for a kubernetes node: its settings are in its values file',
    });
  }
  const loaded = readDeploy(entry, network, raw, readFile, problems);
  if (!loaded) return undefined;
  const { deploy, file } = loaded;
  return {
    name: entry.name,
    typenode: entry.typenode,
    target: 'kubernetes',
    network,
    nodeName: deploy.nodeName,
    nodeEmail: deploy.nodeEmail,
    p2pHost: deploy.p2p.host,
    p2pPort: deploy.p2p.port,
    releaseVersion: deploy.releaseVersion ?? network.defaultBesuVersion,
    dnsName: deploy.dnsName,
    settingsFile: file,
    valuesFile: file,
    publicIP: deploy.publicIP,
    workerName: deploy.workerName,
    namespace: deploy.namespace ?? DEFAULT_NAMESPACE,
    storageClass: deploy.storageClass,
    volumeSize: deploy.volumeSize ?? network.volumeSize,
    rpc,
  };
}

/** Reads, parses and cross-checks a Kubernetes node's values file. */
function readDeploy(
  entry: Pick<StackNodeInput, 'typenode' | 'values'>,
  network: Network,
  raw: RawStackConfig,
  readFile: FileReader,
  problems: Problem[],
): { deploy: DeployInput; file: string } | undefined {
  const file = entry.values ?? defaultValuesFile(entry.typenode);
  const document = parseYamlFile(file, readFile(path.resolve(raw.baseDir, file)), problems);
  if (document === undefined) return undefined;
  const parsed = valuesFileSchema.safeParse(document, { reportInput: true });
  if (!parsed.success) {
    problems.push(...problemsFromZod(file, '', parsed.error));
    return undefined;
  }
  const deploy = parsed.data.deploy;
  const named = findNetwork(deploy.network);
  if (!named || named.name !== network.name || deploy.network !== named.helmName) {
    problems.push({
      file,
      key: 'deploy.network',
      given: describeGiven(deploy.network),
      allowed: named?.deprecated
        ? `${network.helmName} — ${named.deprecated}`
        : `${network.helmName} (the Helm name of ${network.name}, the network of this stack)`,
    });
  }
  if (deploy.typenode !== entry.typenode) {
    problems.push({
      file,
      key: 'deploy.typenode',
      given: describeGiven(deploy.typenode),
      allowed: `${entry.typenode} (the node's typenode in ${raw.file})`,
    });
  }
  checkVolume(deploy.volumeSize, network, file, problems);
  return { deploy, file };
}

/** Size of a Kubernetes quantity in GiB. */
export function quantityGiB(quantity: string): number {
  const match = /^(\d+)(Mi|Gi|Ti)$/.exec(quantity);
  if (!match) throw new Error(`not a storage size: ${quantity}`);
  const factor = { Mi: 1 / 1024, Gi: 1, Ti: 1024 }[match[2] as 'Mi' | 'Gi' | 'Ti'];
  return Number(match[1]) * factor;
}

function checkVolume(volumeSize: string | undefined, network: Network, file: string, problems: Problem[]): void {
  if (volumeSize === undefined || !network.enforceMinimumHardware) return;
  if (quantityGiB(volumeSize) < quantityGiB(network.volumeSize)) {
    problems.push({
      file,
      key: 'deploy.volumeSize',
      given: describeGiven(volumeSize),
      allowed: `at least ${network.volumeSize} on ${network.name}`,
    });
  }
}

function sshNode(
  entry: StackNodeInput,
  key: string,
  network: Network,
  file: string,
  problems: Problem[],
  rpc: RpcSettings,
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
  return {
    name: entry.name,
    typenode: entry.typenode,
    target: 'ssh',
    network,
    nodeName: inventory.node_name,
    nodeEmail: inventory.node_email,
    p2pHost: inventory.node_ip,
    p2pPort: PORTS.p2p,
    releaseVersion: inventory.node_release_version ?? network.defaultBesuVersion,
    dnsName: inventory.dns_name,
    settingsFile: file,
    host: inventory.host,
    sshPort: inventory.port,
    user: inventory.user,
    hostKey: inventory.host_key,
    nodeHome: inventory.node_home ?? DEFAULT_NODE_HOME,
    serviceName: inventory.node_service ?? DEFAULT_NODE_SERVICE,
    releaseUrl: inventory.release_url ?? DEFAULT_RELEASE_URL,
    allowBelowMinimumHardware: inventory.allow_below_minimum_hardware,
    rpc,
  };
}

/** Two nodes must not share an identity-bearing address, a values file or a remote node home. */
function checkDistinctNodes(nodes: NodeSettings[], problems: Problem[]): void {
  const enodeHosts = new Map<string, string>();
  const homes = new Map<string, string>();
  for (const node of nodes) {
    const endpoint = `${node.p2pHost}:${node.p2pPort}`;
    const other = enodeHosts.get(endpoint);
    if (other) {
      problems.push({
        file: node.settingsFile,
        key: node.target === 'kubernetes' ? 'deploy.p2p.host' : `node ${node.name} inventory.node_ip`,
        given: describeGiven(endpoint),
        allowed: `an address and port not advertised by another node (node ${other} uses it)`,
      });
    }
    enodeHosts.set(endpoint, node.name);
    if (node.target === 'ssh') {
      const home = `${node.host}:${node.nodeHome}`;
      const owner = homes.get(home);
      if (owner) {
        problems.push({
          file: node.settingsFile,
          key: `node ${node.name} inventory.node_home`,
          given: describeGiven(node.nodeHome),
          allowed: `a node home not used by another node on ${node.host} (node ${owner} uses it)`,
        });
      }
      homes.set(home, node.name);
    }
  }
}

function readSecrets(
  config: z.infer<typeof stackConfigSchema>,
  nodes: NodeSettings[],
  file: string,
  problems: Problem[],
): StackSecrets {
  const sshKey = `${CONFIG_NAMESPACE}:sshPrivateKey`;
  const keysKey = `${CONFIG_NAMESPACE}:nodeKeys`;
  const sshPrivateKey = config[sshKey] === ENCRYPTED_PEM_STAND_IN ? ENCRYPTED_VALUE : config[sshKey];
  const sshNodes = nodes.filter((n) => n.target === 'ssh');
  if (sshNodes.length > 0 && sshPrivateKey === undefined) {
    problems.push({
      file,
      key: sshKey,
      given: 'missing',
      allowed: `the SSH private key for node ${sshNodes.map((n) => n.name).join(', ')}: pulumi config set --secret ${sshKey} < ~/.ssh/id_ed25519`,
    });
  }
  const nodeKeys = readNodeKeys(
    config[keysKey] ?? {},
    nodes.map((n) => n.name),
    file,
    problems,
  );
  const rpcPasswords = readRpcPasswords(config[`${CONFIG_NAMESPACE}:rpcPasswords`] ?? {}, config, file, problems);
  return { sshPrivateKey, nodeKeys, ...(Object.keys(rpcPasswords).length > 0 ? { rpcPasswords } : {}) };
}

/** Validates imported node keys: each names a node of the stack and is a valid private key. */
function readNodeKeys(
  given: Record<string, unknown>,
  nodeNames: string[],
  file: string,
  problems: Problem[],
): Record<string, string> {
  const keysKey = `${CONFIG_NAMESPACE}:nodeKeys`;
  const nodeKeys: Record<string, string> = {};
  const names = new Set(nodeNames);
  for (const [name, value] of Object.entries(given)) {
    const key = `${keysKey}.${name}`;
    if (!names.has(name)) {
      problems.push({
        file,
        key,
        given: 'given a key for a node that is not in the stack',
        allowed: `a node name of this stack: ${[...names].join(', ')}`,
      });
      continue;
    }
    if (value === ENCRYPTED_VALUE) {
      nodeKeys[name] = value;
      continue;
    }
    try {
      if (typeof value !== 'string') throw new InvalidNodeKeyError('is not a text');
      nodeKeys[name] = parsePrivateKey(value);
    } catch (error) {
      if (!(error instanceof InvalidNodeKeyError)) throw error;
      problems.push({
        file,
        key,
        given: `given a value that ${error.message} (secret, not shown)`,
        allowed: 'a secp256k1 private key: 64 hex digits, optionally 0x, nonzero and below the curve order',
      });
    }
  }
  return nodeKeys;
}

const RPC_KEY = `${CONFIG_NAMESPACE}:rpc`;
const PEM_PUBLIC_KEY = /^-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----\s*$/;
const PUBLIC_KEY_ALLOWED =
  'a PEM public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----), as text or a file beside the stack config';

/** `lacchain:rpc` with its defaults, and the checks that involve several of its fields. */
function readRpc(
  given: RpcInput | undefined,
  raw: RawStackConfig,
  readFile: FileReader,
  problems: Problem[],
): RpcSettings {
  const input = given ?? { exposure: RPC_DEFAULTS.exposure, allowUnsafeApis: false, maxActiveConnections: 80 };
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
  const text = value.trimStart().startsWith('-----BEGIN') ? value : readFile(path.resolve(raw.baseDir, value));
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
function checkRpcForNodes(rpc: RpcSettings, nodes: NodeSettings[], file: string, problems: Problem[]): void {
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

/** RPC passwords: one per password user, never shown. */
function readRpcPasswords(
  given: Record<string, unknown>,
  config: z.infer<typeof stackConfigSchema>,
  file: string,
  problems: Problem[],
): Record<string, string> {
  const passwordsKey = `${CONFIG_NAMESPACE}:rpcPasswords`;
  const auth = config[RPC_KEY]?.authentication;
  const users = auth?.method === 'password' ? (auth.users ?? []).map((u) => u.name) : [];
  const passwords: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const key = `${passwordsKey}.${name}`;
    if (!users.includes(name)) {
      problems.push({
        file,
        key,
        given: 'given a password for a user that is not an RPC user',
        allowed:
          users.length > 0
            ? `a user of ${RPC_KEY}.authentication.users: ${users.join(', ')}`
            : `no passwords unless ${RPC_KEY}.authentication.method is password`,
      });
      continue;
    }
    if (value === ENCRYPTED_VALUE) {
      passwords[name] = value;
      continue;
    }
    const problem =
      typeof value !== 'string'
        ? 'is not a text'
        : value.length < 12
          ? 'is shorter than 12 characters'
          : Buffer.byteLength(value) > 72
            ? 'is longer than 72 bytes (bcrypt reads no further)'
            : undefined;
    if (problem) {
      problems.push({
        file,
        key,
        given: `given a value that ${problem} (secret, not shown)`,
        allowed: 'a password of 12 characters to 72 bytes, set with --secret',
      });
      continue;
    }
    passwords[name] = value as string;
  }
  for (const name of users) {
    if (!(name in given)) {
      problems.push({
        file,
        key: `${passwordsKey}.${name}`,
        given: 'missing',
        allowed: `the password of RPC user ${name}: pulumi config set --secret --path '${passwordsKey}.${name}' <password>`,
      });
    }
  }
  return passwords;
}

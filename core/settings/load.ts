/**
 * Reads and validates a stack's settings, source by source: the stack's name and network (stackIdentity.ts), each Kubernetes node's
 * values file (valuesFile.ts), each SSH node's inventory (inventory.ts), the RPC access (rpcSetting.ts) and the
 * secrets (secrets.ts). Every problem found is reported at once (one line each); nothing is returned unless all is
 * well. The config comes as the engine hands it to the program (engineConfig.ts).
 */
import { addStackBootnodes } from '../node/stackBootnodes';
import * as path from 'path';
import { COMPANIONS } from '../catalog/companions';
import { kubernetesNames } from '../catalog/kubernetes';
import { configKey } from '../catalog/defaults';
import { NETWORKS, STACK_NETWORKS } from '../catalog/networks';
import { NODE_TYPES } from '../catalog/nodeTypes';
import { decodeEngineValues } from './engineConfig';
import { kubernetesNode, readDeploy } from './valuesFile';
import { sshNode } from './inventory';
import { companionServiceName } from '../remote/companionService';
import { checkRpcForNodes, mergeRpcInput, readRpc, rpcOfNode } from './rpcSetting';
import { checkCompanionsForNodes, companionsOfNode, readCompanions } from './companions';
import { ENCRYPTED_PEM_STAND_IN, readNodeKeys, readSecrets } from './secrets';
import { SSH_AUTHENTICATION_KEY, SSH_PRIVATE_KEY_KEY, sshAuthenticationOf } from '../catalog/sshLogin';
import { checkStackName, checkStackNetwork } from './stackIdentity';
import type { NodeSettings, StackSecrets, StackSettings } from './model';
import { describeGiven, Problem, problemsFromZod, SettingsError } from './problems';
import { rolloutSchema, SECRET_CONFIG_KEYS, StackNodeInput, stackConfigSchema } from './schema';
import { clusterMonitoring } from './monitoring';
import type { FileReader, RawStackConfig } from './sources';

export type { FileReader, RawStackConfig } from './sources';

export { checkStackName } from './stackIdentity';

/** The result of loading: validated settings and the secrets kept apart. */
export interface LoadedStack {
  settings: StackSettings;
  secrets: StackSecrets;
}

/**
 * Who reads the stack: `pulumi up` (the default: every credential it logs in with is required), or a tool that needs
 * fewer of them.
 */
export interface LoadOptions {
  /**
   * The SSH private key may be missing (`secrets.sshPrivateKey` then undefined): the offline plan shows it as a value
   * only `pulumi up` knows, and `npm run node` logs in with the operator's own ssh. `pulumi up` requires it when the
   * stack logs in with `lacchain:sshAuthentication` `privateKey` (with the agent, the default, there is none).
   */
  sshKeyOptional?: boolean;
}

const SECRET_KEYS = new Set<string>(SECRET_CONFIG_KEYS);

/** Loads and validates everything a stack deploys. Throws SettingsError listing every problem. */
export function loadStack(
  stackName: string,
  raw: RawStackConfig,
  readFile: FileReader,
  options: LoadOptions = {},
): LoadedStack {
  const stack = checkStackName(stackName);
  const network = NETWORKS[STACK_NETWORKS[stack]];
  const problems: Problem[] = [];
  const ours = decodeEngineValues(
    Object.fromEntries(Object.entries(raw.values).filter(([key]) => key.startsWith(configKey('')))),
  );
  problems.push(...plainSecrets(raw, ours));
  const encrypted = new Set(raw.encrypted ?? []);
  const sshKeyName = configKey('sshPrivateKey');
  if (encrypted.has(sshKeyName)) ours[sshKeyName] = ENCRYPTED_PEM_STAND_IN;
  const parsed = stackConfigSchema.safeParse(ours, { reportInput: true });
  const networkKey = configKey('network');
  if (typeof ours[networkKey] === 'string') {
    checkStackNetwork(ours[networkKey] as string, stack, network, raw.file, networkKey, problems);
  }
  if (!parsed.success) {
    problems.push(
      ...problemsFromZod(raw.file, '', parsed.error, SECRET_KEYS).map((problem) =>
        // The stock stack holds no node: say which command adds one to this stack.
        problem.key === configKey('nodes') && problem.given === 'given []'
          ? { ...problem, allowed: problem.allowed.replace('<stack>', stack) }
          : problem,
      ),
    );
    // Still check the values files of the nodes that can be read, so the operator sees everything at once.
    const rawNodes = Array.isArray(ours[configKey('nodes')]) ? (ours[configKey('nodes')] as unknown[]) : [];
    const entries = rawNodes.filter((e): e is Partial<StackNodeInput> => typeof e === 'object' && e !== null);
    for (const node of entries) {
      if (node.target === 'kubernetes' && (NODE_TYPES as readonly unknown[]).includes(node.typenode)) {
        readDeploy(node as StackNodeInput, network, raw, readFile, problems);
      }
    }
    const keys = ours[configKey('nodeKeys')];
    if (typeof keys === 'object' && keys !== null) {
      const names = entries.map((e) => e.name).filter((n): n is string => typeof n === 'string');
      readNodeKeys(keys as Record<string, unknown>, names, raw.file, problems);
    }
    throw new SettingsError(problems);
  }
  const config = parsed.data;
  const rpcKey = configKey('rpc');
  // The consensus opt-in is one node's, never the stack's: refused here, and not passed on to any node.
  const { allowConsensusVotesFromOutside: stackWideVotes, ...stackRpcInput } = config[rpcKey] ?? {};
  if (stackWideVotes !== undefined) {
    problems.push({
      file: raw.file,
      key: `${rpcKey}.allowConsensusVotesFromOutside`,
      given: describeGiven(stackWideVotes),
      allowed: `no such field for the whole stack: set it on the one node it concerns, as ${configKey('nodes')}[i].rpc.allowConsensusVotesFromOutside`,
    });
  }
  const stackRpc = readRpc(stackRpcInput, rpcKey, raw, readFile, problems);

  const nodes: NodeSettings[] = [];
  const seen = new Map<string, number>();
  config[configKey('nodes')].forEach((entry, index) => {
    const key = `${configKey('nodes')}[${index}]`;
    if (seen.has(entry.name)) {
      problems.push({
        file: raw.file,
        key: `${key}.name`,
        given: describeGiven(entry.name),
        allowed: `a name not used by another node of the stack (already used by ${configKey('nodes')}[${seen.get(entry.name)}])`,
      });
    }
    seen.set(entry.name, index);
    const ownRpc = entry.rpc && readRpc(mergeRpcInput(stackRpcInput, entry.rpc), `${key}.rpc`, raw, readFile, problems);
    const rpc = rpcOfNode(ownRpc ?? stackRpc, entry.typenode, `${key}.rpc`);
    const node =
      entry.target === 'kubernetes'
        ? kubernetesNode(entry, key, network, raw, readFile, problems, rpc, config[configKey('backups')])
        : sshNode(entry, key, network, raw.file, problems, rpc, config[configKey('backups')]);
    // The stack's Besu options, the node's own fields over them; none set: the node's settings carry none.
    const besu = { ...config[configKey('besu')], ...entry.besu };
    if (node && Object.keys(besu).length > 0) node.besu = besu;
    if (node) nodes.push(node);
  });
  checkDistinctNodes(nodes, problems);
  checkDistinctKeys(
    nodes,
    config[configKey('nodes')].map((entry) => entry.name),
    raw.file,
    problems,
  );
  checkRpcForNodes(nodes, raw.file, problems);
  const companions = readCompanions(config[configKey('companions')], network);
  for (const node of nodes) node.companions = companionsOfNode(node, companions);
  checkCompanionsForNodes(nodes, raw.file, problems);

  const sshAuthentication = sshAuthenticationOf(
    config[SSH_AUTHENTICATION_KEY],
    config[SSH_PRIVATE_KEY_KEY] !== undefined,
  );
  const secrets = readSecrets(config, nodes, raw.file, problems, sshAuthentication, options.sshKeyOptional ?? false);
  for (const node of nodes) if (node.target === 'ssh') node.metricsEndpoint = secrets.metricsToken !== undefined;
  addStackBootnodes(nodes, secrets.nodeKeys);
  const monitoring = clusterMonitoring(config[configKey('monitoring')], raw.file, problems);
  for (const node of nodes) if (node.target === 'kubernetes') node.monitoring = monitoring;
  if (problems.length > 0) throw new SettingsError(problems);
  return {
    settings: {
      stack,
      network,
      configFile: raw.file,
      nodes,
      genesisFile: config['lacchain:genesisFile']
        ? path.resolve(raw.baseDir, config['lacchain:genesisFile'] as string)
        : undefined,
      kubeContext: config['lacchain:kubeContext'],
      allowKeyDeletion: config['lacchain:allowKeyDeletion'],
      supportContact: config['lacchain:supportContact'] ?? network.supportContact,
      companions,
      rollout: rolloutSchema.parse(config[configKey('rollout')] ?? {}),
      sshAuthentication,
    },
    secrets,
  };
}

/**
 * Two nodes must not run under one key: no two give the same `publicKey`, no two read the same entry of one operator's
 * Secret, and no node names another node's own key Secret (the program's, which holds that node's key) as its own.
 */
function checkDistinctKeys(nodes: NodeSettings[], names: string[], file: string, problems: Problem[]): void {
  const pinned = new Map<string, string>();
  const secretEntries = new Map<string, string>();
  const ownSecrets = new Map(
    nodes.flatMap((node) =>
      node.target === 'kubernetes' && node.keyCustody !== 'secret'
        ? [[`${node.namespace}/${kubernetesNames(node.name).keySecret}`, node.name] as const]
        : [],
    ),
  );
  for (const node of nodes) {
    const key = `${configKey('nodes')}[${names.indexOf(node.name)}]`;
    if (node.publicKey !== undefined) {
      const other = pinned.get(node.publicKey);
      if (other !== undefined) {
        problems.push({
          file,
          key: `${key}.publicKey`,
          given: describeGiven(node.publicKey),
          allowed: `the public key of this node's own key (node ${other} gives the same one: two nodes must never run under one key)`,
        });
      }
      pinned.set(node.publicKey, node.name);
    }
    if (node.target !== 'kubernetes' || node.keySecret === undefined) continue;
    const { name, entry } = node.keySecret;
    const owner = ownSecrets.get(`${node.namespace}/${name}`);
    if (owner !== undefined) {
      problems.push({
        file,
        key: `${key}.keySecret`,
        given: describeGiven(name),
        allowed: `a Secret of your own: ${name} is the key Secret the program keeps for node ${owner} in namespace ${node.namespace}`,
      });
    }
    const where = `${node.namespace}/${name}/${entry}`;
    const sharing = secretEntries.get(where);
    if (sharing !== undefined) {
      problems.push({
        file,
        key: `${key}.keySecretEntry`,
        given: describeGiven(entry),
        allowed: `an entry no other node reads (node ${sharing} reads entry ${entry} of Secret ${name} in namespace ${node.namespace}: two nodes must never run under one key)`,
      });
    }
    secretEntries.set(where, node.name);
  }
}

/**
 * Settings that must be secrets but were written in plain text: each is refused with the command that stores it
 * encrypted. The engine tells which whole keys are secret; the stack file tells about values inside a mapping.
 */
function plainSecrets(raw: RawStackConfig, ours: Record<string, unknown>): Problem[] {
  const secretKeys = new Set(raw.secretKeys ?? []);
  const paths = new Set(raw.plainSecretPaths ?? []);
  for (const key of SECRET_CONFIG_KEYS) {
    if (!(key in ours) || secretKeys.has(key)) continue;
    const value = ours[key];
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const name of Object.keys(value)) paths.add(`${key}.${name}`);
    } else {
      paths.add(key);
    }
  }
  return [...paths].map((key) => ({
    file: raw.file,
    key,
    given: 'a value in plain text (not shown): it would be kept unencrypted in the file and in the state',
    allowed: `a secret: ${setSecretCommand(key)}`,
  }));
}

/** The command that stores a secret setting encrypted; values come on standard input, never on the command line. */
function setSecretCommand(key: string): string {
  const source: Record<string, string> = {
    [configKey('sshPrivateKey')]: '< ~/.ssh/id_ed25519',
    [configKey('nodeKeys')]: '< node.key',
    [configKey('rpcPasswords')]: '(it asks for the password)',
  };
  const top = key.split('.')[0];
  const path = key === top ? key : `--path '${key}'`;
  return `pulumi config set --secret ${path} ${source[top] ?? ''}`.trim();
}

/**
 * Two nodes must not share an identity-bearing address, nor two validators a machine or a worker; on one machine, nor
 * a systemd unit (a node's service, or one
 * of its companions' `<service>-<companion>`, every companion of the catalog: turning one on later must not clash),
 * nor a node home, or a home inside another's (its data/ or anywhere below it).
 */
function checkDistinctNodes(nodes: NodeSettings[], problems: Problem[]): void {
  const taken: { kind: string; machine: string; value: string; node: string }[] = [];
  /**
   * Records the values `node` takes of one kind on one machine (`machine` empty: the whole network); a value that
   * clashes with one another node took (equal, or as `clash` says) is one problem, naming the first such.
   */
  const claim = (
    node: NodeSettings,
    claimed: { kind: string; machine: string; values: string[]; clash?: (mine: string, theirs: string) => boolean },
    message: { shown: string; key: string; allowed: string },
  ) => {
    const { kind, machine, values, clash = (mine, theirs) => mine === theirs } = claimed;
    const other = taken.find(
      (t) => t.kind === kind && t.machine === machine && values.some((value) => clash(value, t.value)),
    );
    if (other) {
      problems.push({
        file: node.settingsFile,
        key: message.key,
        given: describeGiven(message.shown),
        allowed: `${message.allowed} (node ${other.node} uses ${other.value === message.shown ? 'it' : other.value})`,
      });
    }
    for (const value of values) taken.push({ kind, machine, value, node: node.name });
  };
  const nested = (mine: string, theirs: string) =>
    mine === theirs || mine.startsWith(`${theirs}/`) || theirs.startsWith(`${mine}/`);
  for (const node of nodes) {
    if (node.typenode === 'validator') {
      // Two validators of the stack on one machine or worker go down together (its reboot, its upgrade, its disk),
      // whatever order the rollout changes them in (docs/upgrades.md#rolling-out-a-change).
      const machine = node.target === 'ssh' ? node.host : `worker ${node.workerName}`;
      claim(
        node,
        { kind: 'validator machine', machine: '', values: [machine] },
        {
          shown: machine,
          key: node.target === 'ssh' ? `node ${node.name} inventory.host` : 'deploy.workerName',
          allowed:
            'a machine (a worker) no other validator of the stack runs on: two validators down at once bring the network closer to the third whose loss stops its blocks',
        },
      );
    }
    const endpoint = `${node.p2pHost}:${node.p2pPort}`;
    const where = node.target === 'kubernetes' ? 'deploy.p2p.host' : `node ${node.name} inventory.node_ip`;
    claim(
      node,
      { kind: 'endpoint', machine: '', values: [endpoint] },
      { shown: endpoint, key: where, allowed: 'an address and port not advertised by another node' },
    );
    if (node.target !== 'ssh') continue;
    const units = [node.serviceName, ...COMPANIONS.map((c) => companionServiceName(node, c.name))];
    claim(
      node,
      { kind: 'unit', machine: node.host, values: units },
      {
        shown: node.serviceName,
        key: `node ${node.name} inventory.node_service`,
        allowed: `a service name whose units (${units.join(', ')}) no other node on ${node.host} uses`,
      },
    );
    claim(
      node,
      { kind: 'home', machine: node.host, values: [node.nodeHome], clash: nested },
      {
        shown: node.nodeHome,
        key: `node ${node.name} inventory.node_home`,
        allowed: `a node home that is not, nor holds, nor lies inside, the home of another node on ${node.host}`,
      },
    );
  }
}

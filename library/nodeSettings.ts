/**
 * A node component's arguments, checked as a stack file is: they are written out as the one-node stack config and
 * values file (or inventory) they stand for, and read by the same loader (core/settings/load.ts), with every problem
 * reported at once, each naming the argument to fix. So a component accepts exactly what a stack file accepts, with
 * the same defaults and the same messages.
 */
import * as path from 'path';
import type * as pulumi from '@pulumi/pulumi';
import type { z } from 'zod';
import { configKey } from '../core/catalog/defaults';
import { STACK_NETWORKS, StackName } from '../core/catalog/networks';
import type { NodeType } from '../core/catalog/nodeTypes';
import { engineString } from '../core/settings/engineConfig';
import { loadStack, LoadedStack } from '../core/settings/load';
import { SettingsError } from '../core/settings/problems';
import {
  backupsSchema,
  besuOptionsSchema,
  companionsSchema,
  deploySchema,
  inventorySchema,
  loadBalancerSchema,
  monitoringSchema,
  rolloutSchema,
  rpcSchema,
  SECRET_CONFIG_KEYS,
  stackNodeSchema,
} from '../core/settings/schema';
import { enforceProgramRules, PolicyViolationError } from '../policy/programRules';
import { stopRun } from '../components/runStop';

/** The networks a node can join: `open-protestnet` (test) and `mainnet-omega` (production). */
export type NetworkName = (typeof STACK_NETWORKS)[StackName];

/** Settings a stack file gives every node of it (its `lacchain:` keys of the same names; docs/settings.md). */
export interface SharedSettings {
  /** JSON-RPC access and authentication (`lacchain:rpc`); the node's own `rpc` replaces the fields it gives. */
  rpc?: z.input<typeof rpcSchema>;
  /** The network's companion services beside Besu (`lacchain:companions`). */
  companions?: z.input<typeof companionsSchema>;
  /** Backups of the node's chain data (`lacchain:backups`). */
  backups?: z.input<typeof backupsSchema>;
  /** How your Prometheus scrapes a cluster node (`lacchain:monitoring`). */
  monitoring?: z.input<typeof monitoringSchema>;
  /** Besu options the network's Helm chart writes (`lacchain:besu`); the node's own `besu` replaces the fields it gives. */
  besu?: z.input<typeof besuOptionsSchema>;
  /** How long the health gate waits (`lacchain:rollout`). */
  rollout?: z.input<typeof rolloutSchema>;
  /** `true` lets `pulumi destroy` delete the node key (`lacchain:allowKeyDeletion`). Default false. */
  allowKeyDeletion?: boolean;
  /** Where to open a support request (`lacchain:supportContact`). Default: the network's. */
  supportContact?: string;
  /** A local copy of the network's genesis, checked against its pinned digest (`lacchain:genesisFile`). */
  genesisFile?: string;
}

/** A node's entry in a stack file's `lacchain:nodes`, less what the component says itself. */
export type NodeEntry = Omit<z.input<typeof stackNodeSchema>, 'name' | 'typenode' | 'target' | 'values' | 'inventory'>;

/** The arguments both components take, wherever the node runs: its network, its type and its stack file's settings. */
export interface NodeArgs {
  /** The network: `open-protestnet` (test) or `mainnet-omega` (production). */
  network: NetworkName;
  /** `writer`, `validator` or `bootnode`. */
  typenode: NodeType;
  /** The node's entry of a stack file beside its name and type: keyCustody, keySecret (a cluster's), publicKey, its own `rpc`. */
  node?: NodeEntry;
  /** What a stack file gives all its nodes: rpc, companions, backups, monitoring (a cluster's), rollout, allowKeyDeletion, ... */
  shared?: SharedSettings;
}

/** A Kubernetes node's values file, `deploy`, less its network and type (the component's own arguments). */
export type DeployValues = Omit<z.input<typeof deploySchema>, 'network' | 'typenode'>;

/** A values file's `deploy.loadBalancer`: the cluster's load balancer and what it needs for the static IP. */
export type LoadBalancerValues = z.input<typeof loadBalancerSchema>;

/** An SSH node's inventory. */
export type InventoryValues = z.input<typeof inventorySchema>;

/** The secrets a node may take, as plain values (the component resolves its secret inputs first). */
export interface NodeSecretValues {
  /** The node's private key to keep, 0x + 64 hex (`lacchain:nodeKeys.<node>`); a new key is made once when absent. */
  nodeKey?: string;
  /** RPC passwords by user (`lacchain:rpcPasswords`). */
  rpcPasswords?: Record<string, string>;
  /** The backup repository's password (`lacchain:backupPassword`). */
  backupPassword?: string;
  /** An S3 backup repository's keys (`lacchain:backupS3Keys`). */
  backupS3Keys?: { accessKeyId: string; secretAccessKey: string };
  /** A machine's metrics endpoint token (`lacchain:metricsToken`). */
  metricsToken?: string;
  /** The SSH private key `pulumi up` logs in with (`lacchain:sshPrivateKey`); the ssh agent when absent. */
  sshPrivateKey?: string;
}

/** The secrets a node takes, each as a value or an output of your program. */
export type NodeSecrets = { [K in keyof NodeSecretValues]?: pulumi.Input<NonNullable<NodeSecretValues[K]>> };

/** One node as the loader reads it. */
export interface NodeRequest {
  /** The component's type, for messages: `ClusterNode` or `MachineNode`. */
  component: string;
  /** The node's name in the program (its resources' names). */
  name: string;
  network: NetworkName;
  entry: z.input<typeof stackNodeSchema>;
  /** A Kubernetes node's values file. */
  values?: { deploy: z.input<typeof deploySchema> };
  shared?: SharedSettings;
  secrets?: NodeSecretValues;
}

/** The stack whose network is `network`. */
function stackOf(network: NetworkName): StackName {
  const stack = (Object.keys(STACK_NETWORKS) as StackName[]).find((name) => STACK_NETWORKS[name] === network);
  if (!stack)
    throw stopRun(
      `network ${String(network)} cannot be deployed: give one of ${Object.values(STACK_NETWORKS).join(', ')}`,
    );
  return stack;
}

/** The one-node stack config the request stands for, as the engine would hand it over. */
function stackConfig(request: NodeRequest, valuesFile: string): Record<string, unknown> {
  const { shared = {}, secrets = {} } = request;
  const config: Record<string, unknown> = {
    [configKey('network')]: request.network,
    [configKey('nodes')]: [{ ...request.entry, ...(request.values ? { values: valuesFile } : {}) }],
  };
  for (const [name, value] of Object.entries(shared)) config[configKey(name)] = value;
  const { nodeKey, ...stackSecrets } = secrets;
  if (nodeKey !== undefined) config[configKey('nodeKeys')] = { [request.entry.name]: nodeKey };
  for (const [name, value] of Object.entries(stackSecrets)) config[configKey(name)] = value;
  if (secrets.sshPrivateKey !== undefined) config[configKey('sshAuthentication')] = 'privateKey';
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
}

/**
 * The node's validated settings and secrets, checked against the mandatory policy rules as every `pulumi up` is; or
 * a RunError listing every problem, each naming the component's argument to fix.
 */
export function loadNodeSettings(request: NodeRequest): LoadedStack {
  const label = `${request.component} ${request.name}`;
  const baseDir = process.cwd();
  const valuesFile = `${label} deploy`;
  const config = stackConfig(request, valuesFile);
  const valuesText = request.values ? JSON.stringify(request.values) : undefined;
  try {
    const loaded = loadStack(
      stackOf(request.network),
      {
        file: label,
        baseDir,
        values: Object.fromEntries(Object.entries(config).map(([key, value]) => [key, engineString(value)])),
        secretKeys: SECRET_CONFIG_KEYS.filter((key) => key in config),
      },
      (file) => (file === path.resolve(baseDir, valuesFile) ? valuesText : undefined),
    );
    enforceProgramRules(loaded.settings);
    return loaded;
  } catch (error) {
    if (error instanceof SettingsError) {
      const problems = error.problems.map(
        (problem) => `${argumentOf(problem.key)}: ${problem.given}; allowed: ${problem.allowed}`,
      );
      throw stopRun(`${label} cannot be deployed: its arguments:\n${problems.join('\n')}`);
    }
    if (error instanceof PolicyViolationError) {
      throw stopRun(`${label} cannot be deployed: it breaks mandatory policy rules:\n${error.message}`);
    }
    throw error;
  }
}

/** The settings a component takes as arguments of its own, by their keys in a values file or an inventory. */
const OWN_ARGUMENTS: Readonly<Record<string, string>> = {
  'deploy.network': 'network',
  'deploy.typenode': 'typenode',
  'deploy.publicIP': 'publicIP',
  'deploy.p2p.host': 'p2pHost',
  'inventory.host': 'connection.host',
  'inventory.port': 'connection.port',
  'inventory.user': 'connection.user',
  'inventory.host_key': 'connection.hostKey',
  'inventory.node_ip': 'nodeIp',
};

/** A setting's key as the component's argument that holds it: `deploy.workerName`, `shared.rpc.exposure`, `nodeIp`. */
function argumentOf(key: string): string {
  const nodeEntry = `${configKey('nodes')}[0].`;
  const inventory = /^(?:node \S+ )?(inventory\..*)$/.exec(
    key.startsWith(nodeEntry) ? key.slice(nodeEntry.length) : key,
  );
  if (inventory) return OWN_ARGUMENTS[inventory[1]] ?? inventory[1];
  if (key in OWN_ARGUMENTS) return OWN_ARGUMENTS[key];
  if (key.startsWith(nodeEntry)) return `node.${key.slice(nodeEntry.length)}`;
  if (key.startsWith(configKey('nodeKeys'))) return 'secrets.nodeKey';
  if (!key.startsWith(configKey(''))) return key;
  const name = key.slice(configKey('').length);
  return SECRET_CONFIG_KEYS.some((secret) => key.startsWith(secret)) ? `secrets.${name}` : `shared.${name}`;
}

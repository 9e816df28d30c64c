/**
 * Reading the facts the policy rules check out of a resource's inputs: which node a resource belongs to, its
 * config.toml, the parameters of a remote step, storage sizes, the genesis shown by the offline plan.
 * Pure functions of plain data; no Pulumi import, so the rules run the same under CrossGuard and the offline plan.
 */
import { parse as parseToml } from 'smol-toml';
import { CHART_PREFIX, POD_FILES } from '../core/catalog/kubernetes';
import type { Network } from '../core/catalog/networks';

import { KUBERNETES_SECRET_TYPE, SECRET_MARKER, UNKNOWN_MARKER } from '../core/planFormat';

export { UNKNOWN_MARKER } from '../core/planFormat';

/** One resource as the rules see it: its type token, name, inputs (plain data) and options. */
export interface PolicyResource {
  /** The type token, e.g. `kubernetes:apps/v1:StatefulSet`. */
  type: string;
  /** The Pulumi resource name, e.g. `writer-node`. */
  name: string;
  /** The inputs, with unknown values as UNKNOWN_MARKER and secrets as SECRET_MARKER or their value. */
  inputs: Record<string, unknown>;
  options: {
    protect: boolean;
    /**
     * Whether the resource is kept when deleted from the stack. Undefined when the caller cannot see it: CrossGuard
     * (@pulumi/policy 1.21) does not pass this option to policies; the offline plan records it.
     */
    retainOnDelete?: boolean;
    /** The parent resource's name (a node's component for its children). */
    parent?: string;
  };
}

/** The type tokens the rules look at. */
export const TYPES = {
  statefulSet: 'kubernetes:apps/v1:StatefulSet',
  service: 'kubernetes:core/v1:Service',
  secret: KUBERNETES_SECRET_TYPE,
  volume: 'kubernetes:core/v1:PersistentVolumeClaim',
  configMap: 'kubernetes:core/v1:ConfigMap',
  command: 'command:remote:Command',
} as const;

/**
 * The type tokens of a cluster node's backup pods: the schedule's CronJob (declared with `lacchain:backups.schedule`),
 * and the Jobs `npm run node -- backup | backups | restore` makes from the same renderers and settings.
 */
export const BACKUP_TYPES = {
  cronJob: 'kubernetes:batch/v1:CronJob',
  job: 'kubernetes:batch/v1:Job',
} as const;

/** Labels the program puts on every object of a node (core/kubernetes/manifests.ts). */
export const NODE_LABEL = 'app.kubernetes.io/instance';
export const NETWORK_LABEL = 'lacchain.net/network';

/** True when a value is not known here (unknown until `pulumi up`, or a secret the caller cannot read). */
export function isOpaque(value: unknown): boolean {
  return value === UNKNOWN_MARKER || value === SECRET_MARKER;
}

/** The value at a path of plain objects, or undefined. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** A Kubernetes object's metadata.labels (empty when absent). */
export function labelsOf(resource: PolicyResource): Record<string, unknown> {
  const labels = at(resource.inputs, 'metadata', 'labels');
  return labels && typeof labels === 'object' ? (labels as Record<string, unknown>) : {};
}

/**
 * The node a Kubernetes object belongs to: its `app.kubernetes.io/instance` label, else the node named in its
 * object name (`besu-node-<node>`, `besu-node-<node>-config|-key|-data`).
 */
export function kubernetesNodeOf(resource: PolicyResource): string | undefined {
  const label = labelsOf(resource)[NODE_LABEL];
  if (typeof label === 'string' && label !== '') return label;
  const name = at(resource.inputs, 'metadata', 'name');
  if (typeof name !== 'string' || !name.startsWith(`${CHART_PREFIX}-`)) return undefined;
  // A ConfigMap is named by its content: `besu-node-<node>-config-<10 hex digits>`.
  return name.slice(CHART_PREFIX.length + 1).replace(/-(config(-[0-9a-f]{10})?|key|data)$/, '') || undefined;
}

/** The network named by a Kubernetes object's `lacchain.net/network` label. */
export function networkLabelOf(resource: PolicyResource): string | undefined {
  const label = labelsOf(resource)[NETWORK_LABEL];
  return typeof label === 'string' ? label : undefined;
}

/** The header RemoteNode puts first in a step's standard input. */
const STEP_HEADER = /^# lacchain-besu-node: step \d+\/\d+ \(([a-z-]+)\) of node ([a-z][-a-z0-9]*)$/m;

/**
 * The node and step of a remote command: its parent is the node's RemoteNode component (named after the node) and
 * its name is `<node>-<step>`; failing that, the header of its standard input names both.
 */
export function remoteStepOf(resource: PolicyResource): { node: string; step: string } | undefined {
  const parent = resource.options.parent;
  if (parent && resource.name.startsWith(`${parent}-`)) {
    return { node: parent, step: resource.name.slice(parent.length + 1) };
  }
  const stdin = resource.inputs.stdin;
  const header = typeof stdin === 'string' ? STEP_HEADER.exec(stdin) : null;
  return header ? { node: header[2], step: header[1] } : undefined;
}

/**
 * The parameters at the top of a remote step's standard input: `export NAME='value'` lines as written by
 * core/remote/shell.ts (single-quoted, a quote inside written as '\''; a secret one without `export`), after the
 * header comment. Reading stops at
 * the first other line (the script). Undefined when the input is not known.
 */
export function stepParameters(stdin: unknown): Record<string, string> | undefined {
  if (typeof stdin !== 'string' || isOpaque(stdin)) return undefined;
  const parameters: Record<string, string> = {};
  let i = 0;
  while (i < stdin.length && stdin[i] === '#') {
    const end = stdin.indexOf('\n', i);
    if (end < 0) return parameters;
    i = end + 1;
  }
  // The parameters and the script are inside one `{ … }` group (core/remote/shell.ts).
  if (stdin.startsWith('{\n', i)) i += 2;
  const start = /^(?:export )?([A-Z][A-Z0-9_]*)='/;
  for (;;) {
    const match = start.exec(stdin.slice(i, i + 200));
    if (!match) return parameters;
    i += match[0].length;
    let value = '';
    for (;;) {
      const close = stdin.indexOf("'", i);
      if (close < 0) return parameters;
      value += stdin.slice(i, close);
      i = close + 1;
      if (stdin.startsWith("\\''", i)) {
        value += "'";
        i += 3;
        continue;
      }
      break;
    }
    parameters[match[1]] = value;
    if (stdin[i] === '\n') i += 1;
  }
}

/** A parsed config.toml, or the reason it cannot be read. */
export type ParsedConfig = { config: Record<string, unknown> } | { problem: string } | { unknown: true };

/** Parses a config.toml text (unknown when the text is not known here). */
export function parseConfigToml(text: unknown, where: string): ParsedConfig {
  if (isOpaque(text)) return { unknown: true };
  if (typeof text !== 'string') return { problem: `${where} has no config.toml` };
  try {
    return { config: parseToml(text) as Record<string, unknown> };
  } catch (error) {
    return { problem: `${where}: config.toml is not valid TOML (${(error as Error).message.split('\n')[0]})` };
  }
}

/** The config.toml held by a ConfigMap's data. */
export function configMapToml(resource: PolicyResource): ParsedConfig {
  const data = at(resource.inputs, 'data');
  if (isOpaque(data)) return { unknown: true };
  return parseConfigToml(at(data, POD_FILES.config), `ConfigMap ${resource.name}`);
}

/** A config value as a list of strings (Besu takes a list or one comma-separated string). */
export function stringList(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'string') return value.split(',').map((v) => v.trim());
  return [];
}

/**
 * What the offline plan holds in place of the genesis when no local copy is given: the network's pinned identity.
 * `pulumi up` downloads the file and verifies it against the same digest.
 */
export function planGenesisPlaceholder(network: Network): string {
  const { genesis } = network;
  return `[genesis of ${network.name}: ${genesis.bytes} bytes, sha256 ${genesis.sha256}, downloaded from ${genesis.url} and verified by pulumi up]`;
}

/** The digest named by an offline-plan genesis placeholder, or undefined when the text is not one. */
export function placeholderDigest(text: string): string | undefined {
  return /^\[genesis of [a-z-]+: \d+ bytes, sha256 ([0-9a-f]{64}), downloaded from \S+ and verified by pulumi up\]$/.exec(
    text,
  )?.[1];
}

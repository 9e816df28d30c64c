/**
 * The questions of the guided setup (`npm run init`), in the order the reference installer asks them, each with its
 * flag, its meaning, its default and the same validation the program applies to the settings files.
 */
import { isDocumentationAddress } from '../settings/fields';
import { suggestion } from '../didYouMean';
import { z } from 'zod';
import { NETWORK_MENU, Network } from '../catalog/networks';
import { NODE_TYPE_FACTS, NODE_TYPES, NodeType } from '../catalog/nodeTypes';
import { DEFAULT_NAMESPACE, GUIDED_SSH_USER } from '../catalog/defaults';
import { deploySchema, inventorySchema, stackNodeSchema } from '../settings/schema';
import { isList, isNumeric, isOptional, plainMeaning, ruleDefault, shapeOf } from '../settings/settingDoc';
import { DEFAULT_LOAD_BALANCER_CLOUD, LOAD_BALANCER_CLOUD_FIELDS, LoadBalancerCloud } from '../catalog/loadBalancers';

/** The node-type menu: `[0] validator [1] bootnode [2] writer` (the reference installer's order). */
export const NODE_TYPE_MENU: readonly NodeType[] = [...NODE_TYPES].sort(
  (a, b) => NODE_TYPE_FACTS[a].menuIndex - NODE_TYPE_FACTS[b].menuIndex,
);

/** The menu line of node types, by the names the settings use. */
export function nodeTypeMenu(): string {
  return NODE_TYPE_MENU.map((t, i) => `[${i}] ${t}`).join(' ');
}

/** The menu line of networks. */
export function networkMenu(): string {
  return NETWORK_MENU.map((n, i) => `[${i}] ${n.name}${n.deprecated ? ' (DEPRECATED)' : ''}`).join(' ');
}

/** An answer checked: the value to store, or why it is refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A menu's item by its index or by one of its names. */
function menuChoice<T>(answer: string, items: readonly T[], names: (item: T) => string[], menu: string): Checked<T> {
  const a = answer.trim();
  const byIndex = /^\d+$/.test(a) ? items[Number(a)] : undefined;
  const chosen = byIndex ?? items.find((item) => names(item).includes(a.toLowerCase()));
  if (chosen === undefined) {
    const near = suggestion(a.toLowerCase(), items.flatMap(names));
    return {
      ok: false,
      problem: `given ${JSON.stringify(answer)}${near}; allowed: a name or the index of one of ${menu}`,
    };
  }
  return { ok: true, value: chosen };
}

/**
 * The node type by its name (`validator`, `bootnode`, `writer`), the reference installer's label (`boot`) or its
 * menu index.
 */
export function checkNodeType(answer: string): Checked<NodeType> {
  return menuChoice(answer, NODE_TYPE_MENU, (t) => [t, NODE_TYPE_FACTS[t].menuLabel], nodeTypeMenu());
}

/**
 * The network by its menu index or name: the deprecated one is refused, and it must be the stack's network (the
 * stack decides it, so the setup only checks what it is told).
 */
export function checkNetworkAnswer(answer: string, stackNetwork: Network): Checked<Network> {
  const choice = menuChoice(answer, NETWORK_MENU, (n) => [n.name], networkMenu());
  if (!choice.ok) return choice;
  if (choice.value.deprecated) return { ok: false, problem: choice.value.deprecated };
  if (choice.value.name !== stackNetwork.name) {
    return {
      ok: false,
      problem: `this stack deploys to ${stackNetwork.name} (index ${stackNetwork.menuIndex}); ${choice.value.name} has its own stack`,
    };
  }
  return choice;
}

/** One field question: its key in the settings file, its flag, and its rule in the schema (meaning included). */
export interface FieldQuestion {
  /** Key in the values file `deploy` section or the inventory (dot path). */
  key: string;
  /** The command-line flag that answers it. */
  flag: string;
  /** The setting's rule in the schema, which carries its meaning (settingDoc.ts). */
  schema: z.ZodType;
}

/** The rule of a setting in a schema's mapping, by its dot path. */
function ruleAt(shape: z.ZodRawShape, key: string): z.ZodType {
  const [first, ...rest] = key.split('.');
  const rule = shape[first] as z.ZodType;
  return rest.length === 0 ? rule : ruleAt(shapeOf(rule), rest.join('.'));
}

/** A setting's flag: its key in kebab case (`workerName`, `node_ip` and `p2p.host` give worker-name, node-ip, p2p-host). */
const flagOf = (key: string) =>
  key
    .replace(/([a-z0-9])([A-Z]+)/g, '$1-$2')
    .replace(/[._]/g, '-')
    .toLowerCase();

/** The questions for these settings of a schema's mapping, in order; `flags` names the flags that differ from flagOf. */
function questionsOf(shape: z.ZodRawShape, keys: string[], flags: Record<string, string> = {}): FieldQuestion[] {
  return keys.map((key) => ({ key, flag: flags[key] ?? flagOf(key), schema: ruleAt(shape, key) }));
}

/** What a question asks, from the setting's meaning in the schema (without its full stop: a prompt follows). */
export function questionMeaning(q: FieldQuestion): string {
  return plainMeaning(q.schema).replace(/\.$/, '');
}

/** Where fieldHelpLines are written for init's --help (by `npm run docs`), from the project folder. */
export const FIELD_HELP_FILE = 'cli/init/fieldHelp.json';

/**
 * Each field question's flag and its help line (`key: meaning`), in the order init asks them: what
 * cli/init/fieldHelp.json holds, written by `npm run docs`, so that init's --help loads no schema.
 */
export function fieldHelpLines(): Record<string, string> {
  return Object.fromEntries(
    [NODE_NAME_QUESTION, ...KUBERNETES_QUESTIONS, ...SSH_QUESTIONS].map((q) => [
      q.flag,
      `${q.key}: ${questionMeaning(q)}`,
    ]),
  );
}

/**
 * Whether a question of the node's load balancer applies to the cloud answered before it: each cloud reads its own
 * fields (core/catalog/loadBalancers.ts), so init asks only those.
 */
export function appliesToCloud(q: FieldQuestion, answers: Record<string, unknown>): boolean {
  const [section, field] = q.key.split('.');
  if (section !== 'loadBalancer' || field === 'cloud') return true;
  const cloud = (answers['loadBalancer.cloud'] ?? DEFAULT_LOAD_BALANCER_CLOUD) as LoadBalancerCloud;
  return LOAD_BALANCER_CLOUD_FIELDS[cloud]?.reads.includes(field) ?? false;
}

/** True when the question may be left unanswered. */
export function isOptionalQuestion(q: FieldQuestion): boolean {
  return isOptional(q.schema) && ruleDefault(q.schema) === undefined;
}

/** The fields of a Kubernetes node's values file. */
export const KUBERNETES_QUESTIONS: FieldQuestion[] = questionsOf(
  deploySchema.shape,
  [
    'workerName',
    'publicIP',
    'loadBalancer.cloud',
    'loadBalancer.eipAllocations',
    'loadBalancer.subnets',
    'loadBalancer.resourceGroup',
    'loadBalancer.publicIpName',
    'loadBalancer.addressPool',
    'p2p.host',
    'p2p.port',
    'nodeName',
    'nodeEmail',
    'dnsName',
    'namespace',
    'releaseVersion',
  ],
  {
    'loadBalancer.cloud': 'cloud',
    'loadBalancer.eipAllocations': 'eip-allocations',
    'loadBalancer.subnets': 'subnets',
    'loadBalancer.resourceGroup': 'resource-group',
    'loadBalancer.publicIpName': 'public-ip-name',
    'loadBalancer.addressPool': 'address-pool',
  },
);

/** The inventory elements of an SSH node (the SSH port's flag says which port; the release's is the values file's). */
export const SSH_QUESTIONS: FieldQuestion[] = questionsOf(
  inventorySchema.shape,
  ['host', 'node_ip', 'node_name', 'node_email', 'user', 'port', 'host_key', 'node_release_version', 'dns_name', 'os'],
  { port: 'ssh-port', node_release_version: 'release-version' },
);

/** The node's name in the stack. */
export const NODE_NAME_QUESTION: FieldQuestion = questionsOf(stackNodeSchema.shape, ['name'])[0];

/**
 * A question's default: the node's current value (a re-run keeps it as it is), the value the program takes when the
 * setting is left out (`implicit`: taking it writes nothing, so a later default applies), or one suggested from the
 * answers so far (written).
 */
export interface FieldDefault {
  value: string;
  implicit: boolean;
}

/** An SSH host key line as `ssh-keyscan` prints it (`<host> <type> <key>`) or as the inventory takes it. */
const KEYSCAN_LINE = /^\S+\s+((ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp\d+)\s+\S+.*)$/;

/** An answer as the setting takes it: a host key pasted from ssh-keyscan loses its leading host name. */
function normalized(question: FieldQuestion, answer: string): string {
  const text = answer.trim();
  if (question.key === 'host_key') return KEYSCAN_LINE.exec(text)?.[1] ?? text;
  return text;
}

/**
 * Checks a typed answer with the question's rule. An empty answer takes the default: undefined (nothing written) when
 * the default is implicit or there is none for an optional question.
 */
export function checkField(
  question: FieldQuestion,
  answer: string,
  fallback?: FieldDefault,
): Checked<string | number | string[] | undefined> {
  let text = normalized(question, answer);
  if (text === '') {
    if (fallback?.implicit) return { ok: true, value: undefined };
    text = fallback?.value ?? '';
  }
  if (text === '') {
    return isOptionalQuestion(question)
      ? { ok: true, value: undefined }
      : { ok: false, problem: 'an answer is required' };
  }
  // A list is answered as its items separated by commas (`eipalloc-…,eipalloc-…`).
  const value = isList(question.schema)
    ? text.split(',').map((item) => item.trim())
    : isNumeric(question.schema) && /^\d+$/.test(text)
      ? Number(text)
      : text;
  const result = question.schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data as string | number | string[] };
  return { ok: false, problem: `given ${JSON.stringify(value)}; allowed: ${result.error.issues[0].message}` };
}

/** The default of a field question: the node's current value, the program's, or one made from what is known. */
/**
 * A value of a settings file never offered at the terminal as the answer (Enter would keep it): an address in a
 * documentation range (the stock files' examples: no peer reaches it, no network permissions it), or a worker (one is
 * offered only when kubectl lists it). Without a terminal, a re-run keeps the node's values as they are.
 */
export function isPlaceholder(key: string, value: string): boolean {
  if (key === 'workerName') return true;
  return isDocumentationAddress(value);
}

export function fieldDefault(
  question: FieldQuestion,
  known: Record<string, unknown>,
  network: Network,
  current?: unknown,
): FieldDefault | undefined {
  if (current !== undefined && current !== null) return { value: String(current), implicit: false };
  // The cloud the workers' providerID names, written so that it is seen (the rule's default is `other`).
  if (question.key === 'loadBalancer.cloud' && known.workersCloud !== undefined) {
    return { value: String(known.workersCloud), implicit: false };
  }
  // The login user offered is not root (the settings' default, for stacks written before): written, so it is seen.
  if (question.key === 'user') return { value: GUIDED_SSH_USER, implicit: false };
  const ruled = ruleDefault(question.schema);
  if (ruled !== undefined) return { value: String(ruled), implicit: true };
  const suggested = (value: unknown) => (value === undefined ? undefined : { value: String(value), implicit: false });
  switch (question.key) {
    case 'p2p.host':
      return suggested(known.workerExternalIP ?? known.publicIP);
    case 'namespace':
      return { value: DEFAULT_NAMESPACE, implicit: true };
    case 'releaseVersion':
    case 'node_release_version':
      return { value: network.defaultBesuVersion, implicit: true };
    case 'node_ip':
      return suggested(known.host);
    default:
      return undefined;
  }
}

/**
 * The settings a node keeps when it moves to the other path, under their names in a values file and in an
 * inventory: its name and contact on the network and its release (its addresses are the new place's).
 */
const SAME_SETTING: ReadonlyArray<readonly [string, string]> = [
  ['nodeName', 'node_name'],
  ['nodeEmail', 'node_email'],
  ['releaseVersion', 'node_release_version'],
];

/** A value of a mapping by its dot path (`p2p.host`). */
function valueAt(mapping: Record<string, unknown> | undefined, key: string): unknown {
  return key
    .split('.')
    .reduce<unknown>(
      (at, part) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined),
      mapping,
    );
}

/**
 * The current answers of a node the setup replaces, by question key for `target`: its own path's settings (the
 * values file's `deploy` section or the inventory), or, when it moves to the other path, the settings both share.
 */
export function currentAnswers(
  target: 'kubernetes' | 'ssh',
  existing: { target: string; deploy?: Record<string, unknown>; inventory?: Record<string, unknown> },
): Record<string, unknown> {
  const questions = target === 'kubernetes' ? KUBERNETES_QUESTIONS : SSH_QUESTIONS;
  const own = target === 'kubernetes' ? existing.deploy : existing.inventory;
  if (existing.target === target) {
    return Object.fromEntries(questions.map((q) => [q.key, valueAt(own, q.key)]).filter(([, v]) => v !== undefined));
  }
  const other = target === 'kubernetes' ? existing.inventory : existing.deploy;
  const answers: Record<string, unknown> = {};
  for (const [clusterKey, machineKey] of SAME_SETTING) {
    const [mine, theirs] = target === 'kubernetes' ? [clusterKey, machineKey] : [machineKey, clusterKey];
    const value = valueAt(other, theirs);
    if (value !== undefined) answers[mine] = value;
  }
  return answers;
}

/** A worker of the cluster: `kubectl get nodes -o wide` columns NAME and EXTERNAL-IP. */
export interface Worker {
  name: string;
  externalIP?: string;
}

/** Parses `kubectl get nodes -o wide`. */
export function parseWorkers(table: string): Worker[] {
  const [header, ...rows] = table.trim().split('\n');
  if (!header) return [];
  const columns = header.trim().split(/\s+/);
  const nameAt = columns.indexOf('NAME');
  const ipAt = columns.indexOf('EXTERNAL-IP');
  return rows
    .map((row) => row.trim().split(/\s+/))
    .filter((cells) => cells.length > nameAt && nameAt >= 0)
    .map((cells) => {
      const ip = ipAt >= 0 ? cells[ipAt] : undefined;
      return { name: cells[nameAt], externalIP: ip && ip !== '<none>' ? ip : undefined };
    });
}

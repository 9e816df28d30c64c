/**
 * The questions of the guided setup (`npm run init`), in the order the reference installer asks them, each with its
 * flag, its meaning, its default and the same validation the program applies to the settings files.
 */
import { z } from 'zod';
import { NETWORK_MENU, Network } from '../catalog/networks';
import { NODE_TYPE_FACTS, NODE_TYPES, NodeType } from '../catalog/nodeTypes';
import { DEFAULT_NAMESPACE } from '../catalog/defaults';
import { deploySchema, inventorySchema, stackNodeSchema } from '../settings/schema';
import { isNumeric, isOptional, plainMeaning, ruleDefault, shapeOf } from '../settings/settingDoc';

/** The node-type menu: `[0] validator [1] boot [2] writer`. */
export const NODE_TYPE_MENU: readonly NodeType[] = [...NODE_TYPES].sort(
  (a, b) => NODE_TYPE_FACTS[a].menuIndex - NODE_TYPE_FACTS[b].menuIndex,
);

/** The menu line of node types. */
export function nodeTypeMenu(): string {
  return NODE_TYPE_MENU.map((t, i) => `[${i}] ${NODE_TYPE_FACTS[t].menuLabel}`).join(' ');
}

/** The menu line of networks. */
export function networkMenu(): string {
  return NETWORK_MENU.map((n, i) => `[${i}] ${n.name}${n.deprecated ? ' (DEPRECATED)' : ''}`).join(' ');
}

/** An answer checked: the value to store, or why it is refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

function menuChoice<T>(answer: string, items: readonly T[], menu: string): Checked<T> {
  const index = /^\d+$/.test(answer.trim()) ? Number(answer.trim()) : NaN;
  if (!Number.isInteger(index) || index < 0 || index >= items.length) {
    return { ok: false, problem: `given ${JSON.stringify(answer)}; allowed: the index of one of ${menu}` };
  }
  return { ok: true, value: items[index] };
}

/** The node type from its menu index. */
export function checkNodeType(answer: string): Checked<NodeType> {
  return menuChoice(answer, NODE_TYPE_MENU, nodeTypeMenu());
}

/** The network from its menu index: the deprecated one is refused, and it must be the stack's network. */
export function checkNetworkAnswer(answer: string, stackNetwork: Network): Checked<Network> {
  const choice = menuChoice(answer, NETWORK_MENU, networkMenu());
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

/** True when the question may be left unanswered. */
export function isOptionalQuestion(q: FieldQuestion): boolean {
  return isOptional(q.schema) && ruleDefault(q.schema) === undefined;
}

/** The fields of a Kubernetes node's values file. */
export const KUBERNETES_QUESTIONS: FieldQuestion[] = questionsOf(deploySchema.shape, [
  'workerName',
  'publicIP',
  'p2p.host',
  'p2p.port',
  'nodeName',
  'nodeEmail',
  'dnsName',
  'namespace',
  'releaseVersion',
]);

/** The inventory elements of an SSH node (the SSH port's flag says which port; the release's is the values file's). */
export const SSH_QUESTIONS: FieldQuestion[] = questionsOf(
  inventorySchema.shape,
  ['host', 'node_ip', 'node_name', 'node_email', 'user', 'port', 'host_key', 'node_release_version', 'dns_name'],
  { port: 'ssh-port', node_release_version: 'release-version' },
);

/** The node's name in the stack. */
export const NODE_NAME_QUESTION: FieldQuestion = questionsOf(stackNodeSchema.shape, ['name'])[0];

/** Checks a typed answer with the question's rule. Empty answers take the default. */
export function checkField(
  question: FieldQuestion,
  answer: string,
  fallback?: string,
): Checked<string | number | undefined> {
  const text = answer.trim() === '' ? (fallback ?? '') : answer.trim();
  if (text === '') {
    return isOptionalQuestion(question)
      ? { ok: true, value: undefined }
      : { ok: false, problem: 'an answer is required' };
  }
  const value = isNumeric(question.schema) && /^\d+$/.test(text) ? Number(text) : text;
  const result = question.schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data as string | number };
  return { ok: false, problem: `given ${JSON.stringify(value)}; allowed: ${result.error.issues[0].message}` };
}

/** The default of a field question: the schema's, or one made from what is known so far. */
export function fieldDefault(
  question: FieldQuestion,
  known: Record<string, unknown>,
  network: Network,
): string | undefined {
  const ruled = ruleDefault(question.schema);
  if (ruled !== undefined) return String(ruled);
  switch (question.key) {
    case 'p2p.host':
      return (known.workerExternalIP as string) ?? (known.publicIP as string);
    case 'namespace':
      return DEFAULT_NAMESPACE;
    case 'releaseVersion':
    case 'node_release_version':
      return network.defaultBesuVersion;
    case 'node_ip':
      return known.host as string;
    default:
      return undefined;
  }
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

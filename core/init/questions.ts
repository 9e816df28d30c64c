/**
 * The questions of the guided setup (`npm run init`), in the order the reference installer asks them, each with its
 * flag, its meaning, its default and the same validation the program applies to the settings files.
 */
import { z } from 'zod';
import { NETWORK_MENU, Network } from '../catalog/networks';
import { NODE_TYPE_FACTS, NODE_TYPES, NodeType } from '../catalog/nodeTypes';
import { PORTS } from '../catalog/ports';
import { DEFAULT_NAMESPACE, DEFAULT_SSH_PORT, DEFAULT_SSH_USER } from '../catalog/defaults';
import {
  email,
  hostAddress,
  hostname,
  ipv4,
  kubernetesLabel,
  kubernetesSubdomain,
  nodeName,
  port,
  releaseVersion,
  resourceLabel,
  sshHostKey,
  unixUser,
} from '../settings/fields';

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

/** One field question: its key in the settings file, flag, meaning, default and rule. */
export interface FieldQuestion {
  /** Key in the values file `deploy` section or the inventory (dot path). */
  key: string;
  /** The command-line flag that answers it. */
  flag: string;
  /** What it means, shown with the question. */
  meaning: string;
  /** The rule (the program's own). */
  schema: z.ZodType;
  /** Optional fields may be left empty. */
  optional?: boolean;
  /** Answers are numbers. */
  numeric?: boolean;
}

/** The fields of a Kubernetes node's values file. */
export const KUBERNETES_QUESTIONS: FieldQuestion[] = [
  {
    key: 'workerName',
    flag: 'worker-name',
    meaning: 'the Kubernetes worker the pod is pinned to',
    schema: kubernetesSubdomain,
  },
  { key: 'publicIP', flag: 'public-ip', meaning: 'the static public IP of the LoadBalancer Service', schema: ipv4 },
  { key: 'p2p.host', flag: 'p2p-host', meaning: 'the IP peers see: the one that gets permissioned', schema: ipv4 },
  { key: 'p2p.port', flag: 'p2p-port', meaning: 'the p2p port, TCP and UDP', schema: port, numeric: true },
  { key: 'nodeName', flag: 'node-name', meaning: "the node's name on the network", schema: nodeName },
  { key: 'nodeEmail', flag: 'node-email', meaning: 'your contact e-mail', schema: email },
  { key: 'dnsName', flag: 'dns-name', meaning: 'a DNS name of the node', schema: hostname, optional: true },
  { key: 'namespace', flag: 'namespace', meaning: 'the Kubernetes namespace', schema: kubernetesLabel },
  { key: 'releaseVersion', flag: 'release-version', meaning: 'the Besu release', schema: releaseVersion },
];

/** The inventory elements of an SSH node. */
export const SSH_QUESTIONS: FieldQuestion[] = [
  { key: 'host', flag: 'host', meaning: 'the address this machine uses to reach the node', schema: hostAddress },
  {
    key: 'node_ip',
    flag: 'node-ip',
    meaning: "the node's public IP: advertised to peers, part of the enode",
    schema: ipv4,
  },
  { key: 'node_name', flag: 'node-name', meaning: "the node's name on the network", schema: nodeName },
  { key: 'node_email', flag: 'node-email', meaning: 'your contact e-mail', schema: email },
  { key: 'user', flag: 'user', meaning: 'the login user (sudo is used when it is not root)', schema: unixUser },
  { key: 'port', flag: 'ssh-port', meaning: 'the SSH port', schema: port, numeric: true },
  {
    key: 'host_key',
    flag: 'host-key',
    meaning:
      "the machine's SSH host key, e.g. from ssh-keyscan -t ed25519 <host> | cut -d' ' -f2- (compare it on a channel you trust): the node key is sent only to that machine",
    schema: sshHostKey,
  },
  { key: 'node_release_version', flag: 'release-version', meaning: 'the Besu release', schema: releaseVersion },
  {
    key: 'dns_name',
    flag: 'dns-name',
    meaning: 'a DNS name of the machine (in the TLS certificate)',
    schema: hostname,
    optional: true,
  },
];

/** The node's name in the stack. */
export const NODE_NAME_QUESTION: FieldQuestion = {
  key: 'name',
  flag: 'name',
  meaning: "the node's name in this stack (resource names, outputs)",
  schema: resourceLabel,
};

/** Checks a typed answer with the question's rule. Empty answers take the default. */
export function checkField(
  question: FieldQuestion,
  answer: string,
  fallback?: string,
): Checked<string | number | undefined> {
  const text = answer.trim() === '' ? (fallback ?? '') : answer.trim();
  if (text === '') {
    return question.optional ? { ok: true, value: undefined } : { ok: false, problem: 'an answer is required' };
  }
  const value = question.numeric && /^\d+$/.test(text) ? Number(text) : text;
  const result = question.schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data as string | number };
  return { ok: false, problem: `given ${JSON.stringify(value)}; allowed: ${result.error.issues[0].message}` };
}

/** Defaults of the field questions, from what is known so far. */
export function fieldDefault(key: string, known: Record<string, unknown>, network: Network): string | undefined {
  switch (key) {
    case 'p2p.host':
      return (known.workerExternalIP as string) ?? (known.publicIP as string);
    case 'p2p.port':
      return String(PORTS.p2p);
    case 'namespace':
      return DEFAULT_NAMESPACE;
    case 'releaseVersion':
    case 'node_release_version':
      return network.defaultBesuVersion;
    case 'node_ip':
      return known.host as string;
    case 'user':
      return DEFAULT_SSH_USER;
    case 'port':
      return String(DEFAULT_SSH_PORT);
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

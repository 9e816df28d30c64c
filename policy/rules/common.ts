/**
 * What every policy rule shares: the rule's shape, how a resource is named in messages, and reading what a resource
 * carries (the node it belongs to and what its settings say, a remote step's parameters, a config.toml, containers).
 */
import { NETWORKS, Network } from '../../core/catalog/networks';
import type { ExpectedNode, PolicyContext } from '../expectations';
import {
  at,
  configMapToml,
  kubernetesNodeOf,
  NODE_LABEL,
  networkLabelOf,
  parseConfigToml,
  ParsedConfig,
  PolicyResource,
  remoteStepOf,
  stepParameters,
  TYPES,
} from '../inspect';

/** One rule. */
export interface Rule {
  /** The policy name (kebab-case, unique in the pack). */
  name: string;
  /** What the rule requires, in the operator's words. */
  description: string;
  /** The type tokens it looks at; other resources are not its business. */
  types: readonly string[];
  /** The violations of one resource (empty when it complies). */
  check(resource: PolicyResource, context: PolicyContext): string[];
  /** An advisory rule flags what the operator chose, or a test network lets pass: shown, never failing anything. */
  advisory?: boolean;
}

/** One violation found on one resource. */
export interface Violation {
  policy: string;
  type: string;
  name: string;
  message: string;
  /** From an advisory rule: a warning. */
  advisory?: boolean;
}

/** How a resource is named in messages: `StatefulSet writer-node`, `remote step release of node v (v-release)`. */
export function describeResource(resource: PolicyResource): string {
  if (resource.type === TYPES.command) {
    const step = remoteStepOf(resource);
    return step ? `remote step ${step.step} of node ${step.node} (${resource.name})` : `remote step ${resource.name}`;
  }
  return `${resource.type.split(':').pop()} ${resource.name}`;
}

/** What the settings say about a node, or the violation explaining why that cannot be known. */
export function expectedNode(context: PolicyContext, node: string | undefined, where: string): ExpectedNode | string {
  if (!node) return `${where}: cannot tell which node it belongs to (no ${NODE_LABEL} label, no besu-node-<node> name)`;
  if (!context.nodes) {
    return `${where}: cannot be checked against the settings of node ${node}: ${context.settingsProblem ?? 'they were not read'}`;
  }
  return context.nodes[node] ?? `${where}: node ${node} is not in the stack's settings (lacchain:nodes)`;
}

/** The network a resource belongs to: the stack's, else the one its label names. */
export function networkOf(resource: PolicyResource, context: PolicyContext): Network | undefined {
  if (context.network) return context.network;
  const label = networkLabelOf(resource);
  return label ? Object.values(NETWORKS).find((n) => n.name === label) : undefined;
}

/** The parameters of a remote step, when the resource is that step and its input is known. */
export function remoteParameters(resource: PolicyResource, steps: readonly string[]) {
  const step = remoteStepOf(resource);
  if (!step || !steps.includes(step.step)) return undefined;
  const parameters = stepParameters(resource.inputs.stdin);
  return parameters ? { ...step, parameters } : undefined;
}

/** The config.toml a resource carries: a ConfigMap's, or the one the node-files step writes. */
export function configOf(resource: PolicyResource): { parsed: ParsedConfig; node?: string } | undefined {
  if (resource.type === TYPES.configMap) return { parsed: configMapToml(resource), node: kubernetesNodeOf(resource) };
  const files = remoteParameters(resource, ['node-files']);
  if (!files) return undefined;
  return {
    parsed: parseConfigToml(files.parameters.CONFIG_TOML, describeResource(resource)),
    node: files.node,
  };
}

/** Runs a check on the config.toml of a resource, reporting an unreadable one. */
export function withConfig(
  resource: PolicyResource,
  check: (config: Record<string, unknown>, node: string | undefined) => string[],
): string[] {
  const found = configOf(resource);
  if (!found || 'unknown' in found.parsed) return [];
  if ('problem' in found.parsed) return [found.parsed.problem];
  return check(found.parsed.config, found.node);
}

/** The Besu containers of a StatefulSet's pod. */
export function containersOf(resource: PolicyResource): Record<string, unknown>[] {
  const containers = at(resource.inputs, 'spec', 'template', 'spec', 'containers');
  return Array.isArray(containers) ? (containers as Record<string, unknown>[]) : [];
}

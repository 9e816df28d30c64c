/**
 * Rules on the RPC's exposure: no unsafe or consensus-voting API and no any-origin CORS on a port reachable from
 * outside, in config.toml or in the Besu container's own variables and flags (a test network's explicit opt-in is a
 * warning); no authentication on a port reachable in plain HTTP.
 */
import { UNSAFE_RPC_APIS } from '../../core/catalog/nodeTypes';
import { CONSENSUS_RPC_APIS, CONSENSUS_VOTE_METHODS } from '../../core/catalog/rpc';
import type { PolicyContext } from '../expectations';
import type { PolicyResource } from '../inspect';
import { kubernetesNodeOf, stringList, TYPES } from '../inspect';
import { configOf, containersOf, describeResource, networkOf, Rule, withConfig } from './common';

const LOCAL_ADDRESSES = new Set(['127.0.0.1', 'localhost', '::1']);
const WILDCARDS = new Set(['*', 'all']);

/** One thing found on a port reachable from outside: what it is (an API group, `cors:*`) and the message. */
interface Finding {
  item: string;
  message: string;
}

/** The consensus vote methods of a group, for messages. */
const voteMethods = (group: string) => CONSENSUS_VOTE_METHODS[group as keyof typeof CONSENSUS_VOTE_METHODS] ?? [];

/**
 * What a config serves on a port reachable from outside the node's machine or cluster that must not be there unless
 * the operator opted the node in: unsafe API groups, consensus groups (their vote methods), any-origin CORS.
 * `reachable` is what the node's settings say of its RPC (through a reverse proxy too); without them, a port bound
 * to a non-loopback address counts as public, and on a machine (`onMachine`) it always does.
 */
function rpcFindings(
  config: Record<string, unknown>,
  where: string,
  reachable: boolean | undefined,
  onMachine: boolean,
): Finding[] {
  const findings: Finding[] = [];
  const outsideOnly = [...UNSAFE_RPC_APIS, ...CONSENSUS_RPC_APIS] as readonly string[];
  const anyOrigin = (key: string) => stringList(config[key]).some((v) => WILDCARDS.has(v.toLowerCase()));
  const services = [
    // HTTP is what a reverse proxy forwards to, so the settings decide even for a loopback binding.
    { name: 'RPC over HTTP', prefix: 'rpc-http', proxied: true },
    { name: 'RPC over WebSocket', prefix: 'rpc-ws', proxied: false },
    { name: 'GraphQL', prefix: 'graphql-http', proxied: false },
  ];
  for (const service of services) {
    if (config[`${service.prefix}-enabled`] !== true) continue;
    const host = config[`${service.prefix}-host`];
    const bound = host !== undefined && !LOCAL_ADDRESSES.has(String(host));
    // On a machine a port bound to a public address is reachable whatever the settings say (a host firewall is not
    // always there): a config that drifted from its settings is caught. A pod's ports are fenced by its Service.
    const exposed = (service.proxied ? (reachable ?? bound) : bound && reachable !== false) || (onMachine && bound);
    if (!exposed) continue;
    const port = config[`${service.prefix}-port`];
    const on = `${service.name} (${String(host ?? '127.0.0.1')}:${String(port ?? 'default port')}, publicly reachable)`;
    const api = `${service.prefix}-api`;
    const groups = service.prefix === 'graphql-http' ? [] : stringList(config[api]).map((g) => g.toUpperCase());
    for (const group of groups.filter((g) => outsideOnly.includes(g))) {
      const votes = voteMethods(group);
      findings.push({
        item: group,
        message:
          votes.length > 0
            ? `${where}: ${on} enables ${group} (${api}): whoever reaches it can vote on validators (${votes.join(', ')})`
            : `${where}: ${on} enables ${group} (${api}): never ${UNSAFE_RPC_APIS.join(', ')} on a public port`,
      });
    }
    const cors = `${service.prefix}-cors-origins`;
    if (service.prefix !== 'rpc-ws' && anyOrigin(cors)) {
      findings.push({
        item: 'cors:*',
        message: `${where}: ${on} accepts CORS from any origin (${cors} "*"): name the origins`,
      });
    }
  }
  return findings;
}

/** Besu options given to a container as BESU_* variables or --flags, which override config.toml. */
function containerOverrides(container: Record<string, unknown>): Record<string, string> {
  const overrides: Record<string, string> = {};
  const env = Array.isArray(container.env) ? (container.env as Record<string, unknown>[]) : [];
  for (const variable of env) {
    const name = String(variable.name ?? '');
    if (name.startsWith('BESU_') && typeof variable.value === 'string') {
      overrides[name.slice(5).toLowerCase().replace(/_/g, '-')] = variable.value;
    }
  }
  const args = [
    ...(Array.isArray(container.command) ? container.command : []),
    ...(Array.isArray(container.args) ? container.args : []),
  ].map(String);
  args.forEach((arg, i) => {
    const match = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(arg);
    if (match) overrides[match[1]] = match[2] ?? args[i + 1] ?? '';
  });
  return overrides;
}

/** The findings of a resource: its config.toml's, or (a StatefulSet) its Besu containers' own variables and flags. */
function findingsOf(resource: PolicyResource, context: PolicyContext): { node?: string; findings: Finding[] } {
  const where = describeResource(resource);
  const reachable = (node: string | undefined) => (node ? context.nodes?.[node]?.rpcPublic : undefined);
  if (resource.type !== TYPES.statefulSet) {
    const found = configOf(resource);
    if (!found || 'unknown' in found.parsed || 'problem' in found.parsed) return { findings: [] };
    const onMachine = resource.type === TYPES.command;
    return { node: found.node, findings: rpcFindings(found.parsed.config, where, reachable(found.node), onMachine) };
  }
  const node = kubernetesNodeOf(resource);
  const findings: Finding[] = [];
  for (const container of containersOf(resource)) {
    const overrides = containerOverrides(container);
    if (Object.keys(overrides).length === 0) continue;
    // Given to the container itself, they override config.toml on the pod's ports (bound to every address).
    const config: Record<string, unknown> = {
      'rpc-http-enabled': true,
      'rpc-http-host': '0.0.0.0',
      'rpc-ws-enabled': true,
      'rpc-ws-host': '0.0.0.0',
      'graphql-http-enabled': true,
      'graphql-http-host': '0.0.0.0',
      ...overrides,
    };
    findings.push(...rpcFindings(config, `${where} container ${String(container.name)}`, reachable(node), false));
  }
  return { node, findings };
}

/** Whether a finding is covered by the node's explicit opt-in on a network where an opt-in is only a warning. */
function optedIn(finding: Finding, node: string | undefined, resource: PolicyResource, context: PolicyContext) {
  const optIns = node ? (context.nodes?.[node]?.rpcOptIns ?? []) : [];
  return optIns.includes(finding.item) && networkOf(resource, context)?.rpcOptInsAdvisory === true;
}

export const rpcSafeOnPublicPorts: Rule = {
  name: 'rpc-safe-on-public-ports',
  description:
    `No ${UNSAFE_RPC_APIS.join(', ')} or consensus-voting (${CONSENSUS_RPC_APIS.join(', ')}) RPC API and no "*" CORS ` +
    'origin on an RPC port reachable from outside the node, in config.toml or in BESU_* variables and flags of the ' +
    "Besu container; on a test network a node's explicit opt-in is only flagged (rpc-outside-opt-in).",
  types: [TYPES.configMap, TYPES.statefulSet, TYPES.command],
  check(resource, context) {
    const { node, findings } = findingsOf(resource, context);
    const unreadable = resource.type === TYPES.statefulSet ? [] : withConfig(resource, () => []);
    return [...unreadable, ...findings.filter((f) => !optedIn(f, node, resource, context)).map((f) => f.message)];
  },
};

export const rpcOutsideOptIn: Rule = {
  name: 'rpc-outside-opt-in',
  description:
    "Flags a test network's node whose operator opted it into unsafe or consensus-voting RPC methods reachable from " +
    'outside (rpc.allowUnsafeApis, rpc.allowConsensusVotesFromOutside).',
  types: [TYPES.configMap, TYPES.statefulSet, TYPES.command],
  advisory: true,
  check(resource, context) {
    const { node, findings } = findingsOf(resource, context);
    return findings
      .filter((f) => optedIn(f, node, resource, context))
      .map((f) => `${f.message} (the operator's opt-in: keep it off once the test is over)`);
  },
};

export const rpcAuthNotInPlainText: Rule = {
  name: 'rpc-auth-not-in-plain-text',
  description:
    "With RPC authentication on (config.toml's rpc-http-authentication-enabled), the RPC is not reachable from " +
    "outside in plain HTTP: not on Besu's 4545 (exposure public), not on a Kubernetes writer's 80 (the pod has no " +
    'TLS), so logins and tokens never cross the network in clear.',
  types: [TYPES.configMap, TYPES.command],
  check(resource, context) {
    const where = describeResource(resource);
    return withConfig(resource, (config, node) => {
      if (config['rpc-http-enabled'] !== true || config['rpc-http-authentication-enabled'] !== true) return [];
      // The settings say which ports are reachable in plain HTTP; without them, a non-loopback binding counts.
      const known = node ? context.nodes?.[node]?.rpcPlainTextPorts : undefined;
      const host = config['rpc-http-host'];
      const bound = host !== undefined && !LOCAL_ADDRESSES.has(String(host));
      const port = String(config['rpc-http-port'] ?? 'the RPC port');
      // On a machine a public binding is reachable whatever the settings say (see rpcFindings).
      const drifted = resource.type === TYPES.command && bound && !(known ?? []).map(String).includes(port);
      const ports = known ? [...known.map(String), ...(drifted ? [port] : [])] : bound ? [port] : [];
      if (ports.length === 0) return [];
      return [
        `${where}: RPC authentication is on while the RPC is reachable from outside in plain HTTP (${ports.join(', ')}): ` +
          'logins and tokens would cross the network in clear; use exposure tls-only on a machine, or internal ' +
          'behind your own TLS ingress on a cluster (lacchain:rpc.exposure)',
      ];
    });
  },
};

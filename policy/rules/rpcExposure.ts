/**
 * Rules on the RPC's exposure: no unsafe API and no any-origin CORS on a port reachable from outside, in config.toml
 * or in the Besu container's own variables and flags; no authentication on a port reachable in plain HTTP.
 */
import { UNSAFE_RPC_APIS } from '../../core/catalog/nodeTypes';
import { kubernetesNodeOf, stringList, TYPES } from '../inspect';
import { containersOf, describeResource, Rule, withConfig } from './common';

const LOCAL_ADDRESSES = new Set(['127.0.0.1', 'localhost', '::1']);
const WILDCARDS = new Set(['*', 'all']);

/**
 * The RPC exposure problems of a config: unsafe APIs or any-origin CORS on a port reachable from outside the node's
 * machine or cluster. `reachable` is what the node's settings say of its RPC (through a reverse proxy too); without
 * them, a port bound to a non-loopback address counts as public.
 */
function rpcProblems(config: Record<string, unknown>, where: string, reachable: boolean | undefined): string[] {
  const problems: string[] = [];
  const unsafeApis = (key: string) =>
    stringList(config[key])
      .map((api) => api.toUpperCase())
      .filter((api) => (UNSAFE_RPC_APIS as readonly string[]).includes(api));
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
    const exposed = service.proxied ? (reachable ?? bound) : bound && reachable !== false;
    if (!exposed) continue;
    const port = config[`${service.prefix}-port`];
    const on = `${service.name} (${String(host ?? '127.0.0.1')}:${String(port ?? 'default port')}, publicly reachable)`;
    const api = `${service.prefix}-api`;
    const unsafe = service.prefix === 'graphql-http' ? [] : unsafeApis(api);
    if (unsafe.length > 0) {
      problems.push(
        `${where}: ${on} enables ${unsafe.join(', ')} (${api}): never ${UNSAFE_RPC_APIS.join(', ')} on a public port`,
      );
    }
    const cors = `${service.prefix}-cors-origins`;
    if (service.prefix !== 'rpc-ws' && anyOrigin(cors)) {
      problems.push(`${where}: ${on} accepts CORS from any origin (${cors} "*"): name the origins`);
    }
  }
  return problems;
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

export const rpcSafeOnPublicPorts: Rule = {
  name: 'rpc-safe-on-public-ports',
  description:
    'No ADMIN, DEBUG or TXPOOL RPC API and no "*" CORS origin on an RPC port reachable from outside the node, in ' +
    'config.toml or in BESU_* variables and flags of the Besu container.',
  types: [TYPES.configMap, TYPES.statefulSet, TYPES.command],
  check(resource, context) {
    const where = describeResource(resource);
    const reachable = (node: string | undefined) => (node ? context.nodes?.[node]?.rpcPublic : undefined);
    if (resource.type !== TYPES.statefulSet) {
      return withConfig(resource, (config, node) => rpcProblems(config, where, reachable(node)));
    }
    const problems: string[] = [];
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
      problems.push(
        ...rpcProblems(config, `${where} container ${String(container.name)}`, reachable(kubernetesNodeOf(resource))),
      );
    }
    return problems;
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
      const ports = known ?? (bound ? [String(config['rpc-http-port'] ?? 'the RPC port')] : []);
      if (ports.length === 0) return [];
      return [
        `${where}: RPC authentication is on while the RPC is reachable from outside in plain HTTP (${ports.join(', ')}): ` +
          'logins and tokens would cross the network in clear; use exposure tls-only on a machine, or internal ' +
          'behind your own TLS ingress on a cluster (lacchain:rpc.exposure)',
      ];
    });
  },
};

/**
 * The rules that keep a LACChain node permissioned and safe, as pure functions: a resource (type, name, inputs,
 * options) and what the stack's settings say, in; the violations found, out (empty when the resource complies).
 * The CrossGuard policy pack (policy/index.ts, `pulumi preview --policy-pack policy`) and the offline plan
 * (`npm run plan`) run these same functions. Nothing here imports Pulumi.
 *
 * The program declares only node objects, so every object of a type a rule looks at is a node's: a renamed or
 * unlabelled object is checked too, never skipped. A value unknown until `pulumi up` (an identity generated then)
 * is skipped; everything else a rule needs and cannot read is a violation.
 */
import { atLeast, BESU_IMAGE_REPOSITORY, parseVersion, PERMISSIONING_REMOVED_IN } from '../core/catalog/besu';
import {
  LOAD_BALANCER_IP_ANNOTATIONS,
  IDENTITY_ANNOTATIONS,
  kubernetesNames,
  POD_FILES,
} from '../core/catalog/kubernetes';
import { NETWORKS, Network } from '../core/catalog/networks';
import { UNSAFE_RPC_APIS } from '../core/catalog/nodeTypes';
import { quantityBytes } from '../core/kubernetes/quantity';
import type { ExpectedNode, PolicyContext } from './expectations';
import {
  at,
  configMapToml,
  enodeEndpoint,
  isOpaque,
  kubernetesNodeOf,
  NODE_LABEL,
  networkLabelOf,
  parseConfigToml,
  ParsedConfig,
  placeholderDigest,
  PolicyResource,
  remoteStepOf,
  sha256,
  stepParameters,
  stringList,
  TYPES,
} from './inspect';

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
}

/** One violation found on one resource. */
export interface Violation {
  policy: string;
  type: string;
  name: string;
  message: string;
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
function expectedNode(context: PolicyContext, node: string | undefined, where: string): ExpectedNode | string {
  if (!node) return `${where}: cannot tell which node it belongs to (no ${NODE_LABEL} label, no besu-node-<node> name)`;
  if (!context.nodes) {
    return `${where}: cannot be checked against the settings of node ${node}: ${context.settingsProblem ?? 'they were not read'}`;
  }
  return context.nodes[node] ?? `${where}: node ${node} is not in the stack's settings (lacchain:nodes)`;
}

/** The network a resource belongs to: the stack's, else the one its label names. */
function networkOf(resource: PolicyResource, context: PolicyContext): Network | undefined {
  if (context.network) return context.network;
  const label = networkLabelOf(resource);
  return label ? Object.values(NETWORKS).find((n) => n.name === label) : undefined;
}

/** The parameters of a remote step, when the resource is that step and its input is known. */
function remoteParameters(resource: PolicyResource, steps: readonly string[]) {
  const step = remoteStepOf(resource);
  if (!step || !steps.includes(step.step)) return undefined;
  const parameters = stepParameters(resource.inputs.stdin);
  return parameters ? { ...step, parameters } : undefined;
}

/** The config.toml a resource carries: a ConfigMap's, or the one the node-files step writes. */
function configOf(resource: PolicyResource): { parsed: ParsedConfig; node?: string } | undefined {
  if (resource.type === TYPES.configMap) return { parsed: configMapToml(resource), node: kubernetesNodeOf(resource) };
  const files = remoteParameters(resource, ['node-files']);
  if (!files) return undefined;
  return {
    parsed: parseConfigToml(files.parameters.CONFIG_TOML, describeResource(resource)),
    node: files.node,
  };
}

/** Runs a check on the config.toml of a resource, reporting an unreadable one. */
function withConfig(
  resource: PolicyResource,
  check: (config: Record<string, unknown>, node: string | undefined) => string[],
): string[] {
  const found = configOf(resource);
  if (!found || 'unknown' in found.parsed) return [];
  if ('problem' in found.parsed) return [found.parsed.problem];
  return check(found.parsed.config, found.node);
}

/**
 * Checks that an object outlives the stack: kept on delete (`retainOnDelete`, which `pulumi destroy` honours by
 * forgetting the object and leaving it in the cluster), and not `protect`ed, which would make every `pulumi destroy`
 * fail in its preview and delete nothing. CrossGuard does not show `retainOnDelete`; the offline plan does.
 */
function keptChecks(resource: PolicyResource, what: string, why: string): string[] {
  const where = describeResource(resource);
  const problems: string[] = [];
  if (resource.options.protect) {
    problems.push(
      `${where} (${what}) is protected: pulumi destroy would fail and delete nothing; keep it with retainOnDelete instead`,
    );
  }
  if (resource.options.retainOnDelete === false) {
    problems.push(`${where} (${what}) is not kept on delete (retainOnDelete): ${why}`);
  }
  return problems;
}

/** Why a release cannot keep a node permissioned, or undefined when it can. */
function releaseProblem(version: string): string | undefined {
  if (!parseVersion(version)) return `"${version}" is not a release version <major>.<minor>.<patch>`;
  if (atLeast(version, PERMISSIONING_REMOVED_IN)) {
    return `Besu ${version} has no on-chain permissioning (removed in ${PERMISSIONING_REMOVED_IN}), which the LACChain networks need: stay below ${PERMISSIONING_REMOVED_IN}`;
  }
  return undefined;
}

/** The release of a Besu image reference (`hyperledger/besu:23.4.1`), or the problem reading it. */
function imageRelease(image: string): { version: string } | { problem: string } {
  if (image.includes('@')) return { problem: `image ${image} is pinned by digest: its release cannot be checked` };
  const colon = image.lastIndexOf(':');
  const tag = colon > image.lastIndexOf('/') ? image.slice(colon + 1) : '';
  if (!tag) return { problem: `image ${image} has no release tag (it would run "latest")` };
  const version = /^(\d+\.\d+\.\d+)(?:$|[-+])/.exec(tag)?.[1];
  return version ? { version } : { problem: `image ${image}: tag "${tag}" is not a release version` };
}

/** True for an image of Besu (`hyperledger/besu`, with or without a registry). */
function isBesuImage(image: string): boolean {
  const repository = image.split('@')[0].replace(/:[^:/]*$/, '');
  return repository === BESU_IMAGE_REPOSITORY || repository.endsWith(`/${BESU_IMAGE_REPOSITORY}`);
}

/** The Besu containers of a StatefulSet's pod. */
function containersOf(resource: PolicyResource): Record<string, unknown>[] {
  const containers = at(resource.inputs, 'spec', 'template', 'spec', 'containers');
  return Array.isArray(containers) ? (containers as Record<string, unknown>[]) : [];
}

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

const podPinnedToWorker: Rule = {
  name: 'pod-pinned-to-worker',
  description:
    "The node's pod is pinned to the worker its settings name (deploy.workerName), so its egress IP, part of its " +
    'permissioned identity, never changes.',
  types: [TYPES.statefulSet],
  check(resource, context) {
    const where = describeResource(resource);
    const worker = at(resource.inputs, 'spec', 'template', 'spec', 'nodeName');
    if (isOpaque(worker)) return [];
    if (typeof worker !== 'string' || worker === '') {
      return [`${where}: the pod is not pinned to a worker (spec.template.spec.nodeName is not set)`];
    }
    const expected = expectedNode(context, kubernetesNodeOf(resource), where);
    if (typeof expected === 'string') return [expected];
    return worker === expected.workerName
      ? []
      : [`${where}: the pod is pinned to worker "${worker}", but deploy.workerName is "${expected.workerName}"`];
  },
};

const serviceOnPublicIp: Rule = {
  name: 'service-static-public-ip',
  description:
    "The node's LoadBalancer Service asks for the static IP its settings name (deploy.publicIP), in " +
    'spec.loadBalancerIP and in every load-balancer IP annotation.',
  types: [TYPES.service],
  check(resource, context) {
    const where = describeResource(resource);
    const problems: string[] = [];
    const type = at(resource.inputs, 'spec', 'type');
    if (type !== 'LoadBalancer' && !isOpaque(type)) {
      problems.push(`${where}: type is ${JSON.stringify(type)}, not LoadBalancer: the node has no static public IP`);
    }
    const expected = expectedNode(context, kubernetesNodeOf(resource), where);
    if (typeof expected === 'string') problems.push(expected);
    const ip = at(resource.inputs, 'spec', 'loadBalancerIP');
    if (!isOpaque(ip) && (typeof ip !== 'string' || ip === '')) {
      problems.push(`${where}: spec.loadBalancerIP is not set: the Service would get a changing IP`);
    } else if (!isOpaque(ip) && typeof expected !== 'string' && ip !== expected.publicIP) {
      problems.push(
        `${where}: spec.loadBalancerIP is ${JSON.stringify(ip)}, but deploy.publicIP is "${expected.publicIP}"`,
      );
    }
    // Without the settings, the annotations must at least agree with spec.loadBalancerIP.
    const wanted = typeof expected !== 'string' ? expected.publicIP : typeof ip === 'string' && ip ? ip : undefined;
    for (const annotation of LOAD_BALANCER_IP_ANNOTATIONS) {
      const value = at(resource.inputs, 'metadata', 'annotations', annotation);
      if (isOpaque(value) || wanted === undefined || value === wanted) continue;
      const given = value === undefined ? 'missing' : JSON.stringify(value);
      problems.push(`${where}: annotation ${annotation} is ${given}, not the public IP "${wanted}"`);
    }
    return problems;
  },
};

const p2pHostIsPermissionedIp: Rule = {
  name: 'p2p-host-is-permissioned-ip',
  description:
    'The node advertises the permissioned address its settings name (deploy.p2p.host or inventory.node_ip, with ' +
    "its p2p port): config.toml's p2p-host and p2p-port, no NAT detection, and the enode the node is known by.",
  types: [TYPES.configMap, TYPES.service, TYPES.command],
  check(resource, context) {
    const where = describeResource(resource);
    const endpointProblems = (enode: unknown, node: string | undefined, what: string): string[] => {
      const endpoint = enodeEndpoint(enode);
      if (isOpaque(enode) || enode === undefined || enode === '') return [];
      const expected = expectedNode(context, node, where);
      if (typeof expected === 'string') return [expected];
      if (endpoint && endpoint.host === expected.p2pHost && endpoint.port === expected.p2pPort) return [];
      return [`${where}: ${what} ${String(enode)} does not end in @${expected.p2pHost}:${expected.p2pPort}`];
    };
    if (resource.type === TYPES.service) {
      const enode = at(resource.inputs, 'metadata', 'annotations', IDENTITY_ANNOTATIONS.enode);
      return endpointProblems(enode, kubernetesNodeOf(resource), `annotation ${IDENTITY_ANNOTATIONS.enode}`);
    }
    const start = remoteParameters(resource, ['start']);
    if (start) return endpointProblems(start.parameters.EXPECTED_ENODE, start.node, 'EXPECTED_ENODE');
    const files = remoteParameters(resource, ['node-files']);
    const enodeProblems = files ? endpointProblems(files.parameters.NODE_ENODE, files.node, 'NODE_ENODE') : [];
    return [
      ...enodeProblems,
      ...withConfig(resource, (config, node) => {
        const expected = expectedNode(context, node, where);
        if (typeof expected === 'string') return [expected];
        const problems: string[] = [];
        if (config['p2p-host'] !== expected.p2pHost) {
          problems.push(
            `${where}: config.toml p2p-host is ${JSON.stringify(config['p2p-host'])}, not the permissioned address "${expected.p2pHost}"`,
          );
        }
        if (config['p2p-port'] !== undefined && config['p2p-port'] !== expected.p2pPort) {
          problems.push(`${where}: config.toml p2p-port is ${String(config['p2p-port'])}, not ${expected.p2pPort}`);
        }
        const nat = config['nat-method'];
        if (nat !== undefined && String(nat).toUpperCase() !== 'NONE') {
          problems.push(
            `${where}: config.toml nat-method is ${JSON.stringify(nat)}: Besu would advertise a detected address, not p2p-host`,
          );
        }
        return problems;
      }),
    ];
  },
};

const rpcSafeOnPublicPorts: Rule = {
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

const nodeKeyKept: Rule = {
  name: 'node-key-secret-kept',
  description:
    'The Secret holding the node key is kept on delete (and not protected, so destroy works): losing it loses the ' +
    "node's permissioned identity (enode and address).",
  types: [TYPES.secret],
  check(resource) {
    // Only the node key's Secret: other Secrets of a node (the RPC credentials) follow their settings.
    const node = kubernetesNodeOf(resource);
    const name = at(resource.inputs, 'metadata', 'name');
    if (node !== undefined && name !== kubernetesNames(node).keySecret) return [];
    return keptChecks(
      resource,
      'the node key',
      "deleting it loses the node's permissioned identity (set lacchain:allowKeyDeletion back to false)",
    );
  },
};

const dataVolumeKept: Rule = {
  name: 'data-volume-kept',
  description:
    "The node's data volume is kept on delete (and not protected, so destroy works): the chain data is never lost by accident.",
  types: [TYPES.volume],
  check(resource) {
    return keptChecks(resource, 'the chain data', 'deleting it loses the synchronised chain');
  },
};

const MAINNET = NETWORKS['mainnet-omega'];

const mainnetVolumeSize: Rule = {
  name: 'mainnet-volume-size',
  description: `A mainnet node's data volume is at least the recommended size (${MAINNET.volumeSize}).`,
  types: [TYPES.volume],
  check(resource, context) {
    const onMainnet = networkLabelOf(resource) === MAINNET.name || context.network?.name === MAINNET.name;
    if (!onMainnet) return [];
    const where = describeResource(resource);
    const size = at(resource.inputs, 'spec', 'resources', 'requests', 'storage');
    if (isOpaque(size)) return [];
    const bytes = quantityBytes(size);
    if (bytes === undefined) return [`${where}: storage request ${JSON.stringify(size)} is not a storage size`];
    return bytes >= (quantityBytes(MAINNET.volumeSize) as number)
      ? []
      : [`${where}: ${String(size)} is below the ${MAINNET.volumeSize} recommended on ${MAINNET.name}`];
  },
};

const besuVersionHasPermissioning: Rule = {
  name: 'besu-version-supports-permissioning',
  description: `The Besu release still has on-chain node permissioning (below ${PERMISSIONING_REMOVED_IN}).`,
  types: [TYPES.statefulSet, TYPES.command],
  check(resource) {
    const where = describeResource(resource);
    if (resource.type === TYPES.command) {
      const step = remoteParameters(resource, ['release', 'start']);
      const version = step?.parameters.BESU_VERSION;
      if (version === undefined) return [];
      const problem = releaseProblem(version);
      return problem ? [`${where}: BESU_VERSION ${problem}`] : [];
    }
    const images = containersOf(resource)
      .map((c) => c.image)
      .filter((image): image is string => typeof image === 'string' && !isOpaque(image) && isBesuImage(image));
    if (images.length === 0 && containersOf(resource).length > 0) {
      return [`${where}: no container runs ${BESU_IMAGE_REPOSITORY}: the release cannot be checked`];
    }
    return images.flatMap((image) => {
      const release = imageRelease(image);
      if ('problem' in release) return [`${where}: ${release.problem}`];
      const problem = releaseProblem(release.version);
      return problem ? [`${where}: image ${image}: ${problem}`] : [];
    });
  },
};

/** Why a genesis text is not the network's pinned one, or undefined when it is. */
function genesisProblem(text: unknown, network: Network | undefined): string | undefined {
  if (!network) return 'the network is unknown, so the pinned genesis digest is too';
  if (typeof text !== 'string') return 'no genesis is given';
  const pinned = network.genesis.sha256;
  if (sha256(text) === pinned || placeholderDigest(text) === pinned) return undefined;
  const named = placeholderDigest(text);
  return `the genesis has sha256 ${named ?? sha256(text)}, not the digest pinned for ${network.name} (${pinned})`;
}

const genesisDigestPinned: Rule = {
  name: 'genesis-digest-pinned',
  description:
    "The genesis the node starts from is the network's, by the SHA-256 pinned in the catalog (or, in the offline " +
    'plan, the placeholder naming that digest).',
  types: [TYPES.configMap, TYPES.command],
  check(resource, context) {
    const where = describeResource(resource);
    if (resource.type === TYPES.configMap) {
      const text = at(resource.inputs, 'data', POD_FILES.genesis);
      if (isOpaque(text) || isOpaque(at(resource.inputs, 'data'))) return [];
      const problem = genesisProblem(text, networkOf(resource, context));
      return problem ? [`${where}: ${POD_FILES.genesis}: ${problem}`] : [];
    }
    const files = remoteParameters(resource, ['node-files']);
    if (!files) return [];
    const { GENESIS_JSON: text, GENESIS_SHA256: digest } = files.parameters;
    const problem = genesisProblem(text, networkOf(resource, context));
    if (problem) return [`${where}: GENESIS_JSON: ${problem}`];
    // The step checks the file it writes against GENESIS_SHA256: it must be the digest of what is sent.
    return digest === sha256(text)
      ? []
      : [`${where}: GENESIS_SHA256 ${String(digest)} is not the digest of the GENESIS_JSON sent (${sha256(text)})`];
  },
};

const nodePermissioningEnabled: Rule = {
  name: 'node-permissioning-enabled',
  description:
    "config.toml enables on-chain node permissioning with the network's node permissioning contract, so the node " +
    'only peers with permissioned nodes.',
  types: [TYPES.configMap, TYPES.command],
  check(resource, context) {
    const where = describeResource(resource);
    return withConfig(resource, (config) => {
      const problems: string[] = [];
      if (config['permissions-nodes-contract-enabled'] !== true) {
        problems.push(`${where}: config.toml does not set permissions-nodes-contract-enabled = true`);
      }
      const network = networkOf(resource, context);
      const address = config['permissions-nodes-contract-address'];
      if (!network) {
        problems.push(`${where}: the network is unknown, so its node permissioning contract is too`);
      } else if (String(address).toLowerCase() !== network.nodesPermissioningContract.toLowerCase()) {
        problems.push(
          `${where}: permissions-nodes-contract-address is ${JSON.stringify(address)}, not ${network.name}'s ${network.nodesPermissioningContract}`,
        );
      }
      return problems;
    });
  },
};

/** Every rule, in the order they are reported. */
export const RULES: readonly Rule[] = [
  podPinnedToWorker,
  serviceOnPublicIp,
  p2pHostIsPermissionedIp,
  rpcSafeOnPublicPorts,
  nodeKeyKept,
  dataVolumeKept,
  mainnetVolumeSize,
  besuVersionHasPermissioning,
  genesisDigestPinned,
  nodePermissioningEnabled,
];

/** Runs the rules over resources; returns every violation, in resource then rule order. */
export function checkResources(
  resources: readonly PolicyResource[],
  context: PolicyContext,
  rules: readonly Rule[] = RULES,
): Violation[] {
  const violations: Violation[] = [];
  for (const resource of resources) {
    for (const rule of rules) {
      if (!rule.types.includes(resource.type)) continue;
      for (const message of rule.check(resource, context)) {
        violations.push({ policy: rule.name, type: resource.type, name: resource.name, message });
      }
    }
  }
  return violations;
}

/** One violation as a line: `[policy] message`. */
export function formatViolation(violation: Violation): string {
  return `[${violation.policy}] ${violation.message}`;
}

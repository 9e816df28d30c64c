/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The policy rules (policy/rules.ts) on the resources the program really declares — a writer on Kubernetes and a
 * validator over SSH on testnet, a validator and a bootnode on mainnet — which pass, then on each of them altered
 * the way a bad change would alter them, which fail with the rule's own violation. Every failing case runs the whole
 * rule list, so removing a rule makes its cases fail.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { NETWORKS } from '../../core/catalog/networks';
import { companionReleaseUrl, RELAY_SIGNER } from '../../core/catalog/companions';
import { exportLines } from '../../core/remote/shell';
import { redact } from '../../tools/recording/engine';
import {
  contextFromSettings,
  ExpectedNode,
  loadPolicyContext,
  PolicyContext,
  stackOfUrn,
} from '../../policy/expectations';
import {
  planGenesisPlaceholder,
  placeholderDigest,
  PolicyResource,
  stepParameters,
  TYPES,
  UNKNOWN_MARKER,
} from '../../policy/inspect';
import { policyResources } from '../../policy/offline';
import { quantityBytes } from '../../core/quantity';
import { enodeEndpoint } from '../../core/identity/nodeKey';
import { sha256Hex as sha256 } from '../../core/genesis';
import { checkResources, failingViolations, formatViolation, RULES, Violation } from '../../policy/rules';
import { backupJobManifest, listJobManifest, restoreJobManifest } from '../../core/kubernetes/backups';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import {
  TEST_BACKUP_IMAGE_DIGESTS,
  TEST_GENESIS,
  TEST_KEY_IMAGE_DIGESTS,
  validTestnetConfig,
  validWriterValues,
  COMPANIONS_OFF,
} from '../../testing/fixtures';
import { declareProgram, Declared } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { kubernetesStack } from '../../testing/values';
import { PROJECT_DIR } from '../../testing/run';
import { completedExample, writeProject } from '../../testing/examples';

const recorded = recordProgram();

const RULE_NAMES = [
  'pod-pinned-to-worker',
  'service-static-public-ip',
  'p2p-host-is-permissioned-ip',
  'rpc-safe-on-public-ports',
  'rpc-outside-opt-in',
  'rpc-auth-not-in-plain-text',
  'node-key-secret-kept',
  'key-secret-referenced',
  'validator-key-custody',
  'data-volume-kept',
  'mainnet-volume-size',
  'besu-version-supports-permissioning',
  'genesis-digest-pinned',
  'node-permissioning-enabled',
  'ssh-host-key-pinned',
  'ssh-host-key-opt-out',
  'node-key-images-pinned',
  'node-key-images-by-tag',
  'companion-executables-pinned',
];

/** The declared resources as the rules see them (as the offline plan writes them). */
function asPolicy(declared: Declared): PolicyResource[] {
  return policyResources(
    declared.resources.map((r) => ({ type: r.type, name: r.name, options: r.options, inputs: redact(r.inputs) })),
  );
}

/** The program's genesis in these tests is the project's test genesis: the context pins its digest. */
function testContext(declared: Declared): PolicyContext {
  const context = contextFromSettings(declared.loaded.settings);
  return { ...context, network: { ...context.network!, genesis: TEST_GENESIS } };
}

let testnet: PolicyResource[];
let testnetContext: PolicyContext;
let mainnet: PolicyResource[];
let mainnetContext: PolicyContext;

let mainnetWriter: PolicyResource;

/**
 * A stack's config and values files with the images that receive the node key, and those of the backups that touch
 * its data (unless `backups` is false), pinned by (test) digests.
 */
function pinKeyImages(config: Record<string, unknown>, files: Record<string, unknown>, backups = true) {
  const companions = (config['lacchain:companions'] ?? {}) as Record<string, Record<string, unknown>>;
  config['lacchain:companions'] = {
    ...companions,
    relaySigner: { ...companions.relaySigner, imageDigest: TEST_KEY_IMAGE_DIGESTS.relaySigner },
    rotationValidator: { ...companions.rotationValidator, imageDigest: TEST_KEY_IMAGE_DIGESTS.rotationValidator },
  };
  for (const values of Object.values(files)) {
    (values as any).deploy.imageDigest = TEST_KEY_IMAGE_DIGESTS.besu;
    if (backups) Object.assign((values as any).deploy, TEST_BACKUP_IMAGE_DIGESTS);
  }
  return { config, files };
}

beforeAll(async () => {
  const pinnedTestnet = pinKeyImages(validTestnetConfig(), { 'values/writer.yml': validWriterValues() });
  const t = await declareProgram(recorded, 'testnet', pinnedTestnet.config, pinnedTestnet.files);
  testnet = asPolicy(t);
  testnetContext = testContext(t);
  const stack = kubernetesStack('mainnet');
  const { config, files } = pinKeyImages(stack.config, stack.files);
  const m = await declareProgram(recorded, 'mainnet', config, files);
  mainnet = asPolicy(m).filter((r) => r.name.startsWith('validator') || r.name.startsWith('bootnode'));
  mainnetWriter = copy(asPolicy(m), T.statefulSet, 'writer-node');
  mainnetContext = testContext(m);
});

/** A deep copy of one declared resource, to alter. */
function copy(resources: PolicyResource[], type: string, name: string): PolicyResource {
  const found = resources.find((r) => r.type === type && r.name === name);
  if (!found) throw new Error(`no ${type} ${name}`);
  return structuredClone(found);
}

/** The type tokens, as the rules name them. */
const T = TYPES;

/** Runs every rule on one resource. */
const check = (resource: PolicyResource, context: PolicyContext = testnetContext): Violation[] =>
  checkResources([resource], context);
/** The messages of one policy. */
const of = (violations: Violation[], policy: string) =>
  violations.filter((v) => v.policy === policy).map((v) => v.message);

/** A copy of the testnet writer's ConfigMap, its config.toml rewritten. */
function editConfig(edit: (toml: string) => string): PolicyResource {
  const resource = copy(testnet, T.configMap, 'writer-config');
  const data = resource.inputs.data as Record<string, string>;
  data['config.toml'] = edit(data['config.toml']);
  return resource;
}

/** Rewrites one parameter of a remote step's standard input. */
function editStep(resource: PolicyResource, name: string, edit: (value: string) => string): PolicyResource {
  const stdin = resource.inputs.stdin as string;
  const parameters = stepParameters(stdin)!;
  // The header line, then `{`, the parameters and the script (core/remote/shell.ts).
  const header = stdin.slice(0, stdin.indexOf('\n') + 1) + '{\n';
  const script = stdin.slice(header.length + exportLines(parameters).length);
  resource.inputs.stdin = header + exportLines({ ...parameters, [name]: edit(parameters[name]) }) + script;
  return resource;
}

describe('the rule list', () => {
  it('holds every rule, each with a description and the types it checks', () => {
    expect(RULES.map((r) => r.name)).toEqual(RULE_NAMES);
    for (const rule of RULES) {
      expect(rule.description.length).toBeGreaterThan(20);
      expect(rule.types.length).toBeGreaterThan(0);
    }
  });

  it('passes what the program declares on both stacks, for both deployment paths', () => {
    expect(testnet.map((r) => r.type)).toEqual(expect.arrayContaining(Object.values(T)));
    expect(checkResources(testnet, testnetContext)).toEqual([]);
    expect(checkResources(mainnet, mainnetContext)).toEqual([]);
  });
});

describe('pod-pinned-to-worker', () => {
  it('refuses a pod that is not pinned, or pinned to another worker than deploy.workerName', () => {
    const unpinned = copy(testnet, T.statefulSet, 'writer-node');
    delete (unpinned.inputs as any).spec.template.spec.nodeName;
    expect(of(check(unpinned), 'pod-pinned-to-worker')).toEqual([
      'StatefulSet writer-node: the pod is not pinned to a worker (spec.template.spec.nodeName is not set)',
    ]);
    const moved = copy(testnet, T.statefulSet, 'writer-node');
    (moved.inputs as any).spec.template.spec.nodeName = 'worker-9';
    expect(of(check(moved), 'pod-pinned-to-worker')).toEqual([
      'StatefulSet writer-node: the pod is pinned to worker "worker-9", but deploy.workerName is "worker-1"',
    ]);
  });

  it('fails closed when the settings cannot be read', () => {
    const set = copy(testnet, T.statefulSet, 'writer-node');
    const violations = check(set, { settingsProblem: 'no such file Pulumi.testnet.yaml' });
    expect(of(violations, 'pod-pinned-to-worker')).toEqual([
      'StatefulSet writer-node: cannot be checked against the settings of node writer: no such file Pulumi.testnet.yaml',
    ]);
  });
});

describe('service-static-public-ip', () => {
  it('refuses another load-balancer IP, a stray annotation, no IP and another Service type', () => {
    const other = copy(testnet, T.service, 'writer-service');
    (other.inputs as any).spec.loadBalancerIP = '190.113.0.99';
    expect(of(check(other), 'service-static-public-ip')).toEqual([
      'Service writer-service: spec.loadBalancerIP is "190.113.0.99", but deploy.publicIP is "190.113.0.10"',
    ]);
    const annotated = copy(testnet, T.service, 'writer-service');
    (annotated.inputs as any).metadata.annotations['metallb.universe.tf/loadBalancerIPs'] = '190.113.0.99';
    delete (annotated.inputs as any).metadata.annotations['service.beta.kubernetes.io/azure-load-balancer-ipv4'];
    expect(of(check(annotated), 'service-static-public-ip')).toEqual([
      'Service writer-service: annotation metallb.universe.tf/loadBalancerIPs is "190.113.0.99", not the public IP "190.113.0.10"',
      'Service writer-service: annotation service.beta.kubernetes.io/azure-load-balancer-ipv4 is missing, not the public IP "190.113.0.10"',
    ]);
    const dynamic = copy(testnet, T.service, 'writer-service');
    delete (dynamic.inputs as any).spec.loadBalancerIP;
    (dynamic.inputs as any).spec.type = 'NodePort';
    expect(of(check(dynamic), 'service-static-public-ip')).toEqual([
      'Service writer-service: type is "NodePort", not LoadBalancer: the node has no static public IP',
      'Service writer-service: spec.loadBalancerIP is not set: the Service would get a changing IP',
    ]);
  });
});

describe('p2p-host-is-permissioned-ip', () => {
  it('refuses a config.toml advertising another address or port, or detecting it by NAT', () => {
    const other = editConfig((toml) =>
      toml
        .replace('p2p-host = "190.113.0.10"', 'p2p-host = "190.51.100.200"')
        .replace('nat-method = "NONE"', 'nat-method = "UPNP"'),
    );
    expect(of(check(other), 'p2p-host-is-permissioned-ip')).toEqual([
      'ConfigMap writer-config: config.toml p2p-host is "190.51.100.200", not the permissioned address "190.113.0.10"',
      'ConfigMap writer-config: config.toml nat-method is "UPNP": Besu would advertise a detected address, not p2p-host',
    ]);
  });

  it('refuses a Service annotated with an enode on another address; skips one known only after pulumi up', () => {
    const service = copy(testnet, T.service, 'writer-service');
    const annotations = (service.inputs as any).metadata.annotations;
    expect(enodeEndpoint(annotations['lacchain.net/enode'])).toEqual({ host: '190.113.0.10', port: 60606 });
    annotations['lacchain.net/enode'] = annotations['lacchain.net/enode'].replace('190.113.0.10', '190.51.100.1');
    expect(of(check(service), 'p2p-host-is-permissioned-ip')).toEqual([
      expect.stringMatching(
        /^Service writer-service: annotation lacchain.net\/enode enode:\/\/\w+@190.51.100.1:60606 does not end in @190.113.0.10:60606$/,
      ),
    ]);
    annotations['lacchain.net/enode'] = UNKNOWN_MARKER;
    expect(check(service)).toEqual([]);
  });

  it('refuses an SSH node whose config.toml or expected enode name another address', () => {
    const files = editStep(copy(testnet, T.command, 'validator-node-files'), 'CONFIG_TOML', (toml) =>
      toml.replace('p2p-host = "190.51.100.7"', 'p2p-host = "190.51.100.8"'),
    );
    expect(of(check(files), 'p2p-host-is-permissioned-ip')).toEqual([
      'remote step node-files of node validator (validator-node-files): config.toml p2p-host is "190.51.100.8", not the permissioned address "190.51.100.7"',
    ]);
    const start = editStep(copy(testnet, T.command, 'validator-start'), 'EXPECTED_ENODE', (enode) =>
      enode.replace('@190.51.100.7:', '@190.51.100.8:'),
    );
    expect(of(check(start), 'p2p-host-is-permissioned-ip')).toEqual([
      expect.stringMatching(
        /^remote step start of node validator \(validator-start\): EXPECTED_ENODE .* does not end in @190.51.100.7:60606$/,
      ),
    ]);
  });
});

describe('rpc-safe-on-public-ports', () => {
  it('refuses ADMIN, DEBUG or TXPOOL and "*" CORS on a public RPC port, in config.toml', () => {
    const unsafe = editConfig((toml) =>
      toml.replace(
        'rpc-http-api = [ "ETH",',
        'rpc-http-cors-origins = [ "*" ]\nrpc-http-api = [ "ADMIN", "debug", "ETH",',
      ),
    );
    expect(of(check(unsafe), 'rpc-safe-on-public-ports')).toEqual([
      'ConfigMap writer-config: RPC over HTTP (0.0.0.0:4545, publicly reachable) enables ADMIN (rpc-http-api): never ADMIN, DEBUG, TXPOOL, PERM on a public port',
      'ConfigMap writer-config: RPC over HTTP (0.0.0.0:4545, publicly reachable) enables DEBUG (rpc-http-api): never ADMIN, DEBUG, TXPOOL, PERM on a public port',
      'ConfigMap writer-config: RPC over HTTP (0.0.0.0:4545, publicly reachable) accepts CORS from any origin (rpc-http-cors-origins "*"): name the origins',
    ]);
  });

  it('allows them where the RPC is not reachable from outside (loopback without settings, or settings saying so)', () => {
    const local = editConfig((toml) =>
      toml.replace('rpc-http-host = "0.0.0.0"', 'rpc-http-host = "127.0.0.1"').replace('"ETH",', '"ADMIN", "ETH",'),
    );
    expect(
      of(check(local, { network: testnetContext.network, settingsProblem: 'unread' }), 'rpc-safe-on-public-ports'),
    ).toEqual([]);
    const internal: PolicyContext = structuredClone(testnetContext);
    internal.nodes!.writer.rpcPublic = false;
    const bound = editConfig((toml) => toml.replace('"ETH",', '"TXPOOL", "ETH",'));
    expect(of(check(bound, internal), 'rpc-safe-on-public-ports')).toEqual([]);
    expect(of(check(bound), 'rpc-safe-on-public-ports')).toHaveLength(1);
  });

  it('refuses unsafe APIs given to the Besu container as BESU_* variables or flags', () => {
    const set = copy(testnet, T.statefulSet, 'writer-node');
    const besu = (set.inputs as any).spec.template.spec.containers[0];
    besu.env.push({ name: 'BESU_RPC_HTTP_API', value: 'ETH,TXPOOL' });
    besu.args.push('--rpc-http-cors-origins=*');
    expect(of(check(set), 'rpc-safe-on-public-ports')).toEqual([
      'StatefulSet writer-node container writer-besu: RPC over HTTP (0.0.0.0:default port, publicly reachable) enables TXPOOL (rpc-http-api): never ADMIN, DEBUG, TXPOOL, PERM on a public port',
      'StatefulSet writer-node container writer-besu: RPC over HTTP (0.0.0.0:default port, publicly reachable) accepts CORS from any origin (rpc-http-cors-origins "*"): name the origins',
    ]);
  });

  it('refuses them in the config.toml an SSH node is given, bound to a public address whatever its settings say', () => {
    const files = editStep(copy(testnet, T.command, 'validator-node-files'), 'CONFIG_TOML', (toml) =>
      toml
        .replace('rpc-http-api = [ "ETH",', 'rpc-http-api = [ "DEBUG", "ETH",')
        .replace('rpc-http-host = "127.0.0.1"', 'rpc-http-host = "0.0.0.0"'),
    );
    const at =
      'remote step node-files of node validator (validator-node-files): RPC over HTTP (0.0.0.0:4545, publicly reachable)';
    expect(of(check(files), 'rpc-safe-on-public-ports')).toEqual([
      `${at} enables DEBUG (rpc-http-api): never ADMIN, DEBUG, TXPOOL, PERM on a public port`,
      `${at} enables IBFT (rpc-http-api): whoever reaches it can vote on validators (ibft_proposeValidatorVote, ibft_discardValidatorVote)`,
    ]);
  });

  it('reports a config.toml that cannot be read', () => {
    const broken = editConfig((toml) => `${toml}\n[[[`);
    expect(of(check(broken), 'rpc-safe-on-public-ports')).toEqual([
      expect.stringMatching(/^ConfigMap writer-config: config.toml is not valid TOML/),
    ]);
  });
});

describe('rpc-auth-not-in-plain-text', () => {
  const withAuth = (toml: string) =>
    toml.replace('rpc-http-api = [', 'rpc-http-authentication-enabled = true\nrpc-http-api = [');
  const FIX =
    'logins and tokens would cross the network in clear; use exposure tls-only on a machine, or internal behind your own TLS ingress on a cluster (lacchain:rpc.exposure)';

  it("refuses authentication on a node whose settings reach its RPC in plain HTTP (4545, a cluster writer's 80)", () => {
    const cluster = editConfig(withAuth);
    expect(of(check(cluster), 'rpc-auth-not-in-plain-text')).toEqual([
      `ConfigMap writer-config: RPC authentication is on while the RPC is reachable from outside in plain HTTP (4545, 80): ${FIX}`,
    ]);
    const machine = editStep(copy(testnet, T.command, 'validator-node-files'), 'CONFIG_TOML', (toml) =>
      withAuth(toml).replace('rpc-http-host = "127.0.0.1"', 'rpc-http-host = "0.0.0.0"'),
    );
    expect(of(check(machine), 'rpc-auth-not-in-plain-text')).toEqual([
      `remote step node-files of node validator (validator-node-files): RPC authentication is on while the RPC is reachable from outside in plain HTTP (4545): ${FIX}`,
    ]);
  });

  it('allows it where no plain-HTTP port is reachable: settings saying so, or a loopback binding without settings', () => {
    const inside: PolicyContext = structuredClone(testnetContext);
    inside.nodes!.writer.rpcPlainTextPorts = [];
    const cluster = editConfig(withAuth);
    expect(of(check(cluster, inside), 'rpc-auth-not-in-plain-text')).toEqual([]);
    const unread = { network: testnetContext.network, settingsProblem: 'unread' };
    const local = editConfig((toml) =>
      withAuth(toml).replace('rpc-http-host = "0.0.0.0"', 'rpc-http-host = "127.0.0.1"'),
    );
    expect(of(check(local, unread), 'rpc-auth-not-in-plain-text')).toEqual([]);
    expect(of(check(cluster, unread), 'rpc-auth-not-in-plain-text')).toEqual([
      `ConfigMap writer-config: RPC authentication is on while the RPC is reachable from outside in plain HTTP (4545): ${FIX}`,
    ]);
  });

  it('passes the nodes the program declares with authentication on an allowed exposure', async () => {
    const config = {
      ...validTestnetConfig(),
      'lacchain:rpc': { exposure: 'internal', authentication: { method: 'password', users: [{ name: 'alice' }] } },
      'lacchain:companions': structuredClone(COMPANIONS_OFF),
      'lacchain:rpcPasswords': { alice: 'correct horse battery' },
    };
    const declared = await declareProgram(recorded, 'testnet', config, { 'values/writer.yml': validWriterValues() });
    const violations = checkResources(asPolicy(declared), testContext(declared));
    expect(violations.filter((v) => v.policy === 'rpc-auth-not-in-plain-text')).toEqual([]);
  });
});

describe.each([
  ['node-key-secret-kept', T.secret, 'writer-key', 'the node key'],
  ['data-volume-kept', T.volume, 'writer-data', 'the chain data'],
])('%s', (policy, type, name, what) => {
  it('refuses an object that is protected (destroy would fail) or not kept on delete', () => {
    const guarded = copy(testnet, type, name);
    guarded.options.protect = true;
    expect(of(check(guarded), policy)).toEqual([
      expect.stringMatching(
        new RegExp(`^\\w+ ${name} \\(${what}\\) is protected: pulumi destroy would fail and delete nothing; `),
      ),
    ]);
    const dropped = copy(testnet, type, name);
    dropped.options.retainOnDelete = false;
    expect(of(check(dropped), policy)).toEqual([
      expect.stringMatching(new RegExp(`^\\w+ ${name} \\(${what}\\) is not kept on delete \\(retainOnDelete\\): `)),
    ]);
  });

  it('checks only protect where retainOnDelete is not visible (CrossGuard)', () => {
    const seen = copy(testnet, type, name);
    delete seen.options.retainOnDelete;
    expect(check(seen)).toEqual([]);
    seen.options.protect = true;
    expect(of(check(seen), policy)).toHaveLength(1);
  });
});

describe('mainnet-volume-size', () => {
  it('refuses a mainnet volume below the recommended size, or not a size', () => {
    const small = copy(mainnet, T.volume, 'validator-data');
    (small.inputs as any).spec.resources.requests.storage = '200Gi';
    expect(of(check(small, mainnetContext), 'mainnet-volume-size')).toEqual([
      'PersistentVolumeClaim validator-data: 200Gi is below the 375Gi recommended on mainnet-omega',
    ]);
    (small.inputs as any).spec.resources.requests.storage = 'plenty';
    expect(of(check(small, mainnetContext), 'mainnet-volume-size')).toEqual([
      'PersistentVolumeClaim validator-data: storage request "plenty" is not a storage size',
    ]);
    (small.inputs as any).spec.resources.requests.storage = '1Ti';
    expect(check(small, mainnetContext)).toEqual([]);
  });

  it('recognises a mainnet volume by its network label too, and leaves testnet volumes alone', () => {
    const labelled = copy(mainnet, T.volume, 'validator-data');
    (labelled.inputs as any).spec.resources.requests.storage = '100Gi';
    expect(of(check(labelled, { settingsProblem: 'unread' }), 'mainnet-volume-size')).toHaveLength(1);
    const testnetVolume = copy(testnet, T.volume, 'writer-data');
    (testnetVolume.inputs as any).spec.resources.requests.storage = '100Gi';
    expect(check(testnetVolume)).toEqual([]);
  });
});

describe('besu-version-supports-permissioning', () => {
  it.each([
    ['hyperledger/besu:25.6.0', 'image hyperledger/besu:25.6.0: Besu 25.6.0 has no on-chain permissioning'],
    ['hyperledger/besu:latest', 'tag "latest" is not a release version'],
    ['hyperledger/besu', 'has no release tag'],
    ['docker.io/hyperledger/besu@sha256:' + 'a'.repeat(64), 'is pinned by digest'],
  ])('refuses the image %s', (image, message) => {
    const set = copy(testnet, T.statefulSet, 'writer-node');
    (set.inputs as any).spec.template.spec.containers[0].image = image;
    expect(of(check(set), 'besu-version-supports-permissioning')).toEqual([expect.stringContaining(message)]);
  });

  it('accepts a release below 25.6.0 and leaves the proxy container alone', () => {
    const set = copy(testnet, T.statefulSet, 'writer-node');
    (set.inputs as any).spec.template.spec.containers[0].image =
      `hyperledger/besu:25.5.0@${TEST_KEY_IMAGE_DIGESTS.besu}`;
    expect(check(set)).toEqual([]);
  });

  it('reads the release of an image pinned by digest beside its tag (deploy.imageDigest)', () => {
    const set = copy(testnet, T.statefulSet, 'writer-node');
    const containers = (set.inputs as any).spec.template.spec.containers;
    containers[0].image = `hyperledger/besu:23.4.1@sha256:${'a'.repeat(64)}`;
    containers[1].image = `nginxinc/nginx-unprivileged:1.27-alpine@sha256:${'b'.repeat(64)}`;
    expect(check(set)).toEqual([]);
    containers[0].image = `docker.io/hyperledger/besu:25.6.0@sha256:${'a'.repeat(64)}`;
    expect(of(check(set), 'besu-version-supports-permissioning')).toEqual([
      expect.stringContaining('Besu 25.6.0 has no on-chain permissioning'),
    ]);
  });

  it('refuses an SSH node released or started on 25.6.0 or later', () => {
    for (const step of ['release', 'start']) {
      const command = editStep(copy(testnet, T.command, `validator-${step}`), 'BESU_VERSION', () => '26.1.0');
      expect(of(check(command), 'besu-version-supports-permissioning')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^remote step ${step} of node validator \\(validator-${step}\\): BESU_VERSION Besu 26.1.0 has no on-chain permissioning`,
          ),
        ),
      ]);
    }
  });
});

describe('genesis-digest-pinned', () => {
  it("refuses a ConfigMap genesis that is not the network's", () => {
    const altered = copy(testnet, T.configMap, 'writer-config');
    (altered.inputs as any).data['genesis.json'] = '{"config":{"chainId":1}}';
    expect(of(check(altered), 'genesis-digest-pinned')).toEqual([
      `ConfigMap writer-config: genesis.json: the genesis has sha256 ${sha256('{"config":{"chainId":1}}')}, not the digest pinned for open-protestnet (${TEST_GENESIS.sha256})`,
    ]);
  });

  it("accepts the offline plan's placeholder naming the pinned digest, and refuses one naming another", () => {
    const testnetNetwork = NETWORKS['open-protestnet'];
    const real = { ...testnetContext, network: testnetNetwork };
    const planned = copy(testnet, T.configMap, 'writer-config');
    (planned.inputs as any).data['genesis.json'] = planGenesisPlaceholder(testnetNetwork);
    expect(check(planned, real)).toEqual([]);
    (planned.inputs as any).data['genesis.json'] = planGenesisPlaceholder(NETWORKS['mainnet-omega']);
    expect(of(check(planned, real), 'genesis-digest-pinned')).toEqual([
      expect.stringContaining(
        `the genesis has sha256 ${NETWORKS['mainnet-omega'].genesis.sha256}, not the digest pinned for open-protestnet`,
      ),
    ]);
  });

  it('refuses an SSH node sent another genesis, or a digest that is not the one of the genesis sent', () => {
    const other = editStep(copy(testnet, T.command, 'validator-node-files'), 'GENESIS_JSON', () => '{}');
    expect(of(check(other), 'genesis-digest-pinned')).toEqual([
      expect.stringContaining('GENESIS_JSON: the genesis has sha256'),
    ]);
    const digest = editStep(copy(testnet, T.command, 'validator-node-files'), 'GENESIS_SHA256', () => 'f'.repeat(64));
    expect(of(check(digest), 'genesis-digest-pinned')).toEqual([
      expect.stringContaining(`GENESIS_SHA256 ${'f'.repeat(64)} is not the digest of the GENESIS_JSON sent`),
    ]);
  });
});

describe('companion-executables-pinned', () => {
  /** The testnet validator's companions step with its parameters changed (undefined removes one). */
  function companionsStep(changes: Record<string, string | undefined>): PolicyResource {
    const resource = copy(testnet, T.command, 'validator-companions');
    const stdin = resource.inputs.stdin as string;
    const parameters = stepParameters(stdin)!;
    const header = stdin.slice(0, stdin.indexOf('\n') + 1) + '{\n';
    const script = stdin.slice(header.length + exportLines(parameters).length);
    const changed: Record<string, string> = { ...parameters };
    for (const [name, value] of Object.entries(changes)) {
      if (value === undefined) delete changed[name];
      else changed[name] = value;
    }
    resource.inputs.stdin = header + exportLines(changed) + script;
    return resource;
  }
  const catalogUrl = companionReleaseUrl(RELAY_SIGNER, RELAY_SIGNER.defaultReleaseUrl, '1.0.1');
  /** The relay signer's catalog release, as the step is given it when the operator pins no digest. */
  const relaySigner = (changes: Record<string, string | undefined> = {}) =>
    companionsStep({
      COMPANIONS: 'relay-signer ethstats',
      RELAY_SIGNER_VERSION: '1.0.1',
      RELAY_SIGNER_URL: catalogUrl,
      RELAY_SIGNER_GIT_BLOB: RELAY_SIGNER.releaseBlobs['1.0.1'],
      ...changes,
    });

  it("passes the operator's SHA-256, and the catalog's git blob id for its release at its URL", () => {
    expect(of(check(companionsStep({})), 'companion-executables-pinned')).toEqual([]);
    expect(of(check(relaySigner()), 'companion-executables-pinned')).toEqual([]);
  });

  it('refuses a download with no pin, a git blob id the catalog does not pin, or the catalog id for another URL', () => {
    expect(
      of(
        check(companionsStep({ ROTATION_VALIDATOR_SHA256: undefined, ROTATION_VALIDATOR_GIT_BLOB: undefined })),
        'companion-executables-pinned',
      ),
    ).toEqual([
      expect.stringMatching(
        /rotation-validator: https:\/\/raw\.githubusercontent\.com\/.* would be installed unchecked/,
      ),
    ]);
    expect(of(check(relaySigner({ RELAY_SIGNER_GIT_BLOB: 'f'.repeat(40) })), 'companion-executables-pinned')).toEqual([
      expect.stringContaining(`RELAY_SIGNER_GIT_BLOB ${'f'.repeat(40)} is not the git blob id the catalog pins`),
    ]);
    const mirror = 'https://mirror.example.org/gas-relay-signer';
    expect(of(check(relaySigner({ RELAY_SIGNER_URL: mirror })), 'companion-executables-pinned')).toEqual([
      expect.stringContaining(`the step downloads ${mirror}`),
    ]);
    expect(of(check(relaySigner({ RELAY_SIGNER_VERSION: '1.0.2' })), 'companion-executables-pinned')).toEqual([
      expect.stringContaining('for release 1.0.2'),
    ]);
  });
});

describe("node-key-images-pinned and node-key-images-by-tag on a machine's companions step (#53)", () => {
  const byTag = () =>
    editStep(
      copy(testnet, T.command, 'validator-companions'),
      'ETHSTATS_IMAGE',
      () => 'docker.io/alethio/ethstats-cli:latest',
    );
  const FLAGGED = "container ethstats is pulled onto the node's machine";

  it('passes the monitoring client pulled by digest', () => {
    const step = copy(testnet, T.command, 'validator-companions');
    expect(stepParameters(step.inputs.stdin)!.ETHSTATS_IMAGE).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(check(step, mainnetContext).filter((v) => v.policy.startsWith('node-key-images'))).toEqual([]);
  });

  it('only flags its tag on a test network, as advisory', () => {
    const violations = check(byTag()).filter((v) => v.policy.startsWith('node-key-images'));
    expect(violations.map((v) => [v.policy, v.advisory])).toEqual([['node-key-images-by-tag', true]]);
    expect(violations[0].message).toContain(
      `${FLAGGED} from image docker.io/alethio/ethstats-cli:latest, a tag that can be moved: pin it by its registry digest (lacchain:companions.ethstats.imageDigest;`,
    );
  });

  it('refuses its tag on mainnet', () => {
    expect(of(check(byTag(), mainnetContext), 'node-key-images-pinned')).toEqual([
      expect.stringContaining(`${FLAGGED} but runs image docker.io/alethio/ethstats-cli:latest by tag`),
    ]);
  });
});

describe('node-permissioning-enabled', () => {
  it('refuses a config.toml without on-chain node permissioning, or with another contract', () => {
    const off = editConfig((toml) =>
      toml
        .replace('permissions-nodes-contract-enabled = true', 'permissions-nodes-contract-enabled = false')
        .replace('0x0000000000000000000000000000000000009999', '0x0000000000000000000000000000000000001234'),
    );
    expect(of(check(off), 'node-permissioning-enabled')).toEqual([
      'ConfigMap writer-config: config.toml does not set permissions-nodes-contract-enabled = true',
      `ConfigMap writer-config: permissions-nodes-contract-address is "0x0000000000000000000000000000000000001234", not open-protestnet's 0x0000000000000000000000000000000000009999`,
    ]);
  });
});

describe('reading the facts', () => {
  it('reads step parameters as the shell does, quotes included', () => {
    const text = `# header\n${exportLines({ A: "it's", B: 'two\nlines', C: '' })}#!/bin/bash\nexport D='script'\n`;
    expect(stepParameters(text)).toEqual({ A: "it's", B: 'two\nlines', C: '' });
    expect(stepParameters(UNKNOWN_MARKER)).toBeUndefined();
  });

  it('reads storage sizes and the placeholder digest', () => {
    expect(quantityBytes('375Gi')).toBe(375 * 2 ** 30);
    expect(quantityBytes('400G')).toBe(400e9);
    expect(quantityBytes('big')).toBeUndefined();
    const network = NETWORKS['mainnet-omega'];
    expect(placeholderDigest(planGenesisPlaceholder(network))).toBe(network.genesis.sha256);
    expect(placeholderDigest('{}')).toBeUndefined();
  });

  it("reads the expected values from a stack's settings files, and says why it cannot", () => {
    expect(stackOfUrn('urn:pulumi:testnet::lacchain-besu-node::kubernetes:core/v1:Service::writer-service')).toBe(
      'testnet',
    );
    const example = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-policy-context-'));
    writeProject('testnet', completedExample('testnet', { pin: false }), example);
    const context = loadPolicyContext(example, 'testnet');
    fs.rmSync(example, { recursive: true, force: true });
    expect(context.settingsProblem).toBeUndefined();
    expect(context.network?.name).toBe('open-protestnet');
    expect(context.nodes?.writer).toMatchObject({ target: 'kubernetes', workerName: 'worker-1', rpcPublic: true });
    const missing = loadPolicyContext('/nonexistent', 'mainnet');
    expect(missing.network?.name).toBe('mainnet-omega');
    expect(missing.settingsProblem).toMatch(/^the settings of stack mainnet cannot be read: .*Pulumi\.mainnet\.yaml/);
    expect(loadPolicyContext(PROJECT_DIR, 'dev').network).toBeUndefined();
  });
});

describe('ssh-host-key-pinned and ssh-host-key-opt-out', () => {
  const step = () => copy(testnet, T.command, 'validator-node-key');
  /** A step whose connection can be read (as CrossGuard reads it), without a host key. */
  const unpinned = () => ({
    ...step(),
    inputs: { ...step().inputs, connection: { host: '190.51.100.7', user: 'root' } },
  });
  const withNode = (node: Partial<ExpectedNode>, base: PolicyContext = testnetContext): PolicyContext => ({
    ...base,
    nodes: { ...testnetContext.nodes, validator: { ...testnetContext.nodes!.validator, ...node } },
  });
  const optedOut = () => withNode({ hostKeyPinned: false, acceptAnyHostKey: true });

  it('passes a step whose connection pins the host key, or whose settings pin it when the connection is secret', () => {
    const readable = {
      ...step(),
      inputs: { ...step().inputs, connection: { host: 'h', hostKey: 'ssh-ed25519 AAAA' } },
    };
    expect(of(check(readable), 'ssh-host-key-pinned')).toEqual([]);
    expect(step().inputs.connection).toBe('[secret]');
    expect(of(check(step()), 'ssh-host-key-pinned')).toEqual([]);
  });

  it('fails a step that would send the node key to whatever answers', () => {
    const message = /remote step node-key of node validator .* without a pinned SSH host key/;
    expect(of(check(unpinned()), 'ssh-host-key-pinned')).toEqual([expect.stringMatching(message)]);
    expect(of(check(step(), withNode({ hostKeyPinned: false })), 'ssh-host-key-pinned')).toEqual([
      expect.stringMatching(message),
    ]);
  });

  it("only flags the operator's opt-out on a test network, as advisory", () => {
    const violations = check(unpinned(), optedOut());
    expect(violations.map((v) => [v.policy, v.advisory])).toEqual([['ssh-host-key-opt-out', true]]);
    expect(formatViolation(violations[0])).toMatch(/^\[ssh-host-key-opt-out, advisory\] .*accept_any_host_key/);
    expect(failingViolations(violations)).toEqual([]);
  });

  it('does not accept the opt-out on mainnet', () => {
    const mainnetOptOut: PolicyContext = { ...optedOut(), network: mainnetContext.network };
    expect(of(check(unpinned(), mainnetOptOut), 'ssh-host-key-pinned')).toHaveLength(1);
  });
});

describe('node-key-images-pinned and node-key-images-by-tag', () => {
  /** The pod's containers of a StatefulSet. */
  const containers = (set: PolicyResource): any[] => (set.inputs as any).spec.template.spec.containers;
  /** A StatefulSet with one container's image replaced. */
  const withImage = (set: PolicyResource, container: string, image: string) => {
    const found = containers(set).find((c) => c.name === container);
    if (!found) throw new Error(`no container ${container}`);
    found.image = image;
    return set;
  };
  const TAGS: Record<string, string> = {
    besu: 'hyperledger/besu:23.4.1',
    'relay-signer': 'lacnetnetworks/relay-signer-lacchain:1.0.2',
    'rotation-validator': 'lacnetnetworks/rotation-lacchain:1.0.0',
  };
  const onMainnet = (node: string) =>
    node === 'writer' ? structuredClone(mainnetWriter) : copy(mainnet, T.statefulSet, `${node}-node`);

  it('passes the images pinned by digest on mainnet, the companions and Besu', () => {
    expect(containers(onMainnet('validator')).map((c) => c.image)).toEqual([
      `hyperledger/besu:23.4.1@${TEST_KEY_IMAGE_DIGESTS.besu}`,
      `hyperledger/besu:23.4.1@${TEST_KEY_IMAGE_DIGESTS.besu}`,
      `lacnetnetworks/rotation-lacchain@${TEST_KEY_IMAGE_DIGESTS.rotationValidator}`,
      'docker.io/alethio/ethstats-cli:latest',
    ]);
    for (const node of ['writer', 'validator', 'bootnode']) {
      expect(of(check(onMainnet(node), mainnetContext), 'node-key-images-pinned')).toEqual([]);
    }
  });

  it.each([
    ['validator', 'besu'],
    ['bootnode', 'besu'],
    ['writer', 'besu'],
    ['writer', 'relay-signer'],
    ['validator', 'rotation-validator'],
  ])('fails on mainnet the %s node whose %s container gets the key from an image tag', (node, container) => {
    const set = withImage(onMainnet(node), `${node}-${container}`, TAGS[container]);
    const violations = check(set, mainnetContext).filter((v) => v.policy.startsWith('node-key-images'));
    expect(violations.map((v) => [v.policy, v.advisory])).toEqual([['node-key-images-pinned', undefined]]);
    expect(violations[0].message).toBe(
      `StatefulSet ${node}-node: container ${node}-${container} receives the node key but runs image ${TAGS[container]} by tag: ` +
        'pin it by its registry digest (values file deploy.imageDigest for Besu, lacchain:companions.<companion>.imageDigest for a companion; docs/kubernetes.md, "Pinning images")',
    );
    expect(failingViolations(violations)).toHaveLength(1);
  });

  it('only flags them on a test network, as advisory', () => {
    const set = withImage(
      withImage(copy(testnet, T.statefulSet, 'writer-node'), 'writer-besu', TAGS.besu),
      'writer-relay-signer',
      TAGS['relay-signer'],
    );
    const violations = check(set);
    expect(violations.map((v) => [v.policy, v.advisory, v.message.split(':')[1]])).toEqual([
      ['node-key-images-by-tag', true, ' container writer-besu receives the node key from image hyperledger/besu'],
      [
        'node-key-images-by-tag',
        true,
        ' container writer-relay-signer receives the node key from image lacnetnetworks/relay-signer-lacchain',
      ],
    ]);
    expect(formatViolation(violations[0])).toMatch(/^\[node-key-images-by-tag, advisory\] .*a tag that can be moved/);
    expect(failingViolations(violations)).toEqual([]);
  });

  it('leaves alone the containers that neither get the key nor open the data volume: the monitoring client, the proxy', () => {
    const set = withImage(structuredClone(mainnetWriter), 'writer-ethstats', 'docker.io/alethio/ethstats-cli:latest');
    withImage(set, 'writer-nginx', 'openresty/openresty:1.27.1.2-alpine');
    expect(check(set, mainnetContext).filter((v) => v.policy.startsWith('node-key-images'))).toEqual([]);
    // An init container on the data volume is checked (the state folders' runs Besu's image, pinned as Besu).
    const init = (set.inputs as any).spec.template.spec.initContainers;
    expect(init.map((c: any) => c.name)).toEqual([
      'writer-config-check',
      'backup-before-release-change',
      'writer-companion-state',
    ]);
    init[2].image = TAGS.besu;
    expect(of(check(set, mainnetContext), 'node-key-images-pinned')).toEqual([
      `StatefulSet writer-node: container writer-companion-state touches the node's data (it mounts the data volume) but runs image ${TAGS.besu} by tag: pin it by its registry digest (values file deploy.imageDigest; docs/kubernetes.md, "Pinning images")`,
    ]);
  });

  it('finds the key however a container gets it: a variable from the Secret, envFrom, a projected volume', () => {
    const pod = (set: PolicyResource) => (set.inputs as any).spec.template.spec;
    const sidecar = (extra: Record<string, unknown>) => {
      const set = onMainnet('bootnode');
      containers(set).push({ name: 'bootnode-sidecar', image: 'example.org/sidecar:1', ...extra });
      return set;
    };
    const projected = sidecar({ volumeMounts: [{ name: 'key-copy', mountPath: '/k' }] });
    pod(projected).volumes.push({
      name: 'key-copy',
      projected: { sources: [{ secret: { name: 'besu-node-bootnode-key' } }] },
    });
    const sets = [
      sidecar({ envFrom: [{ secretRef: { name: 'besu-node-bootnode-key' } }] }),
      sidecar({ env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 'besu-node-bootnode-key', key: 'key' } } }] }),
      sidecar({ volumeMounts: [{ name: 'key', mountPath: '/k' }] }),
      projected,
    ];
    for (const set of sets) {
      expect(of(check(set, mainnetContext), 'node-key-images-pinned')).toEqual([
        expect.stringContaining('container bootnode-sidecar receives the node key'),
      ]);
    }
    // Another Secret is not the key.
    const other = sidecar({ envFrom: [{ secretRef: { name: 'besu-node-bootnode-rpc-auth' } }] });
    expect(of(check(other, mainnetContext), 'node-key-images-pinned')).toEqual([]);
  });

  it('requires the digest where the network cannot be told', () => {
    const set = withImage(onMainnet('bootnode'), 'bootnode-besu', TAGS.besu);
    delete (set.inputs as any).metadata.labels['lacchain.net/network'];
    expect(of(check(set, { ...mainnetContext, network: undefined }), 'node-key-images-pinned')).toHaveLength(1);
  });
});

describe("node-key-images-pinned on what touches the node's data: the backups' Jobs and CronJobs, the pod's init container", () => {
  const CRON_JOB = 'kubernetes:batch/v1:CronJob';
  const JOB = 'kubernetes:batch/v1:Job';
  const RESTIC = 'restic/restic:0.18.1';
  const KUBECTL = 'registry.k8s.io/kubectl:v1.36.3';
  const pin = (setting: string) =>
    `pin it by its registry digest (values file ${setting}; docs/kubernetes.md, "Pinning images")`;
  /** A mainnet or testnet stack of a validator and a bootnode, scheduled, Besu and the companions pinned. */
  async function scheduled(stack: 'mainnet' | 'testnet', backups: boolean, snapshotClass?: string) {
    const made = kubernetesStack(stack, {
      'lacchain:nodes': ['validator', 'bootnode'].map((t) => ({ name: t, typenode: t, target: 'kubernetes' })),
      'lacchain:backups': { schedule: 'daily' },
    });
    delete (made.files as any)['values/writer.yml'];
    if (snapshotClass) (made.files as any)['values/validator.yml'].deploy.volumeSnapshotClass = snapshotClass;
    const { config, files } = pinKeyImages(made.config, made.files, backups);
    const declared = await declareProgram(recorded, stack, config, files);
    const node = declared.loaded.settings.nodes[0] as KubernetesNodeSettings;
    /** The Jobs `npm run node -- backup | backups | restore` makes for the validator. */
    const jobs = [
      backupJobManifest(node, 'backup-1', { release: '23.4.1', reason: 'manual' }),
      listJobManifest(node, 'list-1'),
      restoreJobManifest(node, 'restore-1', '0123abcd', '23.4.1'),
    ].map((manifest) => ({
      type: JOB,
      name: manifest.metadata.name,
      inputs: manifest as unknown as Record<string, unknown>,
      options: { protect: false },
    }));
    return { resources: [...asPolicy(declared), ...jobs], context: testContext(declared) };
  }
  const pinning = (violations: Violation[]) =>
    violations.filter((v) => v.policy.startsWith('node-key-images')).map((v) => [v.policy, v.advisory, v.message]);

  it('passes them on mainnet pinned by deploy.backupImageDigest and deploy.kubectlImageDigest', async () => {
    for (const snapshotClass of [undefined, 'csi-snapshots']) {
      const { resources, context } = await scheduled('mainnet', true, snapshotClass);
      expect(resources.filter((r) => r.type === CRON_JOB)).toHaveLength(2);
      expect(pinning(checkResources(resources, context))).toEqual([]);
    }
  });

  it('fails on mainnet every container of a backup Job or CronJob, and the init container on the data, by tag', async () => {
    const { resources, context } = await scheduled('mainnet', false, 'csi-snapshots');
    const mandatory = (where: string, container: string, why: string, image: string, setting: string) => [
      'node-key-images-pinned',
      undefined,
      `${where}: container ${container} touches the node's data (${why}) but runs image ${image} by tag: ${pin(setting)}`,
    ];
    const data = 'it mounts the data volume';
    const step = "a step of the node's backups";
    const restic = 'deploy.backupImageDigest';
    const kubectl = 'deploy.kubectlImageDigest';
    const found = pinning(checkResources(resources, context));
    expect(found).toEqual(
      expect.arrayContaining([
        mandatory('StatefulSet validator-node', 'backup-before-release-change', data, RESTIC, restic),
        mandatory('StatefulSet bootnode-node', 'backup-before-release-change', data, RESTIC, restic),
        // The validator's schedule makes a VolumeSnapshot of its data; the bootnode's copies it with restic.
        mandatory('CronJob validator-backup-schedule', 'snapshot', step, KUBECTL, kubectl),
        mandatory('CronJob bootnode-backup-schedule', 'stop-node', step, KUBECTL, kubectl),
        mandatory('CronJob bootnode-backup-schedule', 'node-stopped', step, KUBECTL, kubectl),
        mandatory('CronJob bootnode-backup-schedule', 'backup', data, RESTIC, restic),
        mandatory('CronJob bootnode-backup-schedule', 'start-node', step, KUBECTL, kubectl),
        mandatory('CronJob bootnode-backup-schedule', 'report', step, RESTIC, restic),
        mandatory('Job backup-1', 'backup', data, RESTIC, restic),
        mandatory('Job list-1', 'list', data, RESTIC, restic),
        mandatory('Job restore-1', 'restore', data, RESTIC, restic),
      ]),
    );
    expect(found).toHaveLength(11);
    expect(failingViolations(checkResources(resources, context)).map((v) => v.policy)).toContain(
      'node-key-images-pinned',
    );
  });

  it('only flags them on a test network, as advisory', async () => {
    const { resources, context } = await scheduled('testnet', false);
    const found = checkResources(resources, context).filter((v) => v.policy.startsWith('node-key-images'));
    expect(found.length).toBe(2 + 2 * 5 + 3);
    for (const violation of found) {
      expect([violation.policy, violation.advisory]).toEqual(['node-key-images-by-tag', true]);
      expect(violation.message).toMatch(
        /touches the node's data \(.*\) from image .*, a tag that can be moved: pin it/,
      );
    }
    expect(failingViolations(found)).toEqual([]);
  });

  it("leaves alone a Job that neither mounts a node's data volume nor is one of its backups", () => {
    const job = {
      type: JOB,
      name: 'unrelated',
      inputs: {
        metadata: { name: 'unrelated', namespace: 'lacchain' },
        spec: {
          template: {
            spec: {
              containers: [{ name: 'x', image: 'example.org/x:1', volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }] }],
              volumes: [{ name: 'tmp', emptyDir: {} }],
            },
          },
        },
      },
      options: { protect: false },
    };
    expect(pinning(check(job, mainnetContext))).toEqual([]);
    // The same Job on a node's data volume is checked.
    (job.inputs.spec.template.spec.volumes as any[]).push({
      name: 'data',
      persistentVolumeClaim: { claimName: 'besu-node-validator-data' },
    });
    job.inputs.spec.template.spec.containers[0].volumeMounts.push({ name: 'data', mountPath: '/data' });
    expect(pinning(check(job, mainnetContext))).toEqual([
      [
        'node-key-images-pinned',
        undefined,
        `Job unrelated: container x touches the node's data (it mounts the data volume) but runs image example.org/x:1 by tag: ${pin('deploy.backupImageDigest for restic, deploy.kubectlImageDigest for kubectl')}`,
      ],
    ]);
  });
});

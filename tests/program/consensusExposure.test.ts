/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Consensus-safe by default: no node lets the outside vote. Nothing that changes consensus (the IBFT, QBFT and CLIQUE
 * vote methods) nor any ADMIN, DEBUG, TXPOOL or PERM method is reachable from outside the machine or the pod, on any
 * node type, path or exposure, unless the operator opts that node in; validators and bootnodes keep their RPC inside
 * by default; `rpc` may be set per node; the plan's outputs say per node what the outside reaches.
 */
import * as yaml from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { NODE_TYPES, UNSAFE_RPC_APIS } from '../../core/catalog/nodeTypes';
import { CONSENSUS_RPC_APIS, RPC_EXPOSURES } from '../../core/catalog/rpc';
import { describeNode } from '../../core/node/description';
import { loadStack } from '../../core/settings/load';
import { SettingsError } from '../../core/settings/problems';
import { contextFromSettings } from '../../policy/expectations';
import { policyResources } from '../../policy/offline';
import { checkResources } from '../../policy/rules';
import {
  companionsForRpc,
  FAKE_SSH_KEY,
  memoryFiles,
  rawConfig,
  sshValidatorEntry,
  sshValidatorStack,
  TEST_COMPANIONS,
} from '../../testing/fixtures';
import { completedExample } from '../../testing/examples';
import { declareProgram, Declared, inputsOf } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { kubernetesStack, valuesFor } from '../../testing/values';
import { redact, unwrapSecrets } from '../../tools/recording/engine';

const recorded = recordProgram();
const OUTSIDE_ONLY: readonly string[] = [...UNSAFE_RPC_APIS, ...CONSENSUS_RPC_APIS];

const T = {
  configMap: 'kubernetes:core/v1:ConfigMap',
  service: 'kubernetes:core/v1:Service',
  networkPolicy: 'kubernetes:networking.k8s.io/v1:NetworkPolicy',
};

/**
 * The stock example stack as an operator completes it (testing/examples.ts: on mainnet, the nodes' public addresses
 * in place of the documentation ones): Pulumi.<stack>.yaml and the values files it names.
 */
async function declareExample(stack: 'mainnet' | 'testnet'): Promise<Declared> {
  const files = completedExample(stack);
  const config = (yaml.load(files[`Pulumi.${stack}.yaml`]) as any).config;
  return declareProgram(recorded, stack, config, files);
}

const servicePorts = (declared: Declared, node: string) =>
  inputsOf(declared, T.service, `${node}-service`).spec.ports.map((p: any) => `${p.protocol}/${p.port}`);

/** The ports a NetworkPolicy admits from anywhere (rules without `from`). */
const openToAll = (declared: Declared, node: string) =>
  inputsOf(declared, T.networkPolicy, `${node}-network-policy`)
    .spec.ingress.filter((rule: any) => rule.from === undefined)
    .flatMap((rule: any) => rule.ports.map((p: any) => `${p.protocol}/${p.port}`));

/** An SSH stack of one validator (and optionally a writer), with the node's own settings over the fixture's. */
const sshStack = (validator: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  sshValidatorStack({ ...sshValidatorEntry({ user: 'ubuntu' }), ...validator }, extra);

/** A parameter of a remote step, as exported on its standard input. */
function parameter(declared: Declared, step: string, name: string): string {
  const stdin = (unwrapSecrets(declared.resources.find((r) => r.name === `validator-${step}`)!.inputs) as any).stdin;
  const match = new RegExp(`^export ${name}='((?:[^']|'\\\\'')*)'$`, 'm').exec(stdin);
  if (!match) throw new Error(`no ${name} in step ${step}`);
  return match[1].replace(/'\\''/g, "'");
}

function refusal(config: Record<string, unknown>, files: Record<string, string> = {}): string[] {
  try {
    loadStack('testnet', rawConfig(config, 'Pulumi.testnet.yaml'), memoryFiles(files));
  } catch (error) {
    if (error instanceof SettingsError) return error.message.split('\n');
    throw error;
  }
  throw new Error('expected the settings to be refused');
}

describe('the stock Pulumi.mainnet.yaml, completed (a validator and a bootnode on a cluster)', () => {
  let declared: Declared;
  beforeAll(async () => {
    declared = await declareExample('mainnet');
  });

  it.each(['validator', 'bootnode'])('%s: no RPC port on its Service or open to all in its NetworkPolicy', (node) => {
    expect(servicePorts(declared, node)).toEqual(['TCP/60606', 'UDP/60606']);
    expect(openToAll(declared, node)).toEqual(['TCP/60606', 'UDP/60606']);
    // Its namespace's pods (the node's in-cluster clients) may still reach 4545.
    const rules = inputsOf(declared, T.networkPolicy, `${node}-network-policy`).spec.ingress;
    expect(rules).toContainEqual({ from: [{ podSelector: {} }], ports: [{ port: 4545, protocol: 'TCP' }] });
  });

  it.each(['validator', 'bootnode'])('%s: its outputs say the outside reaches p2p only', (node) => {
    expect(declared.outputs.nodes[node].reachableFromOutside).toEqual({
      '60606/tcp+udp': 'p2p: peers and discovery (connections permissioned by the network)',
    });
  });

  it('passes the policy pack', () => {
    const resources = policyResources(
      declared.resources.map((r) => ({ type: r.type, name: r.name, options: r.options, inputs: redact(r.inputs) })),
    );
    const violations = checkResources(resources, contextFromSettings(declared.loaded.settings));
    expect(violations.filter((v) => v.policy.startsWith('rpc-'))).toEqual([]);
  });
});

describe('an SSH validator with the default settings', () => {
  let declared: Declared;
  beforeAll(async () => {
    declared = await declareProgram(recorded, 'testnet', sshStack({}), {});
  });

  it('Besu and the proxy listen on the loopback only, and the firewall opens p2p only', () => {
    const toml = parseToml(parameter(declared, 'node-files', 'CONFIG_TOML')) as any;
    expect(toml['rpc-http-host']).toBe('127.0.0.1');
    expect(toml['rpc-http-api']).toContain('IBFT'); // its rotation client votes over it, on the loopback
    expect(parameter(declared, 'firewall', 'TCP_PORTS')).toBe('60606');
    const site = parameter(declared, 'proxy', 'PROXY_SITE');
    expect(site.match(/^\s*listen .*$/gm)?.every((line) => /listen 127\.0\.0\.1:/.test(line))).toBe(true);
    expect(declared.outputs.nodes.validator.reachableFromOutside).toEqual({
      '60606/tcp+udp': 'p2p: peers and discovery (connections permissioned by the network)',
    });
  });
});

describe('writers stay public, without the consensus methods', () => {
  it('the example writer: 4545 and 80 from outside, no IBFT among the API groups Besu serves', async () => {
    const declared = await declareExample('testnet');
    const toml = parseToml(inputsOf(declared, T.configMap, 'writer-config').data['config.toml']) as any;
    expect(toml['rpc-http-api']).toEqual(['ETH', 'NET', 'WEB3', 'EEA', 'PRIV']);
    expect(servicePorts(declared, 'writer')).toEqual(['TCP/60606', 'UDP/60606', 'TCP/4545', 'TCP/80']);
    const outside = declared.outputs.nodes.writer.reachableFromOutside;
    expect(Object.keys(outside)).toEqual(['60606/tcp+udp', '4545/tcp', '80/tcp']);
    expect(outside['4545/tcp']).toBe(
      'Besu JSON-RPC over plain HTTP (API groups ETH, NET, WEB3, EEA, PRIV; no authentication)',
    );
    expect(outside['80/tcp']).toMatch(/^plain HTTP: JSON-RPC through the reverse proxy to Besu \(API groups ETH, NET/);
    expect(outside['80/tcp']).toMatch(/eth_sendRawTransaction.* to the relay signer \(gas model\)$/);
  });

  it('an internal writer keeps IBFT (nothing from outside reaches it)', () => {
    const settings = loadStack(
      'testnet',
      rawConfig(kubernetesStack('testnet', { 'lacchain:rpc': { exposure: 'internal' } }).config, 'Pulumi.testnet.yaml'),
      memoryFiles(Object.fromEntries(NODE_TYPES.map((t) => [`values/${t}.yml`, yaml.dump(valuesFor('testnet', t))]))),
    ).settings;
    const writer = settings.nodes.find((n) => n.typenode === 'writer')!;
    expect(describeNode(writer).rpc.apis).toContain('IBFT');
  });
});

describe('no consensus or unsafe method reachable from outside without an opt-in, on any type, path or exposure', () => {
  const cases = NODE_TYPES.flatMap((typenode) =>
    (['kubernetes', 'ssh'] as const).flatMap((target) =>
      [undefined, ...RPC_EXPOSURES].map((exposure) => [typenode, target, exposure ?? 'default'] as const),
    ),
  );
  it.each(cases)('%s on %s, exposure %s', (typenode, target, exposure) => {
    const rpc = exposure === 'default' ? {} : { exposure };
    const entry =
      target === 'ssh'
        ? { ...sshValidatorEntry({ user: 'ubuntu' }), name: typenode, typenode, rpc }
        : { name: typenode, typenode, target, rpc };
    const config = {
      'lacchain:network': 'open-protestnet',
      'lacchain:nodes': [entry],
      'lacchain:sshPrivateKey': FAKE_SSH_KEY,
      // The rotation client needs IBFT: off where the validator's RPC is reachable (the settings say so otherwise).
      'lacchain:companions': companionsForRpc(rpc),
    };
    const files = { [`values/${typenode}.yml`]: yaml.dump(valuesFor('testnet', typenode)) };
    const [node] = loadStack('testnet', rawConfig(config, 'Pulumi.testnet.yaml'), memoryFiles(files)).settings.nodes;
    const description = describeNode(node);
    if (description.rpc.publiclyReachable) {
      expect(description.rpc.apis.filter((api) => OUTSIDE_ONLY.includes(api))).toEqual([]);
    }
    if (exposure === 'default') expect(description.rpc.publiclyReachable).toBe(typenode === 'writer');
  });
});

describe('per-node rpc and the consensus opt-in', () => {
  it('a node-level rpc replaces the stack fields it gives, for that node only', () => {
    const config = sshStack(
      { rpc: { exposure: 'internal' } },
      { 'lacchain:rpc': { exposure: 'tls-only', maxActiveConnections: 50 } },
    );
    const [validator] = loadStack('testnet', rawConfig(config, 'Pulumi.testnet.yaml'), memoryFiles({})).settings.nodes;
    expect(validator.rpc).toMatchObject({
      key: 'lacchain:nodes[0].rpc',
      exposure: 'internal',
      maxActiveConnections: 50,
    });
  });

  it('explicit IBFT on a public writer is refused, naming the opt-in of that node', () => {
    const config = {
      'lacchain:network': 'open-protestnet',
      'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes', rpc: { apis: ['ETH', 'IBFT'] } }],
      'lacchain:companions': TEST_COMPANIONS,
    };
    expect(refusal(config, { 'values/writer.yml': yaml.dump(valuesFor('testnet', 'writer')) })).toEqual([
      'Pulumi.testnet.yaml: lacchain:nodes[0].rpc.apis: given ["ETH","IBFT"]; allowed: API groups without CLIQUE, IBFT, QBFT (node writer: RPC reachable from outside with exposure public, and ibft_proposeValidatorVote, ibft_discardValidatorVote sent to a majority of validators add or remove validators); use exposure internal for the node, or opt that node in with lacchain:nodes[0].rpc.allowConsensusVotesFromOutside: true (the plan and the policy flag it)',
    ]);
  });

  it('the opt-in is refused for the whole stack', () => {
    const config = sshStack({}, { 'lacchain:rpc': { allowConsensusVotesFromOutside: true } });
    expect(refusal(config)).toEqual([
      'Pulumi.testnet.yaml: lacchain:rpc.allowConsensusVotesFromOutside: given true; allowed: no such field for the whole stack: set it on the one node it concerns, as lacchain:nodes[i].rpc.allowConsensusVotesFromOutside',
    ]);
  });

  it('a public validator without its opt-in: refused while its rotation client needs IBFT', () => {
    expect(refusal(sshStack({ rpc: { exposure: 'public' } }))).toEqual([
      expect.stringMatching(
        /^Pulumi\.testnet\.yaml: lacchain:companions\.rotationValidator\.enabled: on for node validator, whose RPC lacks IBFT;/,
      ),
    ]);
  });

  describe.each([
    ['testnet', 'open-protestnet', true],
    ['mainnet', 'mainnet-omega', false],
  ] as const)('a validator opted in on %s', (stack, network, advisory) => {
    let declared: Declared;
    beforeAll(async () => {
      const config = {
        'lacchain:network': network,
        'lacchain:nodes': [
          {
            name: 'validator',
            typenode: 'validator',
            target: 'kubernetes',
            rpc: { exposure: 'public', allowConsensusVotesFromOutside: true },
          },
        ],
      };
      declared = await declareProgram(recorded, stack, config, {
        'values/validator.yml': valuesFor(stack, 'validator'),
      });
    });

    it('serves IBFT on its public 4545, says so in its outputs and records the opt-in', () => {
      const toml = parseToml(inputsOf(declared, T.configMap, 'validator-config').data['config.toml']) as any;
      expect(toml['rpc-http-api']).toContain('IBFT');
      expect(declared.outputs.nodes.validator.reachableFromOutside['4545/tcp']).toContain(
        'consensus votes allowed by allowConsensusVotesFromOutside (IBFT)',
      );
      expect(inputsOf(declared, T.service, 'validator-service').metadata.annotations['lacchain.net/unsafe-rpc']).toBe(
        'IBFT',
      );
    });

    it(`is flagged by the policy: ${advisory ? 'advisory' : 'mandatory'}`, () => {
      const resources = policyResources(
        declared.resources.map((r) => ({ type: r.type, name: r.name, options: r.options, inputs: redact(r.inputs) })),
      );
      const violations = checkResources(resources, contextFromSettings(declared.loaded.settings)).filter((v) =>
        v.policy.startsWith('rpc-'),
      );
      expect(violations.map((v) => [v.policy, Boolean(v.advisory)])).toEqual([
        [advisory ? 'rpc-outside-opt-in' : 'rpc-safe-on-public-ports', advisory],
      ]);
      expect(violations[0].message).toContain('enables IBFT (rpc-http-api): whoever reaches it can vote on validators');
    });
  });
});

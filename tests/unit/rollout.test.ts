/**
 * The rollout's order and words (core/node/rollout.ts), and the settings that bear on it: the gate's time-out
 * (`lacchain:rollout.gateTimeoutSeconds`) and the rule that no two validators of a stack share a machine or a worker.
 */
import { describeRollout, rolloutOrder, signerMetricsMethod } from '../../core/node/rollout';
import type { SshNodeSettings } from '../../core/settings/model';
import { SettingsError } from '../../core/settings/problems';
import { FAKE_SSH_KEY, KEY_ONE, loadTestnet, sshValidatorEntry, TEST_COMPANIONS } from '../../testing/fixtures';

/** An SSH node entry of `typenode` named `name` on machine 190.51.100.`last`. */
const entry = (name: string, typenode: string, last: number, extra: Record<string, unknown> = {}) => ({
  ...sshValidatorEntry({ host: `190.51.100.${last}`, node_ip: `190.51.100.${last}`, ...extra }),
  name,
  typenode,
});
const stack = (nodes: unknown[], extra: Record<string, unknown> = {}) => ({
  'lacchain:network': 'open-protestnet',
  'lacchain:nodes': nodes,
  'lacchain:sshPrivateKey': FAKE_SSH_KEY,
  'lacchain:companions': structuredClone(TEST_COMPANIONS),
  ...extra,
});
const problemsOf = (config: Record<string, unknown>) => {
  try {
    loadTestnet(config);
    return [];
  } catch (error) {
    return (error as SettingsError).problems.map((p) => `${p.key}: ${p.allowed}`);
  }
};

describe('the rollout order', () => {
  it('changes writers first, then bootnodes, then validators, each type in the order of the stack', () => {
    const nodes = [
      { name: 'v1', typenode: 'validator' },
      { name: 'w1', typenode: 'writer' },
      { name: 'v2', typenode: 'validator' },
      { name: 'b1', typenode: 'bootnode' },
      { name: 'w2', typenode: 'writer' },
    ] as const;
    expect(rolloutOrder(nodes).map((n) => n.name)).toEqual(['w1', 'w2', 'b1', 'v1', 'v2']);
  });

  it('is told node by node with what each waits for, and not at all for a stack of one node', () => {
    const settings = loadTestnet(
      stack([entry('validator', 'validator', 9), entry('writer', 'writer', 7)], { 'lacchain:nodeKeys': {} }),
    );
    expect(describeRollout(settings.nodes, settings.rollout)).toEqual([
      '1. writer (writer, ssh), then its gate: its enode, a peer, at most 2 blocks behind, its head advancing; up to 600 s',
      '2. validator (validator, ssh), last: nothing waits for it',
    ]);
    expect(describeRollout(settings.nodes.slice(0, 1), settings.rollout)).toEqual([]);
  });

  it("asks a validator's gate for its signer metrics, unless its RPC lacks the consensus group", () => {
    const validator = loadTestnet(stack([entry('validator', 'validator', 9)])).nodes[0] as SshNodeSettings;
    expect(signerMetricsMethod(validator)).toBe('ibft_getSignerMetrics');
    const withoutIbft = loadTestnet(
      stack([entry('validator', 'validator', 9)], {
        'lacchain:rpc': { apis: ['ETH', 'NET'] },
        'lacchain:companions': { ...structuredClone(TEST_COMPANIONS), rotationValidator: { enabled: false } },
      }),
    ).nodes[0];
    expect(signerMetricsMethod(withoutIbft)).toBeUndefined();
    const writer = loadTestnet(stack([entry('writer', 'writer', 7)])).nodes[0];
    expect(signerMetricsMethod(writer)).toBeUndefined();
  });
});

describe('the settings of the rollout', () => {
  it('takes a gate time-out from 60 to 3600 seconds, 600 by default', () => {
    const nodes = [entry('validator', 'validator', 9)];
    expect(loadTestnet(stack(nodes, { 'lacchain:nodeKeys': { validator: KEY_ONE } })).rollout).toEqual({
      gateTimeoutSeconds: 600,
    });
    expect(problemsOf(stack(nodes, { 'lacchain:rollout': { gateTimeoutSeconds: 5 } }))).toEqual([
      'lacchain:rollout.gateTimeoutSeconds: a whole number from 60 to 3600',
    ]);
  });

  it('refuses two validators of the stack on one machine: one reboot would take both down', () => {
    const problems = problemsOf(
      stack([
        entry('validator-1', 'validator', 9),
        entry('validator-2', 'validator', 9, {
          node_home: '/opt/lacchain-2',
          node_service: 'besu-2',
          node_ip: '190.51.100.10',
        }),
      ]),
    );
    expect(problems).toEqual([
      'node validator-2 inventory.host: a machine (a worker) no other validator of the stack runs on: two validators down at once bring the network closer to the third whose loss stops its blocks (node validator-1 uses it)',
    ]);
    // A writer beside a validator on one machine is not refused.
    expect(
      problemsOf(
        stack([
          entry('validator', 'validator', 9),
          entry('writer', 'writer', 9, {
            node_home: '/opt/lacchain-2',
            node_service: 'besu-2',
            node_ip: '190.51.100.10',
          }),
        ]),
      ),
    ).toEqual([]);
  });
});

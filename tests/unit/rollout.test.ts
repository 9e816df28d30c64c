/**
 * The rollout's order and words (core/node/rollout.ts), and the settings that bear on it: the gate's time-out
 * (`lacchain:rollout.gateTimeoutSeconds`), the rule that no two validators of a stack share a machine or a worker, and
 * a rollout as `npm run node -- status --all` reads it (core/operations/rolloutState.ts).
 */
import { describeRollout, rolloutOrder, signerMetricsMethod } from '../../core/node/rollout';
import {
  gateRecordState,
  NodeRolloutState,
  rolloutLines,
  rolloutWords,
  statefulSetRolloutState,
} from '../../core/operations/rolloutState';
import type { SshNodeSettings } from '../../core/settings/model';
import { SettingsError } from '../../core/settings/problems';
import { FAKE_SSH_KEY, KEY_ONE, loadTestnet, sshValidatorEntry, TEST_COMPANIONS } from '../../testing/fixtures';

/** An SSH node entry of `typenode` named `name` on machine 190.51.100.`last`. */
const entry = (name: string, typenode: string, last: number, extra: Record<string, unknown> = {}) => ({
  ...sshValidatorEntry({ host: `190.51.100.${last}`, node_ip: `190.51.100.${last}`, ...extra }),
  name,
  typenode,
});
/** A second node on machine 9: its own home, service and advertised address. */
const secondOnMachine9 = (name: string, typenode: string) =>
  entry(name, typenode, 9, { node_home: '/opt/lacchain-2', node_service: 'besu-2', node_ip: '190.51.100.10' });
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
      stack([entry('validator-1', 'validator', 9), secondOnMachine9('validator-2', 'validator')]),
    );
    expect(problems).toEqual([
      'node validator-2 inventory.host: a machine (a worker) no other validator of the stack runs on: two validators down at once bring the network closer to the third whose loss stops its blocks (node validator-1 uses it)',
    ]);
    // A writer beside a validator on one machine is not refused.
    expect(problemsOf(stack([entry('validator', 'validator', 9), secondOnMachine9('writer', 'writer')]))).toEqual([]);
  });
});

describe('a rollout as npm run node -- status --all shows it', () => {
  const record = (state: string, seen = 'it has no peer') =>
    `state=${state}\nsince=1000\nuntil=1600\nchange=${'a'.repeat(64)}\nseen=${seen}\n`;

  it("reads a gate's record: waiting is changing until its time is up, then stopped (its pulumi up was cut)", () => {
    expect(gateRecordState(record('waiting'), 1200)).toEqual({
      state: 'changing',
      since: 1000,
      seen: 'it has no peer',
    });
    expect(gateRecordState(record('waiting'), 1601)).toEqual({ state: 'stopped', since: 1000, seen: 'it has no peer' });
    expect(gateRecordState(record('failed'), 1200)?.state).toBe('stopped');
    expect(gateRecordState(record('passed', 'its enode, 3 peers'), 1200)).toEqual({
      state: 'done',
      since: 1000,
      seen: 'its enode, 3 peers',
    });
    expect(gateRecordState('', 1200)).toBeUndefined();
    expect(gateRecordState('state=running\nsince=1000\n', 1200)).toBeUndefined();
  });

  it('reads no record whose lines were forged (a field twice, an unknown one, a control character)', () => {
    expect(gateRecordState(record('waiting', 'x\nstate=passed'), 1200)).toBeUndefined();
    expect(gateRecordState(record('waiting', 'x\nsince=1190'), 1200)).toBeUndefined();
    expect(gateRecordState(record('waiting', 'x\nowner=me'), 1200)).toBeUndefined();
    expect(gateRecordState(record('waiting', 'x \u001b]0;owned\u0007'), 1200)).toBeUndefined();
    // A record without the digest gates once wrote is read the same.
    expect(gateRecordState('state=passed\nsince=1000\nuntil=1600\nseen=ok', 1200)).toEqual({
      state: 'done',
      since: 1000,
      seen: 'ok',
    });
  });

  const rows = (states: Record<string, NodeRolloutState['state'] | undefined>) =>
    Object.entries(states).map(([node, state]) => ({
      node,
      ...(state ? { rollout: { state, since: 3600 * 5 + 61, seen: 'its head has not advanced from block 7' } } : {}),
    }));

  it('names the node the rollout is at and the nodes after it, which wait for it', () => {
    const ordered = rows({ writer: 'done', bootnode: 'changing', validator: undefined, 'validator-2': undefined });
    expect(rolloutLines(ordered, 'testnet')).toEqual([
      'rollout in progress: node bootnode is changing since 05:01:01 UTC, not healthy yet: its head has not advanced from block 7',
      'waiting for bootnode: validator, validator-2 (not changed yet)',
    ]);
    expect(Object.fromEntries(rolloutWords(ordered))).toEqual({
      bootnode: 'changing',
      validator: 'waits for bootnode',
      'validator-2': 'waits for bootnode',
    });
  });

  it('says where a stopped rollout stopped and how to continue', () => {
    const [line, waiting] = rolloutLines(rows({ writer: 'stopped', validator: undefined }), 'testnet');
    expect(line).toBe(
      'rollout stopped at node writer (its health gate gave up, or its pulumi up was cut since 05:01:01 UTC): its head has not advanced from block 7. Fix it (npm run node -- check --stack testnet --node writer), then run pulumi up again to continue',
    );
    expect(waiting).toBe('waiting for writer: validator (not changed yet)');
  });

  it('says nothing when every node is done or was never gated', () => {
    expect(rolloutLines(rows({ writer: 'done', validator: undefined }), 'testnet')).toEqual([]);
    expect(rolloutWords(rows({ writer: undefined })).size).toBe(0);
  });
});

describe("a cluster node's part of a rollout, from its StatefulSet", () => {
  const set = (status: Record<string, unknown>, generation = 3, replicas = 1) =>
    JSON.stringify({ metadata: { generation }, spec: { replicas }, status: { observedGeneration: 3, ...status } });
  const settled = { currentRevision: 'besu-a', updateRevision: 'besu-a', readyReplicas: 1, updatedReplicas: 1 };

  it('is changing while its pod is of the old revision, not Ready, or its change not yet taken', () => {
    expect(statefulSetRolloutState(set({ ...settled, updateRevision: 'besu-b', updatedReplicas: 0 }))).toEqual({
      state: 'changing',
      seen: '0 of 1 pod(s) of revision besu-b, 1 Ready',
    });
    expect(statefulSetRolloutState(set({ ...settled, readyReplicas: 0 }))).toEqual({
      state: 'changing',
      seen: 'its pod is not Ready (0 of 1)',
    });
    expect(statefulSetRolloutState(set(settled, 4))?.state).toBe('changing');
  });

  it('is done once its one pod of the new revision is Ready; a node scaled to none is in no rollout', () => {
    expect(statefulSetRolloutState(set(settled))).toEqual({ state: 'done' });
    expect(statefulSetRolloutState(set({ ...settled, readyReplicas: 0 }, 3, 0))).toBeUndefined();
    expect(statefulSetRolloutState('not json')).toBeUndefined();
  });
});

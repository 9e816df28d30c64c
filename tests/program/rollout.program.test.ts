/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The rollout as the program declares it (docs/upgrades.md, "Rolling out a change"): a stack's nodes change one at a
 * time, writers first, then bootnodes, then validators, each healthy again before the next. What is shown here is the
 * graph the engine is given (which resource waits for which, and the gate's inputs); that the engine keeps it is
 * Pulumi's documented behaviour, shown under the real engine by the engine and end-to-end tiers.
 */
import { firstInstallCommand } from '../../core/remote/gate';
import { stepCommand } from '../../core/remote/shell';
import { REMOTE_STEP_NAMES } from '../../core/remote/steps';
import { isWrappedSecret, unwrapSecrets } from '../../tools/recording/engine';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram, Declared } from '../../testing/program';
import { kubernetesStack } from '../../testing/values';
import { FAKE_SSH_KEY, KEY_ONE, sshValidatorEntry, TEST_COMPANIONS } from '../../testing/fixtures';

const recorded = recordProgram();

/** Three SSH nodes on three machines, listed validator first: the rollout's order is not the stack's. */
function threeMachines(release?: Record<string, string>) {
  const entry = (name: string, typenode: string, last: number) => ({
    ...sshValidatorEntry({
      host: `190.51.100.${last}`,
      node_ip: `190.51.100.${last}`,
      node_name: `org-${name}`,
      ...(release?.[name] ? { node_release_version: release[name] } : {}),
    }),
    name,
    typenode,
  });
  return {
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [
      entry('validator', 'validator', 9),
      entry('writer', 'writer', 7),
      entry('bootnode', 'bootnode', 8),
    ],
    'lacchain:sshPrivateKey': FAKE_SSH_KEY,
    'lacchain:companions': structuredClone(TEST_COMPANIONS),
    'lacchain:nodeKeys': { validator: KEY_ONE, writer: `0x${'0'.repeat(63)}2`, bootnode: `0x${'0'.repeat(63)}3` },
  };
}

const commands = (declared: Declared) => declared.resources.filter((r) => r.type === 'command:remote:Command');
const command = (declared: Declared, name: string) => commands(declared).find((c) => c.name === name);
const stdinOf = (declared: Declared, name: string) => (unwrapSecrets(command(declared, name)!.inputs) as any).stdin;

describe('a stack of three SSH nodes: one at a time, writer, bootnode, validator', () => {
  let declared: Declared;
  beforeAll(async () => {
    declared = await declareProgram(recorded, 'testnet', threeMachines(), {});
  });

  it("starts changing each node's files only after the node before it passed its gate", () => {
    expect(command(declared, 'writer-node-files')!.options.dependsOn).toEqual(['writer-release']);
    expect(command(declared, 'bootnode-node-files')!.options.dependsOn).toEqual(['bootnode-release', 'writer-gate']);
    expect(command(declared, 'validator-node-files')!.options.dependsOn).toEqual([
      'validator-release',
      'bootnode-gate',
    ]);
  });

  it('lets every node do the steps that change nothing it reads side by side (preflight, packages, release)', () => {
    for (const node of ['writer', 'bootnode', 'validator']) {
      for (const step of ['packages', 'release']) {
        const before = REMOTE_STEP_NAMES[REMOTE_STEP_NAMES.indexOf(step as never) - 1];
        expect(command(declared, `${node}-${step}`)!.options.dependsOn).toEqual([`${node}-${before}`]);
      }
    }
  });

  it("gives each node but the last a gate after its last step: made, it only says so; updated, it waits for the node's health", () => {
    expect(
      commands(declared)
        .filter((c) => c.name.endsWith('-gate'))
        .map((c) => c.name),
    ).toEqual(['writer-gate', 'bootnode-gate']);
    const gate = command(declared, 'writer-gate')!;
    expect(gate.options.dependsOn).toEqual(['writer-companions']);
    const inputs = unwrapSecrets(gate.inputs) as any;
    expect(inputs.create).toBe(firstInstallCommand('writer'));
    expect(inputs.update).toBe(stepCommand('root'));
    expect(inputs.logging).toBe('stdoutAndStderr');
    expect(inputs.stdin).toContain("export NEXT_NODES='bootnode, validator'");
    expect(inputs.stdin).toContain("export EXPECTED_ENODE='enode://");
    expect(inputs.stdin).toContain("export GATE_TIMEOUT='600'");
    expect(inputs.stdin).toMatch(/export CHANGE='[0-9a-f]{64}'/);
    // The change digest is a function of the node-key step's secrets: the gate's input is secret in the state.
    expect(isWrappedSecret(gate.inputs.stdin)).toBe(true);
    // A writer proposes no blocks: its gate asks for none.
    expect(inputs.stdin).toContain("export SIGNER_METRICS=''");
  });

  it("runs a node's gate again exactly when a step that restarts it changes (a release bump), and never otherwise", async () => {
    const again = await declareProgram(recorded, 'testnet', threeMachines(), {});
    expect(stdinOf(again, 'writer-gate')).toBe(stdinOf(declared, 'writer-gate'));
    expect(stdinOf(again, 'bootnode-gate')).toBe(stdinOf(declared, 'bootnode-gate'));
    const bumped = await declareProgram(recorded, 'testnet', threeMachines({ bootnode: '24.7.1' }), {});
    expect(stdinOf(bumped, 'bootnode-gate')).not.toBe(stdinOf(declared, 'bootnode-gate'));
    expect(stdinOf(bumped, 'writer-gate')).toBe(stdinOf(declared, 'writer-gate'));
  });

  it('takes the gate time-out from lacchain:rollout', async () => {
    const slow = await declareProgram(
      recorded,
      'testnet',
      { ...threeMachines(), 'lacchain:rollout': { gateTimeoutSeconds: 1200 } },
      {},
    );
    expect(stdinOf(slow, 'writer-gate')).toContain("export GATE_TIMEOUT='1200'");
  });

  it('keeps the outputs in the order of the stack', () => {
    expect(Object.keys(declared.outputs.nodes)).toEqual(['validator', 'writer', 'bootnode']);
  });
});

describe('a stack of Kubernetes nodes: each StatefulSet waits for the one before to be Ready', () => {
  it('rolls the writer, then the bootnode, then the validator', async () => {
    const { config, files } = kubernetesStack('testnet');
    const declared = await declareProgram(recorded, 'testnet', config, files);
    const statefulSet = (node: string) =>
      declared.resources.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet' && r.name === `${node}-node`)!;
    expect(statefulSet('writer').options.dependsOn).not.toContainEqual(expect.stringMatching(/-node$/));
    expect(statefulSet('bootnode').options.dependsOn).toContain('writer-node');
    expect(statefulSet('validator').options.dependsOn).toContain('bootnode-node');
  });
});

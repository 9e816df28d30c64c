/**
 * The health gate of an SSH node in a rollout (scripts/remote/gate.sh; docs/upgrades.md, "Rolling out a change"):
 * which steps of a node restart Besu, where the rollout's wait comes in, and the gate's parameters. Pure.
 */
import { MAX_BLOCKS_BEHIND } from '../catalog/health';
import { PORTS } from '../catalog/ports';
import { signerMetricsMethod } from '../node/rollout';
import type { SshNodeSettings } from '../settings/model';
import { nodePaths } from './paths';
import type { RemoteStepName } from './steps';

/** The gate's script, under scripts/. */
export const GATE_SCRIPT = 'remote/gate.sh';

/** The steps that may restart Besu: the node-key step (new RPC credentials) and the start step. */
export const RESTARTING_STEPS: readonly RemoteStepName[] = ['node-key', 'start'];

/**
 * The first of a node's steps that waits for the node before it in the rollout: from it on, the steps write what the
 * node reads when it starts (its config, genesis, key) and restart it or its companions, so a node the rollout has
 * not reached keeps exactly what it runs, on disk too. The ones before it (the preflight's checks, the system's
 * packages, the release unpacked beside the one in use) change nothing a node reads, so every node does them side by
 * side.
 */
export const ROLLOUT_FIRST_STEP: RemoteStepName = 'node-files';

/**
 * What the gate runs when it is first made (a node's first install, or a node new to the rollout): nothing but a line.
 * A node just installed may have no peer until the network permissions it: it is not waited for.
 */
export function firstInstallCommand(nodeName: string): string {
  return `cat >/dev/null; echo "gate: node ${nodeName} is new to the rollout: no health gate until a change restarts it"`;
}

/** The gate's parameters (the enode, address and change digest are the program's, known at `pulumi up`). */
export function gateParameters<V>(
  node: SshNodeSettings,
  values: { stack: string; nextNodes: readonly string[]; timeoutSeconds: number; enode: V; address: V; change: V },
): Record<string, string | V> {
  return {
    STEP_NAME: 'gate',
    NODE_NAME: node.name,
    STACK: values.stack,
    NEXT_NODES: values.nextNodes.join(', '),
    EXPECTED_ENODE: values.enode,
    NODE_ADDRESS: values.address,
    RPC_PORT: String(PORTS.rpcHttp),
    GATE_TIMEOUT: String(values.timeoutSeconds),
    MAX_BLOCKS_BEHIND: String(MAX_BLOCKS_BEHIND),
    SIGNER_METRICS: signerMetricsMethod(node) ?? '',
    CHANGE: values.change,
    ROLLOUT_RECORD: nodePaths(node).rolloutRecord,
  };
}

/**
 * A machine's node in the stack's rollout, as its component (RemoteNode) and its health gate (healthGate.ts) take it.
 */
import type * as pulumi from '@pulumi/pulumi';

/** A node's place in the stack's rollout (core/node/rollout.ts). */
export interface NodeRollout {
  /** The node before it in the rollout, passed its gate: from the node-key step on, this node's steps wait for it. */
  after?: pulumi.Resource;
  /** The nodes after it (names), when there are: the node then has a gate, which they wait for. */
  nextNodes: string[];
  /** The stack, for the gate's message (the commands to continue or go back). */
  stack: string;
  /** How long the gate waits, in seconds. */
  gateTimeoutSeconds: number;
}

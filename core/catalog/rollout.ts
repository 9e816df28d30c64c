/**
 * How a stack's nodes change when a `pulumi up` restarts more than one (docs/upgrades.md, "Rolling out a change"):
 * one at a time, in this order, each healthy again before the next. The least critical first: a writer's restart
 * costs the network nothing but its own transactions, a bootnode's only new peers' discovery, while every validator
 * down brings the network closer to the third whose loss stops block production (IBFT 2.0). A release that does not
 * come back shows on a writer first, and the validators, last, change one by one.
 */
import type { NodeType } from './nodeTypes';

/** The node types in the order their nodes change; nodes of one type in the stack's order. */
export const ROLLOUT_ORDER: readonly NodeType[] = ['writer', 'bootnode', 'validator'];

/**
 * How long a node's health gate waits for it by default. Measured with the Besu stand-in (not Besu), a restarted node
 * passes the gate in a few seconds (docs/operations.md); Besu's JVM takes longer to start, then finds its peers again
 * and catches up the blocks it missed, one every 2 s: ten minutes leaves that room many times over, and a node not
 * healthy by then is not coming back by itself.
 */
export const DEFAULT_GATE_TIMEOUT_SECONDS = 600;
/** The shortest and longest wait a stack may set (`lacchain:rollout.gateTimeoutSeconds`). */
export const MIN_GATE_TIMEOUT_SECONDS = 60;
export const MAX_GATE_TIMEOUT_SECONDS = 3600;

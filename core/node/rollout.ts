/**
 * The rollout of a change across a stack's nodes (docs/upgrades.md, "Rolling out a change"): the order the nodes
 * change in (core/catalog/rollout.ts), and what each waits for before the next one changes. The components wire it:
 * each node's restarting steps run after the node before it passed its gate. Pure: settings in, order and text out.
 */
import { MAX_BLOCKS_BEHIND } from '../catalog/health';
import { ROLLOUT_ORDER } from '../catalog/rollout';
import type { NodeSettings, RolloutSettings } from '../settings/model';
import { describeNode } from './description';

/** The nodes in the order a rollout changes them: by type (ROLLOUT_ORDER), then as the stack lists them. */
export function rolloutOrder<N extends Pick<NodeSettings, 'typenode'>>(nodes: readonly N[]): N[] {
  return nodes
    .map((node, index) => ({ node, index }))
    .sort(
      (a, b) => ROLLOUT_ORDER.indexOf(a.node.typenode) - ROLLOUT_ORDER.indexOf(b.node.typenode) || a.index - b.index,
    )
    .map(({ node }) => node);
}

/**
 * The method a node's gate asks whether it proposes blocks again, or undefined: only a validator proposes, and only
 * one whose RPC serves the consensus group's method without authentication (its gate says what it could not check).
 */
export function signerMetricsMethod(node: NodeSettings): string | undefined {
  if (node.typenode !== 'validator') return undefined;
  const rpc = describeNode(node).rpc;
  if (rpc.authentication !== undefined) return undefined;
  if (rpc.apis.includes('QBFT')) return 'qbft_getSignerMetrics';
  if (rpc.apis.includes('IBFT')) return 'ibft_getSignerMetrics';
  return undefined;
}

/** What a node waits for before the next node changes: one line. */
export function gateDescription(node: NodeSettings, rollout: RolloutSettings): string {
  if (node.target === 'kubernetes') {
    return `its pod Ready (readiness: a peer, at most ${MAX_BLOCKS_BEHIND} blocks behind), up to the provider's wait`;
  }
  const proposes = signerMetricsMethod(node) ? ', a block proposed' : '';
  return `its enode, a peer, at most ${MAX_BLOCKS_BEHIND} blocks behind, its head advancing${proposes}; up to ${rollout.gateTimeoutSeconds} s`;
}

/** The first line of the rollout's description, in the plan and the preview. */
export const ROLLOUT_HEADING =
  'rollout: a change that restarts nodes changes them one at a time, in this order, each healthy again before the next:';

/**
 * The rollout as the plan and the preview tell it: each node in order, and what it waits for before the next. Nothing
 * for a stack of one node, where no node waits for another.
 */
export function describeRollout(nodes: readonly NodeSettings[], rollout: RolloutSettings): string[] {
  const order = rolloutOrder(nodes);
  if (order.length < 2) return [];
  return order.map((node, index) =>
    index < order.length - 1
      ? `${index + 1}. ${node.name} (${node.typenode}, ${node.target}), then its gate: ${gateDescription(node, rollout)}`
      : `${index + 1}. ${node.name} (${node.typenode}, ${node.target}), last: nothing waits for it`,
  );
}

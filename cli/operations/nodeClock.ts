/** A node's clock against the operator's machine's, as both node clients read it. */

/** A node's clock against the operator's. */
export interface ClockState {
  /** The node's clock minus this machine's, in seconds. */
  offsetSeconds: number;
  /** Whether the node says its clock is synchronised; absent when it cannot say. */
  synchronised?: boolean;
}

/** The node's clock minus this machine's, from a reading taken between `before` and `after` (epoch milliseconds). */
export function clockOffset(nodeSeconds: number, before: number, after: number): number {
  return nodeSeconds - (before + after) / 2000;
}

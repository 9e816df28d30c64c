/**
 * A node that cannot be acted on, whatever its target: the refusal `npm run node` ends with, and how long the look at
 * a node may take before it says so.
 */
import { REACH_TIMEOUT_SECONDS } from '../../core/operations/clients';
import { clientMissing, ReachProblem, ReachState } from '../../core/operations/reach';
import { ToolFailure } from '../cli';

/**
 * A node that cannot be acted on (its client missing, its kube context not there, its cluster or machine not
 * answering, or not deployed): one line saying which and what to do; exit 1. `state` is the short word `status --all`
 * shows in the node's row.
 */
export class NodeUnreachable extends ToolFailure {
  readonly state: ReachState;
  constructor(problem: ReachProblem) {
    super(problem.message);
    this.state = problem.state;
  }
}

/** How long the look at a node may take in all, kubectl's own time-out included. */
export const REACH_TIMEOUT_MS = 2 * REACH_TIMEOUT_SECONDS * 1000;

/** Turns runClient's refusal to start a client that is not there into the node's one line. */
export function whenClientMissing(node: string, client: string) {
  return (error: unknown): never => {
    if (error instanceof ToolFailure && !(error instanceof NodeUnreachable)) {
      throw new NodeUnreachable(clientMissing(node, client));
    }
    throw error;
  };
}

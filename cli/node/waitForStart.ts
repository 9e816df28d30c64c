/**
 * `check --fix`'s wait between the restart and the second check: the node answers and its companions are settled, for
 * long enough that a companion that starts, fails and is started again is not judged half-way.
 */
import type { NodeClient } from '../operations/nodeClientTypes';

/** How long the wait lasts, how often it asks, and how long the node must stay settled. */
export interface StartWait {
  /** How long `--fix` waits for a restarted node to settle before checking again anyway. */
  waitMs: number;
  /** How often it asks (a question is one SSH session, or one kubectl call). */
  pollMs: number;
  /**
   * How long the restarted node must stay settled (answering, no companion on its way up or down): a companion that
   * started before Besu answered exits at once and is started again (a pod's container, a service's Restart=), so
   * one settled moment is not enough.
   */
  settledMs: number;
}

/** The wait `check --fix` uses. */
const FIX_START_WAIT: StartWait = { waitMs: 120_000, pollMs: 250, settledMs: 5_000 };

/**
 * The states a companion passes through while it starts or stops: a machine's service (systemctl is-active), and a
 * pod's container not yet ready, or the pod not yet there (clusterNodeClient.ts): a restarted pod's companions come up
 * some seconds after Besu answers. One that never settles is judged when the wait is over.
 */
const TRANSITIONAL_STATES = ['activating', 'deactivating', 'reloading', 'not ready', 'no pod'];

/**
 * Waits, up to `wait.waitMs`, for a restarted node to be started: its RPC answers, and none of its companion services
 * is still on its way up or down, for `wait.settledMs` in a row, so the check after a restart judges the node as it
 * settled, not half-way. Resolves true when it settled, false when the wait ran out.
 */
export async function waitForStart(
  client: Pick<NodeClient, 'rpc' | 'companionStates'>,
  wait: StartWait = FIX_START_WAIT,
): Promise<boolean> {
  const deadline = Date.now() + wait.waitMs;
  const answers = () =>
    client.rpc('net_enode').then(
      () => true,
      () => false,
    );
  const settled = async () =>
    (await client.companionStates()).every((companion) => !TRANSITIONAL_STATES.includes(companion.detail));
  let settledSince: number | undefined;
  while (Date.now() < deadline) {
    if ((await answers()) && (await settled())) {
      settledSince ??= Date.now();
      if (Date.now() - settledSince >= wait.settledMs) return true;
    } else {
      settledSince = undefined;
    }
    await new Promise((resolve) => setTimeout(resolve, wait.pollMs));
  }
  return false;
}

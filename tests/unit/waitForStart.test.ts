/**
 * `check --fix`'s wait after the restart (cli/node/waitForStart.ts): a companion that is ready for a moment and then
 * started again (the rotation client's container exits when Besu did not answer yet) must not end the wait; the second
 * check judges the node once it stayed settled.
 */
import { waitForStart } from '../../cli/node/waitForStart';
import type { CompanionState } from '../../core/operations/health';

const WAIT = { waitMs: 2_000, pollMs: 10, settledMs: 200 };

/** A client whose RPC answers from the start and whose one companion goes through `states`, one per question. */
function client(states: string[]) {
  let asked = 0;
  return {
    asked: () => asked,
    rpc: async () => 'enode://',
    companionStates: async (): Promise<CompanionState[]> => {
      if (states.length === 0) return [];
      const detail = states[Math.min(asked++, states.length - 1)];
      return [{ name: 'rotation-validator', running: detail === 'ready', detail }];
    },
  };
}

describe('the wait of check --fix after a restart', () => {
  it('does not end on a ready moment of a companion that is started again at once', async () => {
    const flapping = client(['not ready', 'ready', 'not ready', 'not ready', 'ready']);
    const started = Date.now();
    await expect(waitForStart(flapping, WAIT)).resolves.toBe(true);
    // It asked past the flap, and then for the settled time in a row.
    expect(flapping.asked()).toBeGreaterThan(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT.settledMs);
  });

  it('waits while the node does not answer, and says when the wait ran out', async () => {
    const silent = { rpc: async () => Promise.reject(new Error('refused')), companionStates: async () => [] };
    await expect(waitForStart(silent, { ...WAIT, waitMs: 100 })).resolves.toBe(false);
  });

  it('ends once a node without companions answers for the settled time', async () => {
    const started = Date.now();
    await expect(waitForStart(client([]), WAIT)).resolves.toBe(true);
    expect(Date.now() - started).toBeLessThan(WAIT.waitMs);
  });
});

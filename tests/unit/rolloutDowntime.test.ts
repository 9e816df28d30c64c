/**
 * How the rollout suite reads a node's stopped intervals from its unit's journal (testing/rolloutLab.ts,
 * stoppedIntervalsOf): a stop asked for, a crash systemd restarts, a kill, and a start systemd said nothing about
 * stopping for, each on journal lines as systemd writes them.
 */
import { stoppedIntervalsOf } from '../../testing/rolloutLab';

const entry = (at: number, message: string, invocation = 'a') => ({ at, message, invocation });

describe("a node's stopped intervals, from its unit's journal", () => {
  it('a stop asked for: from Stopping to the next Started', () => {
    expect(
      stoppedIntervalsOf([
        entry(1000, 'Stopping besu.service - LACChain Besu node...'),
        entry(1500, 'besu.service: Deactivated successfully.'),
        entry(1600, 'Stopped besu.service - LACChain Besu node.'),
        entry(2000, 'Started besu.service - LACChain Besu node.', 'b'),
      ]),
    ).toEqual([[1000, 2000]]);
  });

  it('a crash or a kill restarted by systemd: from the main process gone to the restart', () => {
    expect(
      stoppedIntervalsOf([
        entry(500, 'Started besu.service - LACChain Besu node.'),
        entry(3000, 'besu.service: Main process exited, code=killed, status=9/KILL'),
        entry(3001, "besu.service: Failed with result 'signal'."),
        entry(8000, 'besu.service: Scheduled restart job, restart counter is at 1.'),
        entry(8001, 'Stopped besu.service - LACChain Besu node.'),
        entry(8002, 'Started besu.service - LACChain Besu node.', 'b'),
      ]),
    ).toEqual([[3000, 8002]]);
  });

  it('a new start systemd logged nothing going for: from the entry before it', () => {
    expect(stoppedIntervalsOf([entry(100, 'besu: imported block 5'), entry(900, 'besu: starting', 'b')])).toEqual([
      [100, 900],
    ]);
  });

  it('one that never started again lasts to the end', () => {
    expect(stoppedIntervalsOf([entry(100, 'Stopping besu.service...')])).toEqual([[100, Infinity]]);
  });
});

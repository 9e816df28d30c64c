/**
 * `npm run bench -- --only rollout`: what the rollout (docs/upgrades.md, "Rolling out a change") costs and saves on
 * the SSH path. Three nodes (a writer, a bootnode, a validator), each on a real Debian 12 test host (systemd, sshd; the
 * Besu stand-in, not Besu: its restart takes seconds where Besu's JVM takes longer), a change that restarts all three
 * replayed as the engine runs it (testing/engineReplay.ts): once through the program as it is (one node at a time,
 * each after its health gate), once as before the rollout (the same commands, no node waiting for another, no gate).
 * Measured per run: the `pulumi up`'s wall time, the longest time a node was down and the most nodes down at once,
 * from the services' journals.
 */
import { downTimes, ROLLOUT_NODES, RolloutLab } from '../testing/rolloutLab';
import { fixed, machine, now, PartResult, progress, table, withoutTestHosts } from './common';

const RELEASE = '24.1.0';
/** Every node on the one release: the changes below restart them all (their config). */
const VERSIONS = Object.fromEntries(ROLLOUT_NODES.map((node) => [node.name, RELEASE]));

/** One change's figures. */
interface ChangeRun {
  how: string;
  seconds: number;
  longestSeconds: number;
  mostAtOnce: number;
}

/** Runs the part: `runs` pairs of the change, one at a time then all at once, on one lab of three hosts. */
export async function benchRollout(runs = 2): Promise<PartResult> {
  const heading = '## A change of three SSH nodes: rollout against all at once';
  const skipped = await withoutTestHosts('rollout', heading);
  if (skipped) return skipped;
  const lab = await RolloutLab.open([RELEASE]);
  try {
    const first = await lab.up(VERSIONS);
    if (first.replay.failed.length > 0) throw new Error(`first install: ${first.replay.failed[0].stderr}`);
    await lab.permissionEveryNode();
    let change = 0;
    /** A config change that restarts every node (the RPC answers one more host name each time). */
    const measure = async (how: string, withoutRollout: boolean): Promise<ChangeRun> => {
      change += 1;
      const extra = { 'lacchain:rpc': { hostAllowlist: [`change-${change}.example.org`] } };
      const since = Date.now();
      const { replay } = await lab.up(VERSIONS, extra, {
        ...(withoutRollout ? { withoutRollout: ROLLOUT_NODES.map((node) => node.name) } : {}),
      });
      const seconds = (Date.now() - since) / 1000;
      if (replay.failed.length > 0) throw new Error(`${how}: ${replay.failed[0].name}: ${replay.failed[0].stderr}`);
      const { longestSeconds, mostAtOnce } = downTimes(await lab.everyStop(since));
      progress(
        `rollout: ${how}: ${fixed(seconds, 1)} s, longest down ${fixed(longestSeconds, 1)} s, ${mostAtOnce} at once`,
      );
      return { how, seconds, longestSeconds, mostAtOnce };
    };
    const measured: ChangeRun[] = [];
    for (let run = 0; run < runs; run++) {
      measured.push(await measure('one node at a time (the rollout)', false));
      measured.push(await measure('all at once (before the rollout)', true));
    }
    const rows = measured.map((m) => [m.how, fixed(m.seconds, 1), fixed(m.longestSeconds, 1), m.mostAtOnce]);
    return {
      name: 'rollout',
      markdown: [
        heading,
        '',
        `Measured ${now()} on ${await machine()}. Three nodes (writer, bootnode, validator of open-protestnet), each on`,
        'a Debian 12 test host of its own (systemd-nspawn, real systemd and sshd), running the **Besu stand-in, not Besu**:',
        "a stand-in restarts in seconds, Besu's JVM in tens of seconds, which the rollout adds once per node and the",
        'change all at once only once. A config change that restarts all three, replayed as the engine runs it',
        '(`testing/engineReplay.ts`): through the program (each node after the health gate of the one before) and as',
        'before the rollout (the same commands, no node waiting for another, no gate). Down: from systemd\'s "Stopping"',
        'to the next "Started" in each service\'s journal. The cluster path is not measured here: its nodes are',
        'StatefulSets, each waited for Ready by the Kubernetes provider before the next changes.',
        '',
        table(['change', 'wall time (s)', 'longest down (s)', 'nodes down at once (most)'], rows),
        '',
      ].join('\n'),
    };
  } finally {
    await lab.close();
  }
}

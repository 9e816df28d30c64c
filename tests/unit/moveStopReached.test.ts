/**
 * The line a move ends with when it is cut, or fails, in the old place's stop (docs/moving.md, "A move cut part-way"):
 * what the look at the old place saw the stop reach (still running, stopped and kept from starting, stopped but not
 * kept, or no answer), and how to go on, for each of the three moves; and how that look's answers are read.
 */
import { MOVED_TO_ANNOTATION } from '../../core/catalog/move';
import { moveCutLine } from '../../cli/operations/move';
import { machineMoveCutLine } from '../../cli/operations/moveFromCluster';
import { clusterMoveCutLine } from '../../cli/operations/moveToCluster';
import { StopReached, stopReachedInCluster, stopReachedOnMachine } from '../../cli/operations/moveStopReached';

const MOVES = [
  {
    name: 'machine to machine',
    line: (reached: StopReached) => moveCutLine('testnet', 'writer', 'stopOld', reached),
    again: 'run npm run node -- move --stack testnet --node writer again with the same flags',
    old: 'the old node',
    oldPlace: 'the old machine',
    kept: 'the old node is stopped and kept from starting',
    newPlace: 'the new machine runs nothing',
  },
  {
    name: 'into the cluster',
    line: (reached: StopReached) => clusterMoveCutLine('testnet', 'writer', 'stopOld', reached),
    again: 'run npm run node -- move --stack testnet --node writer --to-kubernetes again',
    old: 'the old node',
    oldPlace: 'the old machine',
    kept: 'the old node is stopped and kept from starting',
    newPlace: 'the cluster runs no pod of it',
  },
  {
    name: 'out of the cluster',
    line: (reached: StopReached) => machineMoveCutLine('testnet', 'writer', 'stopOld', reached),
    again: 'run npm run node -- move --stack testnet --node writer --from-kubernetes again',
    old: 'the pod',
    oldPlace: 'the cluster',
    kept: 'the pod is stopped and its StatefulSet kept at no pod',
    newPlace: 'the new machine runs nothing',
  },
];

describe.each(MOVES)('a move $name ended in its stop', ({ line, again, old, oldPlace, kept, newPlace }) => {
  const STATES: StopReached[] = ['running', 'kept', 'stopped', 'unknown'];

  it.each(STATES)('%s: one line, the new place runs nothing, the same command goes on', (reached) => {
    const said = line(reached);
    expect(said).not.toContain('\n');
    expect(said).toMatch(/^the move stopped at "stop /);
    expect(said).toContain(`, ${newPlace}; `);
    expect(said).toContain(again);
  });

  it('still running: says so, and that the move run again stops it first', () => {
    const said = line('running');
    expect(said).toContain(`${old} still runs (its stop did not get that far)`);
    expect(said).not.toMatch(/is stopped|kept from starting,|kept at no pod,/);
    expect(said).toContain(`${again}: it stops it and keeps it from starting, then goes on`);
  });

  it('stopped and kept: the stop reached its end', () => {
    expect(line('kept')).toContain(`: ${kept}, ${newPlace}; ${again} to go on`);
  });

  it('stopped, not kept: says it is not kept from starting yet, and not to start it', () => {
    const said = line('stopped');
    expect(said).toContain(`${old} is stopped but`);
    expect(said).toMatch(/not yet kept/);
    expect(said).not.toContain(kept);
    expect(said).toContain(`${again}: it keeps it from starting, then goes on`);
  });

  it('no answer: says it could not tell, that it may still run, and that running the move again is safe', () => {
    const said = line('unknown');
    expect(said).toContain(`the tool could not tell how far the stop got (${oldPlace} did not answer)`);
    expect(said).toContain(`${old} may still run`);
    expect(said).not.toContain(kept);
    expect(said).toContain(`${again}: it first stops it and keeps it from starting, which is safe however far`);
  });
});

describe('the line of a move ended after its stop', () => {
  it('says the old place stopped and kept, whatever a look would say (the stop ended)', () => {
    expect(moveCutLine('testnet', 'writer', 'carry', 'running')).toBe(moveCutLine('testnet', 'writer', 'carry'));
    expect(moveCutLine('testnet', 'writer', 'lastBackup')).toContain('the old node is stopped and kept from starting');
    expect(machineMoveCutLine('testnet', 'writer', 'carry')).toContain('its StatefulSet kept at no pod');
  });
});

describe("the old machine's look (move.sh look)", () => {
  it.each([
    ['MOVE_OLD_NODE=running\n', 'running'],
    ['move: something\nMOVE_OLD_NODE=kept\n', 'kept'],
    ['MOVE_OLD_NODE=stopped', 'stopped'],
    ['', 'unknown'],
    ['MOVE_OLD_NODE=maybe\n', 'unknown'],
    ['say MOVE_OLD_NODE=kept\n', 'unknown'],
  ])('%j: %s', (output, reached) => {
    expect(stopReachedOnMachine(output)).toBe(reached);
  });
});

describe("the cluster's look at a leaving pod (kubectl get of its StatefulSet, schedule and pod)", () => {
  const statefulSet = (replicas: number, movedTo?: string) => ({
    kind: 'StatefulSet',
    metadata: { annotations: movedTo ? { [MOVED_TO_ANNOTATION]: movedTo } : {} },
    spec: { replicas },
  });
  const schedule = (suspend: boolean) => ({ kind: 'CronJob', spec: { suspend } });
  const pod = (phase: string) => ({ kind: 'Pod', status: { phase } });
  const list = (...items: object[]) => JSON.stringify({ kind: 'List', items });

  it.each([
    ['its pod runs, nothing done yet', list(statefulSet(1), schedule(false), pod('Running')), 'running'],
    [
      'scaled to 0, its pod still terminating',
      list(statefulSet(0, 'root@h:22'), schedule(true), pod('Running')),
      'running',
    ],
    [
      'its pod gone, held at no pod, annotated, schedule suspended',
      list(statefulSet(0, 'root@h:22'), schedule(true)),
      'kept',
    ],
    ['its pod gone, held, no schedule', list(statefulSet(0, 'root@h:22')), 'kept'],
    ['its pod ended (Succeeded), held', list(statefulSet(0, 'root@h:22'), pod('Succeeded')), 'kept'],
    ['its pod gone, schedule not suspended', list(statefulSet(0, 'root@h:22'), schedule(false)), 'stopped'],
    ['its pod gone, StatefulSet not at 0', list(statefulSet(1, 'root@h:22'), schedule(true)), 'stopped'],
    ['its pod gone, StatefulSet not annotated', list(statefulSet(0), schedule(true)), 'stopped'],
    ['no StatefulSet', list(), 'stopped'],
    ['none of them there (kubectl --ignore-not-found prints nothing)', '', 'stopped'],
    ['no JSON', 'error: the server has asked for the client to provide credentials', 'unknown'],
    ['no list', JSON.stringify({ kind: 'Pod' }), 'unknown'],
  ])('%s: %s', (_what, answer, reached) => {
    expect(stopReachedInCluster(answer)).toBe(reached);
  });
});

/**
 * The remote steps a plan diff would miss: an SSH node's step whose input is known only at `pulumi up` (its standard
 * input carries the node's enode, unknown while the key is) looks the same in both plans' resources.json, yet its
 * parameters in DIR/remote/<node>/ change, so `pulumi up` runs it again: the start step of a release bump restarts
 * the node. Each such step is listed as a change, with the lines of its parameters and script that change.
 */
import * as fs from 'fs';
import * as path from 'path';
import { UNKNOWN_MARKER } from '../../core/planFormat';
import { lineChanges, type PlanDiff } from './diff';
import type { PlannedResource } from './plannedResource';

/** A plan's remote steps: each step's parameters and script (DIR/remote/<node>/NN-<step>.env and .sh), by resource name. */
export type RemoteSteps = Record<string, string>;

/** The resource type of a remote step. */
const REMOTE_STEP_TYPE = 'command:remote:Command';
/** The step that (re)starts the node. */
const START_STEP = 'start';

/** Reads DIR/remote/ of a plan; empty when it has none (a plan of cluster nodes only, or an older plan). */
export function readRemoteSteps(dir: string): RemoteSteps {
  const remote = path.join(dir, 'remote');
  const steps: RemoteSteps = {};
  if (!fs.existsSync(remote)) return steps;
  for (const node of fs.readdirSync(remote)) {
    for (const file of fs.readdirSync(path.join(remote, node))) {
      const step = /^\d+-(.+)\.env$/.exec(file)?.[1];
      if (step === undefined) continue;
      const script = path.join(remote, node, file.replace(/\.env$/, '.sh'));
      steps[`${node}-${step}`] = [
        fs.readFileSync(path.join(remote, node, file), 'utf8'),
        fs.existsSync(script) ? fs.readFileSync(script, 'utf8') : '',
      ].join('\n');
    }
  }
  return steps;
}

/** True when a step's standard input is known only at `pulumi up` (so resources.json cannot tell it changes). */
function inputUnknown(resource: PlannedResource): boolean {
  return (resource.inputs as { stdin?: unknown } | undefined)?.stdin === UNKNOWN_MARKER;
}

/**
 * Adds to `diff` the remote steps `pulumi up` runs again though their input is unknown in both plans: those whose
 * parameters or script change between the plans' remote folders.
 */
export function addRemoteReruns(
  diff: PlanDiff,
  next: readonly PlannedResource[],
  steps: { base: RemoteSteps; next: RemoteSteps },
): void {
  const listed = new Set([...diff.changed, ...diff.created].map((r) => `${r.type}::${r.name}`));
  for (const resource of next) {
    if (resource.type !== REMOTE_STEP_TYPE || listed.has(`${resource.type}::${resource.name}`)) continue;
    const before = steps.base[resource.name];
    const after = steps.next[resource.name];
    if (before === undefined || after === undefined || before === after || !inputUnknown(resource)) continue;
    const what = resource.name.endsWith(`-${START_STEP}`) ? 'restarts the node' : 'runs again';
    diff.changed.push({
      type: resource.type,
      name: resource.name,
      fields: [
        { path: `${what} (its input is known at pulumi up; its parameters)`, lines: lineChanges(before, after) },
      ],
    });
    diff.unchanged -= 1;
  }
}

/**
 * Remote commands run as the engine runs them (no command provider is to be had here): each as soon as every resource
 * it depends on is done, side by side otherwise, each on the test host its connection names; a failed command fails
 * the ones that depend on it, which never run, and the others go on. What the rollout's order rests on is exactly
 * this: the resources' `dependsOn` (components/remoteNode.ts, components/healthGate.ts), which the engine keeps.
 */
import type { Declared } from './program';
import type { TestHost } from './host/testHost';
import { progress } from './hostSuite';
import { RemoteStep, runRemoteStep } from './replay';
import { killSessionsOf, untilHolds } from './cuts/cut';

/**
 * A cut of the `pulumi up` (docs/upgrades.md, "Cut anywhere"): once command `step` runs and the shell condition
 * `when` holds on its machine (polled as root), every SSH session of the step's user there is killed, as a dropped
 * connection or a stopped `pulumi up` leaves it; the command ends failed and nothing that depends on it runs.
 */
export interface EngineCut {
  step: string;
  when: string;
}

/** One command's run: when it began and ended (ms since the epoch) and what it printed. */
export interface EngineRun {
  name: string;
  began: number;
  ended: number;
  code: number;
  stdout: string;
  stderr: string;
}

/** How a replay of `pulumi up` ended: the commands run, the one(s) that failed, those never run because of them. */
export interface EngineReplay {
  runs: EngineRun[];
  failed: EngineRun[];
  notRun: string[];
  /** Whether the cut asked for came (the command ended before it otherwise). */
  cut: boolean;
}

/** How the replay runs. */
export interface EngineOptions {
  /** A cut of the `pulumi up`. */
  cut?: EngineCut;
  /**
   * The change as it was before the rollout (the bench's comparison): the stack's node names, whose resources then
   * wait for nothing of another node's, and no gate runs.
   */
  withoutRollout?: readonly string[];
}

/**
 * Runs `steps` (the commands `pulumi up` would run: changedCommands of the declaration) with the dependencies
 * `declared` gives them. Every other resource of the declaration is unchanged: the engine completes it at once, but
 * only after what it depends on (the program registers a resource once its dependencies' registrations returned, and
 * a registration returns once its step is done), so a command waits for everything it depends on, through unchanged
 * resources too; a failed command stops everything that depends on it, however far.
 */
export async function runAsEngine(
  declared: Declared,
  steps: RemoteStep[],
  hosts: TestHost[],
  options: EngineOptions = {},
): Promise<EngineReplay> {
  const { cut, withoutRollout } = options;
  let cutDone = false;
  const nodeOf = (name: string) =>
    withoutRollout?.filter((node) => name.startsWith(`${node}-`)).sort((a, b) => b.length - a.length)[0];
  const dependencies = new Map(
    declared.resources.map((r) => [
      r.name,
      ((r.options.dependsOn ?? []) as string[])
        .filter((d) => d)
        .filter((d) => withoutRollout === undefined || nodeOf(d) === nodeOf(r.name)),
    ]),
  );
  if (withoutRollout) steps = steps.filter((step) => !step.name.endsWith('-gate'));
  const hostOf = (step: RemoteStep) => {
    const host = hosts.find((h) => h.ip === step.inputs.connection.host);
    if (!host) throw new Error(`no test host at ${step.inputs.connection.host} for ${step.name}`);
    return host;
  };
  const changed = new Map(steps.map((step) => [step.name, step]));
  const outcome = new Map<string, Promise<boolean>>();
  const runs: EngineRun[] = [];
  const notRun: string[] = [];
  /** Completes resource `name` (runs it when it is one of `steps`): true when it, and all it depends on, succeeded. */
  const complete = (name: string): Promise<boolean> => {
    const known = outcome.get(name);
    if (known) return known;
    const done = (async () => {
      const results = await Promise.all((dependencies.get(name) ?? []).map(complete));
      const step = changed.get(name);
      if (results.some((ok) => !ok)) {
        if (step) notRun.push(name);
        return false;
      }
      if (!step) return true;
      progress(`engine: running ${step.name}`);
      const began = Date.now();
      const running = runRemoteStep(hostOf(step), step);
      if (cut?.step === step.name) cutDone = await cutWhen(hostOf(step), step, cut.when, running);
      const result = await running;
      runs.push({ name: step.name, began, ended: Date.now(), ...result });
      progress(`engine: ${step.name} exited ${result.code}`);
      return result.code === 0;
    })();
    outcome.set(name, done);
    return done;
  };
  await Promise.all(steps.map((step) => complete(step.name)));
  return { runs, failed: runs.filter((r) => r.code !== 0), notRun, cut: cutDone };
}

/** Cuts `step` once `when` holds on its machine, unless it ended first: true when it was cut. */
async function cutWhen(host: TestHost, step: RemoteStep, when: string, running: Promise<unknown>): Promise<boolean> {
  let ended = false;
  void running.then(() => (ended = true));
  if (!(await untilHolds(host, when, () => ended))) return false;
  progress(`engine: cutting ${step.name} (${when})`);
  await killSessionsOf(host, step.user);
  return true;
}

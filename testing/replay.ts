/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Running a declared program's remote commands on a real test host, as the command provider would: in order, one SSH
 * session each, with the Command's `create` text and its standard input. Shared by the end-to-end tests and the SSH
 * benchmark.
 */
import { RecordedResource, unwrapSecrets } from '../tools/recording/engine';
import { progress } from './hostSuite';
import { REMOTE_STEP_NAMES } from '../core/remote/steps';
import type { Declared } from './program';
import type { TestHost } from './host/testHost';

/** One remote.Command as the provider receives it. */
export interface RemoteStep {
  name: string;
  create: string;
  stdin: string;
  user: string;
  /** Every input (secrets unwrapped), to tell which commands `pulumi up` would run again. */
  inputs: Record<string, any>;
}

/**
 * The remote commands a declaration recorded, node by node, each node's in the order its steps run (each depends on
 * the one before; the engine records a resource only once its inputs are known, so not always in that order).
 */
export function remoteCommands(declared: Declared): RemoteStep[] {
  const commands = declared.resources.filter((r: RecordedResource) => r.type === 'command:remote:Command');
  const stepOf = (name: string) => REMOTE_STEP_NAMES.findIndex((step) => name.endsWith(`-${step}`));
  const nodeOf = (name: string) => name.slice(0, name.length - REMOTE_STEP_NAMES[stepOf(name)].length - 1);
  const nodes = [...new Set(commands.map((r) => nodeOf(r.name)))];
  return [...commands]
    .sort((a, b) => nodes.indexOf(nodeOf(a.name)) - nodes.indexOf(nodeOf(b.name)) || stepOf(a.name) - stepOf(b.name))
    .map((r) => {
      const inputs = unwrapSecrets(r.inputs) as Record<string, any>;
      return { name: r.name, create: inputs.create, stdin: inputs.stdin, user: inputs.connection.user, inputs };
    });
}

/** The commands of `next` whose inputs differ from `before`'s (matched by name): the ones `pulumi up` would run again. */
export function changedCommands(before: RemoteStep[], next: RemoteStep[]): RemoteStep[] {
  const previous = new Map(before.map((step) => [step.name, step]));
  return next.filter((step) => JSON.stringify(step.inputs) !== JSON.stringify(previous.get(step.name)?.inputs));
}

/** Runs one command over SSH as the provider would. */
export function runRemoteStep(host: TestHost, step: RemoteStep) {
  return host.ssh(step.create, { user: step.user, input: step.stdin });
}

/** One step's run: its name and how long its SSH session took. */
export interface TimedStep {
  name: string;
  seconds: number;
}

/** Runs commands in order and returns each one's time; the first failure throws with its output. */
export async function runRemoteSteps(host: TestHost, steps: RemoteStep[]): Promise<TimedStep[]> {
  const timed: TimedStep[] = [];
  for (const step of steps) {
    progress(`running ${step.name}`);
    const start = process.hrtime.bigint();
    const result = await runRemoteStep(host, step);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    progress(`${step.name} exited ${result.code} after ${seconds.toFixed(2)} s`);
    if (result.code !== 0) {
      throw new Error(`step ${step.name} failed (${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
    timed.push({ name: step.name, seconds });
  }
  return timed;
}

/** The node key a node's node-key step sends (its secret parameter), as the operator's own copy of it would hold it. */
export function nodeKeyOf(steps: RemoteStep[]): string {
  const keyStep = steps.find((s) => s.name.endsWith('-node-key'));
  const key = keyStep && /export NODE_KEY='(0x[0-9a-f]{64})'/.exec(keyStep.stdin)?.[1];
  if (!key) throw new Error('no node-key step with a node key among the steps');
  return key;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Running a declared program's remote commands on a real test host, as the command provider would: in order, one SSH
 * session each, with the Command's `create` text and its standard input. Shared by the end-to-end tests and the SSH
 * benchmark.
 */
import { RecordedResource, unwrapSecrets } from '../tools/recording/engine';
import { progress } from './hostSuite';
import { REMOTE_STEP_NAMES } from '../core/remote/steps';
import { declareProgram, recordRun } from './program';
import type { Declared } from './program';
import type { TestHost } from './host/testHost';

/** The name a node's health gate ends with (components/healthGate.ts). */
const GATE = 'gate';

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
  // A node's steps, then its health gate (a node the rollout's next one waits for: components/healthGate.ts).
  const names = [...REMOTE_STEP_NAMES, GATE];
  const stepOf = (name: string) => names.findIndex((step) => name.endsWith(`-${step}`));
  const nodeOf = (name: string) => name.slice(0, name.length - names[stepOf(name)].length - 1);
  const nodes = [...new Set(commands.map((r) => nodeOf(r.name)))];
  return [...commands]
    .sort((a, b) => nodes.indexOf(nodeOf(a.name)) - nodes.indexOf(nodeOf(b.name)) || stepOf(a.name) - stepOf(b.name))
    .map((r) => {
      const inputs = unwrapSecrets(r.inputs) as Record<string, any>;
      return { name: r.name, create: inputs.create, stdin: inputs.stdin, user: inputs.connection.user, inputs };
    });
}

/**
 * The commands of `next` whose inputs differ from `before`'s (matched by name): the ones `pulumi up` would run again,
 * as it runs them: a command with an `update` text (a node's health gate) is updated, so that text runs; the steps,
 * whose triggers changed, are replaced, so their `create` runs again.
 */
export function changedCommands(before: RemoteStep[], next: RemoteStep[]): RemoteStep[] {
  const previous = new Map(before.map((step) => [step.name, step]));
  return next
    .filter((step) => JSON.stringify(step.inputs) !== JSON.stringify(previous.get(step.name)?.inputs))
    .map((step) => (step.inputs.update && previous.has(step.name) ? { ...step, create: step.inputs.update } : step));
}

/** Runs one command over SSH as the provider would. */
export function runRemoteStep(host: TestHost, step: RemoteStep) {
  return host.ssh(step.create, { user: step.user, input: step.stdin });
}

/** One step's run: its name, how long its SSH session took, and what it printed. */
export interface TimedStep {
  name: string;
  seconds: number;
  /** Its standard output: what the engine records as the Command's `stdout`. */
  stdout: string;
  stderr: string;
}

/**
 * Runs commands in order and returns each one's time and output; the first failure throws with its output. `before`:
 * what happens on the machine, outside the engine, right before a command runs (by its name), e.g. the network
 * permissioning the node before its first start (permittedBeforeStart).
 */
export async function runRemoteSteps(
  host: TestHost,
  steps: RemoteStep[],
  before: Record<string, () => Promise<void>> = {},
): Promise<TimedStep[]> {
  const timed: TimedStep[] = [];
  for (const step of steps) {
    await before[step.name]?.();
    progress(`running ${step.name}`);
    const start = process.hrtime.bigint();
    const result = await runRemoteStep(host, step);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    progress(`${step.name} exited ${result.code} after ${seconds.toFixed(2)} s`);
    if (result.code !== 0) {
      throw new Error(`step ${step.name} failed (${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
    timed.push({ name: step.name, seconds, stdout: result.stdout, stderr: result.stderr });
  }
  return timed;
}

/** True for a node's steps up to and including its node-key step (the ones run before a key is read back). */
export function upToNodeKey(step: RemoteStep): boolean {
  const index = REMOTE_STEP_NAMES.findIndex((name) => step.name.endsWith(`-${name}`));
  return index >= 0 && index <= REMOTE_STEP_NAMES.indexOf('node-key');
}

/** A `pulumi up` replayed with the node-key steps' output read back (upReadingBack). */
export interface ReadBackUp {
  /** The declaration before the node-key steps ran (preview semantics: what is made from their output unknown). */
  before: Declared;
  /** The declaration with their output, as the update ends: its start steps carry the enodes read back. */
  declared: Declared;
  /** Each node-key step's standard output, by resource name (what the engine records as its `stdout`). */
  nodeKeyStdout: Record<string, string>;
  /** Every step's run, in order. */
  runs: TimedStep[];
}

/**
 * Replays `pulumi up` of a stack as the engine runs it when the program reads a Command's output back (key custody
 * machine: the node-key step prints the public key of the key the machine holds, and the start step checks the enode
 * made from it): declares the program with preview semantics (recordRun), runs every node's steps up to and including
 * its node-key step, declares it again with those steps' stdout, checks the steps already run are unchanged in it (the
 * engine would not run them twice), then runs the rest. A stack without machine custody goes through the same way.
 */
export async function upReadingBack(
  host: TestHost,
  stack: string,
  config: Record<string, unknown>,
  files: Record<string, unknown> = {},
): Promise<ReadBackUp> {
  const before = await declareProgram(recordRun({ stack, preview: true }), stack, config, files);
  const first = remoteCommands(before).filter(upToNodeKey);
  const runs = await runRemoteSteps(host, first);
  const nodeKeyStdout = Object.fromEntries(
    runs.filter((run) => run.name.endsWith('-node-key')).map((run) => [run.name, run.stdout]),
  );
  const declared = await declareProgram(recordRun({ stack, preview: false, nodeKeyStdout }), stack, config, files);
  const steps = remoteCommands(declared);
  const changed = changedCommands(first, steps.filter(upToNodeKey));
  if (changed.length > 0) {
    throw new Error(`the read-back changed steps that already ran: ${changed.map((step) => step.name).join(', ')}`);
  }
  const rest = await runRemoteSteps(
    host,
    steps.filter((step) => !upToNodeKey(step)),
  );
  return { before, declared, nodeKeyStdout, runs: [...runs, ...rest] };
}

/** The node key a node's node-key step sends (its secret parameter), as the operator's own copy of it would hold it. */
export function nodeKeyOf(steps: RemoteStep[]): string {
  const keyStep = steps.find((s) => s.name.endsWith('-node-key'));
  // A secret parameter's line (core/remote/shell.ts: not exported).
  const key = keyStep && /^(?:export )?NODE_KEY='(0x[0-9a-f]{64})'$/m.exec(keyStep.stdin)?.[1];
  if (!key) throw new Error('no node-key step with a node key among the steps');
  return key;
}

/**
 * The network permissioning node `node` right before its first start (`permit`: writes its registry into the data
 * folder the node-files step made), as `runRemoteSteps`' `before`: the static peer it dials at the start is its peer at
 * once. Registered after the start, a peer refused once is dialed again only after about 35 s (go-ethereum's dial
 * history).
 */
export function permittedBeforeStart(node: string, permit: () => Promise<void>): Record<string, () => Promise<void>> {
  return { [`${node}-start`]: permit };
}

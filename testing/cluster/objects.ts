/**
 * Reading the test cluster's objects: a field by its JSONPath, and waiting until a field reads as wanted (a pod's phase
 * Running).
 */
import { spawn } from 'child_process';
import * as path from 'path';
import { TestCluster } from './cluster';

/** A namespaced object of the cluster, or (with `selector`, `name` empty) the list of those its labels select. */
export interface ObjectRef {
  kind: string;
  name: string;
  namespace: string;
  /** A label selector (`job-name=run-1`): the list of the objects it selects. */
  selector?: string;
}

/** A field of an object by JSONPath (`{.status.phase}`); the error output when it cannot be read. */
export async function fieldOf(cluster: TestCluster, object: ObjectRef, jsonpath: string): Promise<string> {
  const out = await cluster.kubectl([
    'get',
    object.kind,
    ...(object.selector ? ['-l', object.selector] : [object.name]),
    '-n',
    object.namespace,
    '-o',
    `jsonpath=${jsonpath}`,
  ]);
  return out.code === 0 ? out.stdout : out.stderr;
}

/**
 * Reads a field until `done` takes its value (`timeoutMs` at most), waiting between reads with `between` (what it saw
 * until the deadline, if anything); returns the value `done` took, or the last value read.
 */
async function readUntil(
  cluster: TestCluster,
  object: ObjectRef,
  jsonpath: string,
  done: (value: string) => boolean,
  timeoutMs: number,
  between: (deadline: number) => Promise<string | undefined>,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let value = await fieldOf(cluster, object, jsonpath);
  while (!done(value) && Date.now() < deadline) {
    const seen = await between(deadline);
    if (seen !== undefined && done(seen)) return seen;
    await new Promise((resolve) => setTimeout(resolve, 250));
    value = await fieldOf(cluster, object, jsonpath);
  }
  return value;
}

/**
 * Reads a field until `done` takes its value (`timeoutMs` at most) and returns the last value read. `watched`: one
 * `kubectl get -w` the whole wait, told of each change (watchedField), where it reads the field anew four times a
 * second: the value is seen the moment it changes, and a long wait costs the machine one process. A watch that ends
 * early (the object not there yet) is followed by a read and a new watch.
 */
export function fieldWhen(
  cluster: TestCluster,
  object: ObjectRef,
  jsonpath: string,
  done: (value: string) => boolean,
  timeoutMs = 60_000,
  { watched = false } = {},
): Promise<string> {
  return readUntil(cluster, object, jsonpath, done, timeoutMs, async (deadline) =>
    watched ? watchedField(cluster, object, jsonpath, done, deadline) : undefined,
  );
}

/** What ends each value a watch prints (the JSONPath's own output never holds it). */
const WATCH_END = '<lacchain-watch-end>';

/**
 * One `kubectl get -w` of the named `object`'s field: resolves with the first value `done` takes, or the last one
 * printed when the watch ends (the object not there yet, the API server's end of the watch) or `deadline` passes.
 */
function watchedField(
  cluster: TestCluster,
  object: ObjectRef,
  jsonpath: string,
  done: (value: string) => boolean,
  deadline: number,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const args = ['--kubeconfig', cluster.kubeconfig, 'get', object.kind, object.name, '-n', object.namespace, '-w'];
    const child = spawn(path.join(cluster.binDir, 'kubectl'), [...args, '-o', `jsonpath=${jsonpath}{"${WATCH_END}"}`], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let last: string | undefined;
    let text = '';
    const end = () => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve(last);
    };
    const timer = setTimeout(end, Math.max(0, deadline - Date.now()));
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const values = text.split(WATCH_END);
      text = values.pop() ?? '';
      for (const value of values) {
        last = value;
        if (done(value)) return end();
      }
    });
    child.on('close', end);
    child.on('error', end);
  });
}

/** The writer's pod of the test stacks, in `namespace`. */
export function writerPod(namespace: string): ObjectRef {
  return { kind: 'pod', name: 'besu-node-writer-0', namespace };
}

/** Reads a pod's phase until it is Running (60 s at most) and returns the last phase read. */
export function phaseWhenRunning(cluster: TestCluster, pod: ObjectRef): Promise<string> {
  return fieldWhen(cluster, pod, '{.status.phase}', (phase) => phase === 'Running');
}

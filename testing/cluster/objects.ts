/**
 * Reading the test cluster's objects: a field by its JSONPath, and waiting until a field reads as wanted (a pod's phase
 * Running).
 */
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

/** Reads a field until `done` takes its value (`timeoutMs` at most) and returns the last value read. */
export async function fieldWhen(
  cluster: TestCluster,
  object: ObjectRef,
  jsonpath: string,
  done: (value: string) => boolean,
  timeoutMs = 60_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let value = await fieldOf(cluster, object, jsonpath);
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    value = await fieldOf(cluster, object, jsonpath);
  }
  return value;
}

/** The writer's pod of the test stacks, in `namespace`. */
export function writerPod(namespace: string): ObjectRef {
  return { kind: 'pod', name: 'besu-node-writer-0', namespace };
}

/** Reads a pod's phase until it is Running (60 s at most) and returns the last phase read. */
export function phaseWhenRunning(cluster: TestCluster, pod: ObjectRef): Promise<string> {
  return fieldWhen(cluster, pod, '{.status.phase}', (phase) => phase === 'Running');
}

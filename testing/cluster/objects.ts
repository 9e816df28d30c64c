/**
 * Reading the test cluster's objects: a field by its JSONPath, and waiting until a field reads as wanted (a pod's phase
 * Running). Read over HTTPS (apiReads.ts), as kubectl would print it; kubectl itself for what that reader does not know.
 */
import { apiField, apiGet, apiWatch } from './apiReads';
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
  const read = await apiField(cluster.kubeconfig, object, jsonpath);
  if (read !== undefined) return read;
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
 * Reads a field until `done` takes its value (`timeoutMs` at most) and returns the last value read: four times a second,
 * each read over HTTPS (no process). `watched`: one watch over HTTPS the whole wait instead (apiWatch), told of each
 * change (watchedField): the value is seen the moment it changes. A watch that ends early (the object not there yet) is
 * followed by a read and a new watch.
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

/**
 * One watch of the named `object`'s field (apiReads.ts): resolves with the first value `done` takes, or the last one
 * seen when the watch ends (the API server's end of it) or `deadline` passes; at once, with nothing, for a kind or a
 * template the watch does not know (the wait then reads the field four times a second).
 */
function watchedField(
  cluster: TestCluster,
  object: ObjectRef,
  jsonpath: string,
  done: (value: string) => boolean,
  deadline: number,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    let last: string | undefined;
    let finished = false;
    const end = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (watch) watch.stop();
      resolve(last);
    };
    const timer = setTimeout(end, Math.max(0, deadline - Date.now()));
    const watch = apiWatch(
      cluster.kubeconfig,
      object,
      jsonpath,
      (value) => {
        last = value;
        if (done(value)) end();
      },
      end,
    );
    if (!watch) end();
  });
}

/** What `kubectl logs <pod> -c <container>` prints, read over HTTPS; fails with the API server's answer otherwise. */
export async function logOf(cluster: TestCluster, pod: ObjectRef, container: string): Promise<string> {
  const where = `/api/v1/namespaces/${pod.namespace}/pods/${pod.name}/log?container=${encodeURIComponent(container)}`;
  const answer = await apiGet(cluster.kubeconfig, where);
  if (answer.status !== 200)
    throw new Error(`kubectl logs ${pod.name} -c ${container}: ${JSON.stringify(answer.body)}`);
  return String(answer.body);
}

/** The writer's pod of the test stacks, in `namespace`. */
export function writerPod(namespace: string): ObjectRef {
  return { kind: 'pod', name: 'besu-node-writer-0', namespace };
}

/** Reads a pod's phase until it is Running (60 s at most) and returns the last phase read. */
export function phaseWhenRunning(cluster: TestCluster, pod: ObjectRef): Promise<string> {
  return fieldWhen(cluster, pod, '{.status.phase}', (phase) => phase === 'Running');
}

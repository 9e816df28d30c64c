/**
 * The kubelet tier's shared cluster: one control plane and one real worker (cluster.ts with a kubelet, kubelet.ts) for
 * every file of a run of the tier in one jest process (tests/run.sh's `--maxWorkers=1`, or a file run alone), where
 * each file started and stopped its own (about 15 s to start, more to stop). Each file still starts from the state it
 * needs:
 * - it takes the worker under the Node name its values pin (`worker-<type>`): the worker's kubelet, kube-proxy and
 *   MetalLB started again under that name when the last file's was another (kubelet.ts `rename`);
 * - what the cluster holds is recorded at its start (every object the API server lists, but the cluster's own
 *   bookkeeping: KEPT), and the API server's audit log is emptied;
 * - at its end everything it made goes: the controllers that make pods (their pods left), then the worker's pods at
 *   once, then every object it made (its namespaces with all in them, its volumes and other cluster-wide objects);
 *   the worker's containers all stopped, its volume folders removed. The images stay: an input, never state (the
 *   next file's import of the same archive is skipped while containerd has it).
 * A file that removed or could not be cleaned after leaves no cluster: it is stopped, and the next file starts anew.
 *
 * The module lives in jest's own context, outside the test files' module registries (jest makes one anew for each
 * file): testing/jestEnvironment.js hands it to the files (the global `lacchainSharedKubelet()`), and
 * testing/jestGlobalTeardown.js stops the cluster after the last file. So the files share only in the process that
 * runs that teardown (jest's own, named by testing/jestGlobalSetup.js): in jest's workers each file keeps a cluster of
 * its own, as before.
 */
import * as fs from 'fs';
import { startCluster, TestCluster } from './cluster';
import { deletePodsOf } from './kubelet';
import { unmountUnder } from './hostChanges';
import { waitFor } from './processes';
import { timing } from './tierTiming';

/** The variable jest's global set-up sets to its own process id (testing/jestGlobalSetup.js). */
export const JEST_MAIN_PROCESS_VARIABLE = 'LACCHAIN_JEST_MAIN_PROCESS';

/**
 * The kinds a file's end leaves as they are: the cluster's own bookkeeping, made and changed by the cluster itself
 * (events, leases, a Service's endpoints and address and MetalLB's record of its announcement, which go with their
 * Service) and the worker's Node and what goes with it (its name is the next file's: `rename`).
 */
const KEPT = new Set([
  'Event',
  'Lease',
  'LeaseCandidate',
  'Node',
  'CSINode',
  'Endpoints',
  'EndpointSlice',
  'IPAddress',
  'ServiceL2Status',
  'ServiceBGPStatus',
]);

/** An object of the cluster, as `kubectl delete -f` takes it. */
interface ObjectId {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

const keyOf = (o: ObjectId) => `${o.apiVersion} ${o.kind} ${o.namespace ?? ''} ${o.name}`;

/**
 * Every object the API server lists (but the KEPT kinds, and what is being deleted: a namespace the last file's end
 * deleted without waiting, and what its controllers made in it meanwhile), by a key of its identity.
 */
async function objectsOf(cluster: TestCluster): Promise<Map<string, ObjectId>> {
  const kinds = (await cluster.kubectlOk(['api-resources', '--verbs=list,delete', '-o', 'name']))
    .split('\n')
    .filter((kind) => kind && !kind.startsWith('events'));
  const template =
    '{{range .items}}{{.apiVersion}}|{{.kind}}|{{or .metadata.namespace "-"}}|{{.metadata.name}}|' +
    '{{if .metadata.deletionTimestamp}}deleted{{end}}{{"\\n"}}{{end}}';
  const listed = await cluster.kubectlOk(['get', kinds.join(','), '-A', '-o', `go-template=${template}`]);
  const lines = listed
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('|'));
  const going = new Set(
    lines.filter(([, kind, , , deleted]) => kind === 'Namespace' && deleted).map(([, , , name]) => name),
  );
  const objects = new Map<string, ObjectId>();
  for (const [apiVersion, kind, namespace, name, deleted] of lines) {
    if (KEPT.has(kind) || deleted || going.has(namespace)) continue;
    const object = { apiVersion, kind, ...(namespace === '-' ? {} : { namespace }), name };
    objects.set(keyOf(object), object);
  }
  return objects;
}

/** The running shared cluster, and what it held when the current file took it. */
let shared: { cluster: TestCluster; before?: Map<string, ObjectId> } | undefined;
/** The last file's clean-up (or the cluster's stop), which the next file waits for, also when jest stopped waiting. */
let cleaning: Promise<void> = Promise.resolve();

/** Whether the files share a cluster in this process: jest's own, the one that runs the global teardown. */
export function sharingHere(): boolean {
  return process.env[JEST_MAIN_PROCESS_VARIABLE] === String(process.pid);
}

/** Stops the shared cluster, when one runs (the global teardown, or a file that could not be cleaned after). */
export async function stopSharedCluster(): Promise<void> {
  await cleaning.catch(() => undefined);
  const running = shared;
  shared = undefined;
  await running?.cluster.stop();
}

/** Removes what the current file made (see the module's comment); throws with what could not be. */
async function cleanAfterFile(): Promise<void> {
  if (!shared?.before) return;
  const { cluster, before } = shared;
  shared.before = undefined;
  const [worker] = cluster.kubelets;
  await deletePodsOf(cluster.kubectlOk, worker.name);
  timing('shared cluster: the pods deleted');
  const after = await objectsOf(cluster);
  const removed = [...before.keys()].filter((key) => !after.has(key));
  if (removed.length > 0) throw new Error(`the file removed objects the next file needs: ${removed.join(', ')}`);
  const made = [...after].filter(([key]) => !before.has(key)).map(([, object]) => object);
  // What is in a namespace first (a claim's protection goes with the pods), so that the namespace controller finds its
  // namespaces empty on its one pass, then the rest, the volumes last (each goes once its claim has gone). The
  // namespaces themselves are not waited for: the controller's pass comes after its fixed 5 s, and nothing of the next
  // file's is in them (each file names its own; objectsOf leaves out a namespace being deleted and all in it).
  const namespaces = made.filter((o) => o.kind === 'Namespace');
  const batches = [
    made.filter((o) => o.namespace),
    made.filter((o) => !o.namespace && o.kind !== 'PersistentVolume' && o.kind !== 'Namespace'),
    made.filter((o) => o.kind === 'PersistentVolume'),
  ];
  for (const batch of batches.filter((objects) => objects.length > 0)) {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: batch.map(({ apiVersion, kind, namespace, name }) => ({
        apiVersion,
        kind,
        metadata: { name, namespace },
      })),
    };
    await cluster.kubectlOk(['delete', '-f', '-', '--ignore-not-found', '--timeout=120s'], JSON.stringify(list));
    timing(`shared cluster: deleted ${batch.length} objects (${[...new Set(batch.map((o) => o.kind))].join(', ')})`);
  }
  if (namespaces.length > 0) {
    await cluster.kubectlOk([
      'delete',
      'namespace',
      ...namespaces.map((o) => o.name),
      '--ignore-not-found',
      '--wait=false',
    ]);
    timing(`shared cluster: deleting ${namespaces.length} namespaces, not waited for`);
  }
  await waitFor("the worker's containers stopped", async () => (await worker.containers()).length === 0, 60_000);
  unmountUnder(worker.volumesDir);
  fs.rmSync(worker.volumesDir, { recursive: true, force: true });
  timing('shared cluster: cleaned after the file');
}

/**
 * The shared cluster for a file whose one real worker is named `workerName` (started with the control plane's and the
 * kubelet's folders on the first call); its `stop` removes what the file made, and stops the cluster when that fails.
 */
export async function takeSharedCluster(binDir: string, kubeletDir: string, workerName: string): Promise<TestCluster> {
  await cleaning.catch(() => undefined);
  try {
    if (!shared) {
      shared = { cluster: await startCluster(binDir, [], { kubelets: { names: [workerName], dir: kubeletDir } }) };
    } else {
      await shared.cluster.kubelets[0].rename(workerName);
    }
    const { cluster } = shared;
    fs.truncateSync(cluster.auditLog, 0);
    shared.before = await objectsOf(cluster);
    timing(`shared cluster: taken as ${workerName}`);
    return {
      ...cluster,
      stop: () => {
        cleaning = cleanAfterFile().catch(async (error) => {
          const running = shared;
          shared = undefined;
          await running?.cluster.stop();
          throw error;
        });
        return cleaning;
      },
    };
  } catch (error) {
    await stopSharedCluster();
    throw error;
  }
}

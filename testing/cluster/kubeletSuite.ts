/**
 * A test cluster for a kubelet-tier suite (tests/kubelet/): the control plane of testing/cluster/cluster.ts with real
 * workers instead of kwok's (testing/cluster/kubelet.ts), named as the test values files pin the node types
 * (`worker-<type>`), and the images the program's manifests name imported into them (testing/cluster/images.ts).
 * A suite with one worker takes the tier's shared cluster where jest's own process runs the files
 * (testing/cluster/sharedKubelet.ts: the worker under the suite's name, what the suite made removed after it);
 * otherwise it starts its own and stops it after its tests.
 * Without the binaries, root or the container runtime the suite's tests are skipped with the reason printed; under
 * CI=true they fail instead.
 */
import { builtTool, WORKER_TOOL_SCRIPTS } from './builtTools';
import { clusterTools, startCluster, TestCluster } from './cluster';
import { kubeletPrerequisites } from './kubelet';
import type * as SharedKubelet from './sharedKubelet';
import { timing } from './tierTiming';

/** The kubelet's folder (tools/kubernetes/build-kubelet.sh), or why it is not there. */
const kubeletTools = () => builtTool(WORKER_TOOL_SCRIPTS.kubelet);

/** Why the kubelet tier cannot run here, or undefined. */
function unavailable(): string | undefined {
  const tools = clusterTools();
  if ('unavailable' in tools) return tools.unavailable;
  // The worker's kubelet, and its kube-proxy and MetalLB (kubelet.ts starts them beside it).
  for (const script of Object.values(WORKER_TOOL_SCRIPTS)) {
    const built = builtTool(script);
    if ('unavailable' in built) return built.unavailable;
  }
  return kubeletPrerequisites();
}

/** The tier's shared cluster, as testing/jestEnvironment.js hands it to a test file (none in another environment). */
const sharedKubelet = () =>
  (globalThis as { lacchainSharedKubelet?: () => typeof SharedKubelet }).lacchainSharedKubelet?.();

/** A suite's cluster with real workers named `workers`, and `it` for its tests (it.skip when it cannot run, outside CI). */
export function kubeletClusterForSuite(
  workers: string[],
  prepare: (cluster: TestCluster) => Promise<void> = async () => undefined,
): { cluster: () => TestCluster; itWithKubelet: jest.It } {
  const reason = unavailable();
  if (reason && process.env.CI !== 'true') {
    process.stderr.write(`kubelet tests skipped: ${reason}\n`);
    return { cluster: () => undefined as never, itWithKubelet: it.skip };
  }
  let running: TestCluster | undefined;
  beforeAll(async () => {
    if (reason) throw new Error(`the kubelet tests cannot run: ${reason}`);
    const tools = clusterTools() as { dir: string };
    const kubelet = kubeletTools() as { dir: string };
    timing(`${expect.getState().testPath}: start`);
    const shared = sharedKubelet();
    running =
      shared?.sharingHere() && workers.length === 1
        ? await shared.takeSharedCluster(tools.dir, kubelet.dir, workers[0])
        : await startCluster(tools.dir, [], { kubelets: { names: workers, dir: kubelet.dir } });
    await prepare(running);
    timing(`${expect.getState().testPath}: prepared (images imported), tests begin`);
    // The real-worker lock (kubelet.ts) may wait up to 20 minutes for the other kubelet suites, before this one starts.
  }, 1_800_000);
  // The shared cluster's stop removes what the suite made (sharedKubelet.ts).
  afterAll(async () => {
    timing(`${expect.getState().testPath}: tests done, stop`);
    await running?.stop();
    timing(`${expect.getState().testPath}: stopped`);
  }, 120_000);
  return {
    cluster: () => {
      if (!running) throw new Error('the test cluster is not running');
      return running;
    },
    itWithKubelet: it,
  };
}

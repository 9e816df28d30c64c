/**
 * One test cluster per kubelet-tier suite (tests/kubelet/): the control plane of testing/cluster/cluster.ts with real
 * workers instead of kwok's (testing/cluster/kubelet.ts), named as the test values files pin the node types
 * (`worker-<type>`), and the images the program's manifests name imported into them (testing/cluster/images.ts).
 * Without the binaries, root or the container runtime the suite's tests are skipped with the reason printed; under
 * CI=true they fail instead.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { clusterTools, startCluster, TestCluster } from './cluster';
import { kubeletPrerequisites } from './kubelet';
import { PROJECT_DIR } from '../run';

/** The kubelet's folder (tools/kubernetes/build-kubelet.sh), or why it is not there. */
function kubeletTools(): { dir: string } | { unavailable: string } {
  const result = spawnSync('bash', [path.join(PROJECT_DIR, 'tools/kubernetes/build-kubelet.sh'), '--check'], {
    encoding: 'utf8',
  });
  if (result.status !== 0) return { unavailable: result.stderr.trim().split('\n').pop() ?? 'no kubelet' };
  return { dir: result.stdout.trim() };
}

/** Why the kubelet tier cannot run here, or undefined. */
function unavailable(): string | undefined {
  const tools = clusterTools();
  if ('unavailable' in tools) return tools.unavailable;
  const kubelet = kubeletTools();
  if ('unavailable' in kubelet) return kubelet.unavailable;
  return kubeletPrerequisites();
}

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
    running = await startCluster(tools.dir, [], { kubelets: { names: workers, dir: kubelet.dir } });
    await prepare(running);
    // The real-worker lock (kubelet.ts) may wait up to 20 minutes for the other kubelet suites, before this one starts.
  }, 1_800_000);
  afterAll(async () => {
    await running?.stop();
  }, 120_000);
  return {
    cluster: () => {
      if (!running) throw new Error('the test cluster is not running');
      return running;
    },
    itWithKubelet: it,
  };
}

/**
 * One test cluster per suite (testing/cluster/cluster.ts): started before its tests, stopped after them. Its workers
 * are the ones the test values files pin the node types to (testing/values.ts), each with its ExternalIP. Without the
 * binaries (tools/kubernetes/build.sh, run by tests/setup.sh; it needs Go) the suite's tests are skipped with the
 * reason printed, and under CI=true they fail instead.
 */
import { NODE_TYPES } from '../../core/catalog/nodeTypes';
import { valuesFor } from '../values';
import { clusterTools, startCluster, TestCluster, TestWorker } from './cluster';

/** The workers the test values files pin each node type to. */
export const TEST_WORKERS: TestWorker[] = NODE_TYPES.map((type) => {
  const { deploy } = valuesFor('testnet', type);
  return { name: deploy.workerName, externalIP: deploy.publicIP };
});

/** A suite's cluster, and `it` for its tests (it.skip without the binaries, outside CI). */
export function clusterForSuite(workers: TestWorker[] = TEST_WORKERS): {
  cluster: () => TestCluster;
  itWithCluster: jest.It;
} {
  const tools = clusterTools();
  if ('unavailable' in tools && process.env.CI !== 'true') {
    process.stderr.write(`cluster tests skipped: ${tools.unavailable}\n`);
    return { cluster: () => undefined as never, itWithCluster: it.skip };
  }
  let running: TestCluster | undefined;
  beforeAll(async () => {
    if ('unavailable' in tools) throw new Error(`no Kubernetes binaries for the cluster tests: ${tools.unavailable}`);
    running = await startCluster(tools.dir, workers);
  }, 180_000);
  afterAll(async () => {
    await running?.stop();
  });
  return {
    cluster: () => {
      if (!running) throw new Error('the test cluster is not running');
      return running;
    },
    itWithCluster: it,
  };
}

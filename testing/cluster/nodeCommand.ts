/**
 * `npm run node` as an operator runs it against a kubelet-tier node (testing/cluster/kubeletNode.ts): the stack file
 * and the node's values file of its own in the suite's work folder (the cluster's context as `lacchain:kubeContext`),
 * the cluster's kubeconfig and the real kubectl first on the PATH, and the node's RPC through `kubectl port-forward`
 * kept across the pod's restarts (portForward.ts), given as --rpc-url as docs/operations.md says.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { PORTS } from '../../core/catalog/ports';
import { runNpmAsync } from '../run';
import type { KubeletNode } from './kubeletNode';
import { keptPortForward, PortForward } from './portForward';

/** The operator's command against one node, for a describe block's tests. */
export interface NodeCommand {
  /** Runs `npm run node -- <args> --stack testnet --config <stack file> --rpc-url <port-forward>`. */
  run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The stack file. */
  config: string;
  /** The node's values file (`values/<node>.yml` beside the stack file), which an operator edits. */
  valuesFile: string;
  /** The operator's environment: the cluster's kubeconfig, its kubectl first on the PATH. */
  env(): NodeJS.ProcessEnv;
}

/**
 * `npm run node` against `node` (its values file of `release`, the network's by default), its files written into
 * `work` and its port-forward kept while the block's tests run.
 */
export function nodeCommand(node: KubeletNode, work: string, release?: string): NodeCommand {
  let rpc: PortForward | undefined;
  const config = path.join(work, 'Pulumi.testnet.yaml');
  const valuesFile = path.join(work, 'values', `${node.node}.yml`);
  const env = () => ({ KUBECONFIG: node.cluster().kubeconfig, PATH: `${node.cluster().binDir}:${process.env.PATH}` });
  beforeAll(async () => {
    if (node.itWithKubelet === it.skip) return;
    const stack = { ...node.stackSettings, 'lacchain:kubeContext': node.cluster().context };
    fs.mkdirSync(path.dirname(valuesFile), { recursive: true });
    fs.writeFileSync(config, yaml.dump({ config: stack }));
    fs.writeFileSync(valuesFile, yaml.dump(node.values(release)));
    rpc = await keptPortForward(node.cluster(), node.namespace, node.pod.name, PORTS.rpcHttp);
  });
  afterAll(() => rpc?.stop());
  return {
    run: (...args) =>
      runNpmAsync('node', [...args, '--stack', 'testnet', '--config', config, '--rpc-url', rpc!.url], { env: env() }),
    config,
    valuesFile,
    env,
  };
}

/**
 * `npm run node -- status` of a cluster node that runs: exit 0, nothing on stderr, its pod Running, each of
 * `companions` ready, and the stack's `enode`.
 */
export function expectRunningStatus(
  result: { code: number | null; stdout: string; stderr: string },
  enode: string,
  companions: readonly string[],
): void {
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/service {2}Running/);
  for (const companion of companions) expect(result.stdout).toMatch(new RegExp(`${companion} {2}ready`));
  expect(result.stdout).toContain(`enode    ${enode}`);
}

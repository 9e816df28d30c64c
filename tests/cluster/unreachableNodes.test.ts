/**
 * `npm run node` on a cluster node that cannot be acted on, with the real kubectl: a kube context whose cluster does
 * not answer (a closed port on this machine), no kubeconfig at all, the stack's context missing from the kubeconfig,
 * and, against the real API server (testing/cluster/), a node that is not deployed and one whose pod does not run.
 * Every operation says which in one line (never kubectl's own log lines) and exits 1, with no follow-up about
 * containers or restarts; `status --all` shows a short state in each row and the reasons below the table. The same
 * for an SSH node is in tests/tools/unreachableMachine.test.ts.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { applyServerSide, kubernetesManifests } from '../../testing/cluster/manifests';
import { fieldWhen, phaseWhenRunning, writerPod } from '../../testing/cluster/objects';
import { clusterForSuite } from '../../testing/cluster/suite';
import { KEY_ONE } from '../../testing/fixtures';
import { freePort } from '../../testing/ports';
import { declareProgram } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { PROJECT_DIR, runNpmAsync } from '../../testing/run';
import { valuesFor } from '../../testing/values';

jest.setTimeout(600_000);

const recorded = recordProgram();
const { cluster, itWithCluster } = clusterForSuite();
const OPERATIONS = ['status', 'check', 'logs', 'start', 'restart', 'backup', 'backups', 'restore', 'rollback'];
/** What never shows in a one-line answer: kubectl's klog lines, and the check's follow-ups on a node it never saw. */
const RAW = /E\d{4} |memcache\.go|Unhandled Error|no such container|recovery:|support request/;

let work: string;
beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-unreachable-nodes-'));
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** A project folder: a testnet stack of Kubernetes nodes (each its values file, in `namespace`). */
function project(nodes: ('writer' | 'validator')[], namespace: string, extra: Record<string, unknown> = {}): string {
  const dir = fs.mkdtempSync(path.join(work, 'project-'));
  fs.mkdirSync(path.join(dir, 'values'));
  const config = {
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': nodes.map((type) => ({ name: type, typenode: type, target: 'kubernetes' })),
    ...extra,
  };
  fs.writeFileSync(path.join(dir, 'Pulumi.testnet.yaml'), yaml.dump({ config }));
  for (const type of nodes) {
    fs.writeFileSync(path.join(dir, 'values', `${type}.yml`), yaml.dump(valuesFor('testnet', type, { namespace })));
  }
  return path.join(dir, 'Pulumi.testnet.yaml');
}

/** A kubeconfig whose one context, `closed`, names a cluster at a port of this machine where nothing listens. */
async function closedKubeconfig(): Promise<{ file: string; port: number }> {
  const port = await freePort();
  const file = path.join(work, `closed-${port}.kubeconfig`);
  fs.writeFileSync(
    file,
    yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'closed', cluster: { server: `https://127.0.0.1:${port}` } }],
      users: [{ name: 'someone', user: { token: 'not-a-real-token' } }],
      contexts: [{ name: 'closed', context: { cluster: 'closed', user: 'someone' } }],
      'current-context': 'closed',
    }),
  );
  return { file, port };
}

/** Runs `npm run node` with the cluster's kubectl first on the PATH; stderr's lines without the launcher's note. */
async function node(config: string, args: string[], kubeconfig: string) {
  const result = await runNpmAsync('node', [...args, '--stack', 'testnet', '--config', config], {
    env: { KUBECONFIG: kubeconfig, PATH: `${cluster().binDir}:${process.env.PATH}` },
  });
  const errors = result.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('the build in bin/'));
  return { ...result, errors };
}

describe('a cluster that does not answer', () => {
  itWithCluster.each(OPERATIONS)('%s: one line naming the context and the command to check; exit 1', async (op) => {
    const { file, port } = await closedKubeconfig();
    const result = await node(project(['writer'], 'lacchain'), [op], file);
    expect(result.errors).toEqual([
      `error: node writer: cannot reach the cluster of context closed (The connection to the server 127.0.0.1:${port} was refused - did you specify the right host or port?): check kubectl --context closed get nodes`,
    ]);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toMatch(RAW);
    expect(result.code).toBe(1);
  });

  itWithCluster('status --all: "unreachable" in each row, the reasons below the table, one line each', async () => {
    const { file, port } = await closedKubeconfig();
    const result = await node(project(['writer', 'validator'], 'lacchain'), ['status', '--all'], file);
    const reason = (name: string) =>
      `node ${name}: cannot reach the cluster of context closed (The connection to the server 127.0.0.1:${port} was refused - did you specify the right host or port?): check kubectl --context closed get nodes`;
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^NODE +TYPE +PATH +RELEASE +SERVICE +PEERS +HEAD +BEHIND +PERMISSIONED +COMPANIONS$/),
      expect.stringMatching(/^writer +writer +kubernetes +- +unreachable +- +- +- +- +-$/),
      expect.stringMatching(/^validator +validator +kubernetes +- +unreachable +- +- +- +- +-$/),
      reason('writer'),
      reason('validator'),
    ]);
    expect(result.errors).toEqual([]);
    expect(result.code).toBe(1);
    const rows = JSON.parse((await node(project(['writer'], 'lacchain'), ['status', '--all', '--json'], file)).stdout);
    expect(rows).toEqual([
      expect.objectContaining({ service: 'unreachable', running: false, problem: reason('writer') }),
    ]);
  });
});

describe('no kube context', () => {
  itWithCluster.each(['check', 'status'])(
    '%s without any kubeconfig: get one, set lacchain:kubeContext',
    async (op) => {
      const none = path.join(work, 'no-such-kubeconfig');
      const config = project(['writer'], 'lacchain');
      const result = await node(config, [op], none);
      expect(result.errors).toEqual([
        `error: node writer: no kube context: there is no kubeconfig (${none}): add your cluster's credentials to it (your provider's get-credentials command) and set lacchain:kubeContext in ${path.relative(PROJECT_DIR, config)} to its context`,
      ]);
      expect(result.stderr).not.toMatch(RAW);
      expect(result.code).toBe(1);
    },
  );

  itWithCluster("check: the stack's context not in the kubeconfig", async () => {
    const config = project(['writer'], 'lacchain', { 'lacchain:kubeContext': 'prod' });
    const result = await node(config, ['check'], cluster().kubeconfig);
    expect(result.errors).toEqual([
      `error: node writer: the kube context prod (lacchain:kubeContext in ${path.relative(PROJECT_DIR, config)}) is not in your kubeconfig (${cluster().kubeconfig}): kubectl config get-contexts lists the contexts there`,
    ]);
    expect(result.code).toBe(1);
  });
});

describe('the real API server', () => {
  const NOT_DEPLOYED = 'not-deployed';
  const reason = (name: string) =>
    `node ${name} is not deployed in namespace ${NOT_DEPLOYED} of context ${cluster().context} (no StatefulSet besu-node-${name}): run pulumi up --stack testnet`;

  itWithCluster.each(OPERATIONS)('%s of a node not deployed: one line, run pulumi up; exit 1', async (op) => {
    const config = project(['writer'], NOT_DEPLOYED, { 'lacchain:kubeContext': cluster().context });
    const result = await node(config, [op], cluster().kubeconfig);
    expect(result.errors).toEqual([`error: ${reason('writer')}`]);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(1);
  });

  itWithCluster('status --all: "not deployed" in each row, the reasons below the table', async () => {
    const config = project(['writer', 'validator'], NOT_DEPLOYED);
    const result = await node(config, ['status', '--all'], cluster().kubeconfig);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^NODE +TYPE/),
      expect.stringMatching(/^writer +writer +kubernetes +- +not deployed +- +- +- +- +-$/),
      expect.stringMatching(/^validator +validator +kubernetes +- +not deployed +- +- +- +- +-$/),
      reason('writer'),
      reason('validator'),
    ]);
    expect(result.code).toBe(1);
  });

  describe('a node deployed whose pod does not run (its StatefulSet scaled to 0)', () => {
    const SCALED = 'scaled';
    const context = () => cluster().context;
    let config: string;

    beforeAll(async () => {
      if (itWithCluster === it.skip) return;
      config = project(['writer'], SCALED, { 'lacchain:kubeContext': context() });
      const values = valuesFor('testnet', 'writer', { namespace: SCALED });
      const declared = await declareProgram(
        recorded,
        'testnet',
        {
          'lacchain:network': 'open-protestnet',
          'lacchain:kubeContext': context(),
          'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
          'lacchain:nodeKeys': { writer: KEY_ONE },
        },
        { 'values/writer.yml': values },
      );
      await applyServerSide(cluster(), kubernetesManifests(declared));
      await cluster().kubectlOk(['scale', 'statefulset/besu-node-writer', '--replicas=0', '-n', SCALED]);
      const pods = { kind: 'pod', name: '', namespace: SCALED, selector: 'app.kubernetes.io/instance=writer' };
      await fieldWhen(cluster(), pods, '{.items[*].metadata.name}', (names) => names === '');
    });

    itWithCluster('logs: no pod, and the operation that starts it', async () => {
      const result = await node(config, ['logs'], cluster().kubeconfig);
      expect(result.errors).toEqual([
        `error: node writer has no pod (besu-node-writer-0 in namespace ${SCALED}): npm run node -- start --stack testnet --node writer starts it`,
      ]);
      expect(result.code).toBe(1);
    });

    itWithCluster("status: the service and each companion read as no pod, never kubectl's error", async () => {
      const result = await node(config, ['status'], cluster().kubeconfig);
      expect(result.stdout).toMatch(/^ {2}service {2}no pod$/m);
      expect(result.stdout).toMatch(/^ {2}relay-signer {2}no pod$/m);
      expect(result.stdout).toMatch(/^ {2}disk {5}unavailable \(no pod\)$/m);
      expect(result.stdout).not.toMatch(/NotFound|Error from server/);
      expect(result.code).toBe(1);
    });

    itWithCluster('start: the StatefulSet runs one pod again, waited for until Ready', async () => {
      const result = await node(config, ['start'], cluster().kubeconfig);
      expect(result.errors).toEqual([]);
      expect(result.code).toBe(0);
      const pod = writerPod(SCALED);
      expect(await phaseWhenRunning(cluster(), pod)).toBe('Running');
    });
  });
});

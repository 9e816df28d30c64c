/**
 * Day-2 operations with the real kubectl against a real API server (testing/cluster/): the writer of the example
 * stack applied as the provider applies it, then `npm run node -- status|logs|restart|start|check` as an operator
 * runs them. The pods are kwok's (no container runs), so the node's JSON-RPC is the Besu stand-in on this machine's
 * loopback with the node's key, given as --rpc-url as an operator gives a port-forward, and every container's log is
 * the cluster's one log file. What a fake pod cannot show (a container not ready, a pod that is not Running) stays in
 * tests/tools/clusterOperations.test.ts, with a recorded kubectl.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { AWAITING_PERMISSIONING_RECOVERY } from '../../core/operations/health';
import { besuImportLine, RunningStandin, startBesuStandin } from '../../testing/besuStandin';
import { applyServerSide, kubernetesManifests } from '../../testing/cluster/manifests';
import { fieldOf, fieldWhen } from '../../testing/cluster/objects';
import { expectRunningStatus } from '../../testing/cluster/nodeCommand';
import { clusterForSuite } from '../../testing/cluster/suite';
import { KEY_ONE } from '../../testing/fixtures';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram } from '../../testing/program';
import { PROJECT_DIR, runNpmAsync } from '../../testing/run';
import { valuesFor } from '../../testing/values';
import { NETWORKS } from '../../core/catalog/networks';
import { IDENTITY_ANNOTATIONS, kubernetesNames } from '../../core/catalog/kubernetes';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(300_000);

const recorded = recordProgram();
const { cluster, itWithCluster } = clusterForSuite();
const NAMESPACE = 'operations';
const POD = 'besu-node-writer-0';
const values = valuesFor('testnet', 'writer', { namespace: NAMESPACE });
const enode = deriveIdentity(KEY_ONE, values.deploy.p2p.host, values.deploy.p2p.port).enode;
const NETWORK = NETWORKS['open-protestnet'];
const BOOTNODES = NETWORK.bootnodes.writer;
/** The writer and the network's bootnodes registered in the contract from the first block. */
const PERMISSIONED = [enode, ...BOOTNODES].map((each) => ({ enode: each, fromBlock: 0 }));
const work = workFolder('lacchain-cluster-ops-');
let standin: RunningStandin | undefined;

/** The CRI log lines kwok serves as every container's log. */
const criLines = (lines: string[]) => lines.map((line) => `${new Date().toISOString()} stdout F ${line}\n`).join('');

/**
 * The container's log as a running Besu's: its last block imported 2 s ago. Written again before each test, as Besu
 * keeps importing: written once, its last import aged past the check's limit (120 s) before the suite's later tests on
 * a machine twice as slow.
 */
const importingLog = () => fs.writeFileSync(cluster().containerLog, criLines([besuImportLine(30), besuImportLine(2)]));

/** An operator's environment for this cluster: its kubeconfig, and the real kubectl first on the PATH. */
const clusterEnv = () => ({ KUBECONFIG: cluster().kubeconfig, PATH: `${cluster().binDir}:${process.env.PATH}` });

async function node(...args: string[]) {
  const config = path.join(work, 'Pulumi.testnet.yaml');
  return runNpmAsync('node', [...args, '--stack', 'testnet', '--config', config, '--rpc-url', standin!.rpcUrl], {
    env: clusterEnv(),
  });
}

/** Waits until the stand-in's chain head is past `block` (a block every 2 s; 30 s at most) and returns the head. */
async function headPast(block: number): Promise<number> {
  let head = await standin!.head();
  for (let i = 0; i < 120 && head <= block; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    head = await standin!.head();
  }
  return head;
}

/** `text` matched literally in a regular expression. */
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const POD_REF = { kind: 'pod', name: POD, namespace: NAMESPACE };
const podUid = () => fieldOf(cluster(), POD_REF, '{.metadata.uid}');

/** Waits until the pod is a new one (not `previousUid`) and Running. */
async function runningAgain(previousUid: string) {
  const seen = await fieldWhen(cluster(), POD_REF, '{.metadata.uid} {.status.phase}', (value) => {
    const [uid, phase] = value.split(' ');
    return uid !== previousUid && phase === 'Running';
  });
  expect(seen).toMatch(/ Running$/);
}

beforeAll(async () => {
  if (itWithCluster === it.skip) return;
  const config = {
    'lacchain:network': 'open-protestnet',
    'lacchain:kubeContext': cluster().context,
    'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
  };
  fs.mkdirSync(path.join(work, 'values'));
  fs.writeFileSync(path.join(work, 'Pulumi.testnet.yaml'), yaml.dump({ config }));
  fs.writeFileSync(path.join(work, 'values', 'writer.yml'), yaml.dump(values));
  const declared = await declareProgram(
    recorded,
    'testnet',
    { ...config, 'lacchain:nodeKeys': { writer: KEY_ONE } },
    { 'values/writer.yml': values },
  );
  await applyServerSide(cluster(), kubernetesManifests(declared));
  standin = await startBesuStandin(KEY_ONE, values.deploy.p2p.host, values.deploy.p2p.port, {
    contract: NETWORK.nodesPermissioningContract,
    bootnodes: BOOTNODES,
  });
  standin.register(PERMISSIONED);
  await runningAgain('');
});

beforeEach(() => {
  if (itWithCluster !== it.skip) importingLog();
});

afterAll(() => standin?.stop());

describe('npm run node against a real API server', () => {
  itWithCluster(
    "status: the pod's phase and containers from the cluster, the node's answers from its RPC",
    async () => {
      expectRunningStatus(await node('status'), enode, ['relay-signer', 'ethstats']);
    },
  );

  itWithCluster('status --all: one row per node of the stack, and --json for scripts', async () => {
    const table = await node('status', '--all');
    expect(table.stderr).toBe('');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /^NODE +TYPE +PATH +RELEASE +SERVICE +PEERS +HEAD +BEHIND +PERMISSIONED +COMPANIONS$/m,
    );
    expect(table.stdout).toMatch(/^writer +writer +kubernetes +\S+ +Running +3 +\d+ +0 +yes +2\/2 up$/m);
    const json = await node('status', '--all', '--json');
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        node: 'writer',
        type: 'writer',
        path: 'kubernetes',
        running: true,
        peers: 3,
        permissioned: true,
      }),
    ]);
    expect((await node('status', '--json')).stderr).toMatch(/--json goes with --all/);
  });

  itWithCluster("check: healthy, the node's enode equal to the one annotated on its Service", async () => {
    const service = { kind: 'service', name: kubernetesNames('writer').service, namespace: NAMESPACE };
    const annotation = IDENTITY_ANNOTATIONS.enode.replace(/\./g, '\\.');
    expect(await fieldOf(cluster(), service, `{.metadata.annotations.${annotation}}`)).toBe(enode);
    const result = await node('check', '--window', '3');
    expect(result.stdout).toMatch(new RegExp(`^ *enode +ok +${escapeRegExp(enode)}$`, 'm'));
    expect(result.stdout).toMatch(/verdict: healthy/);
    expect(result.code).toBe(0);
  });

  describe("check asks the network's contract through the node's RPC: the three states", () => {
    afterEach(() => {
      standin!.register(PERMISSIONED);
      standin!.setState({});
    });

    itWithCluster('not yet permissioned: the contract refuses, the request is the fix', async () => {
      standin!.register(BOOTNODES.map((each) => ({ enode: each })));
      const result = await node('check', '--window', '3');
      expect(result.stdout).toMatch(
        /permissioning +FAIL +not yet permissioned \(at block \d+, allowed to connect to 0 of the network's 2 bootnodes\)/,
      );
      expect(result.stdout).toMatch(
        /fix: send the node's permissioning request \(pulumi stack output nodes --stack testnet --json: writer\.permissioningRequest\)/,
      );
      expect(result.stdout).toMatch(/peers +FAIL +0 peers/);
      // A restart cannot permission it: the recovery says to wait for the request, not to restart.
      expect(result.stdout.trimEnd().split('\n').pop()).toBe(AWAITING_PERMISSIONING_RECOVERY);
      expect(result.code).toBe(1);
      expect((await node('status', '--all')).stdout).toMatch(/^writer +writer +kubernetes .* no +2\/2 up$/m);
    });

    itWithCluster("permissioned, no peers: the causes, the pod's worker's address among them", async () => {
      standin!.setState({ peers: 0 });
      const result = await node('check', '--window', '3');
      expect(result.stdout).toMatch(
        /permissioning +ok +permissioned, no peers \(at block \d+, allowed to connect to 2 of/,
      );
      expect(result.stdout).toMatch(/p2p address +(ok|FAIL) .*worker /);
      expect(result.stdout).toMatch(/p2p tcp +(ok|FAIL) +TCP /);
      expect(result.stdout).toMatch(/p2p udp +(ok|FAIL) +UDP /);
      expect(result.code).toBe(1);
    });

    itWithCluster('permissioned and syncing, then in sync', async () => {
      standin!.setState({ syncing: true, blocksBehind: 40 });
      expect((await node('check', '--window', '3')).stdout).toMatch(/permissioning +ok +permissioned, syncing \(/);
      standin!.setState({});
      const result = await node('check', '--window', '3');
      expect(result.stdout).toMatch(/permissioning +ok +in sync \(/);
      expect(result.stdout).not.toMatch(/p2p tcp/); // with peers, the causes of none are not looked at
      expect(result.code).toBe(0);
    });

    itWithCluster(
      "syncing from an early head, registered later: permissioned at the network's head, left alone",
      async () => {
        // Approved at a block the node has not reached yet: the contract at its own head still refuses it.
        const head = await standin!.head();
        standin!.register([{ enode, fromBlock: head + 1000 }, ...BOOTNODES.map((each) => ({ enode: each }))]);
        standin!.setState({ syncing: true, blocksBehind: 5000 });
        const result = await node('check', '--window', '3', '--fix');
        expect(result.stdout).toMatch(
          /permissioning +ok +syncing \(block \d+ of \d+\): connected to \d+ peers, so permissioned at the network's head/,
        );
        expect(result.stdout).not.toMatch(/not yet permissioned/);
        expect(result.stdout).not.toMatch(/restart/);
      },
    );

    itWithCluster('permissioned after the pod started, no peers: a restart is due', async () => {
      const head = await standin!.head();
      standin!.register([{ enode, fromBlock: head + 1 }, ...BOOTNODES.map((each) => ({ enode: each }))]);
      expect(await headPast(head)).toBeGreaterThan(head); // the registration's block comes
      const result = await node('check', '--window', '3');
      expect(result.stdout).toMatch(/permissioning +ok +permissioned, no peers/);
      expect(result.stdout).toMatch(
        /restart +FAIL +due: the node was permissioned after its last start \(not yet at block \d+\)/,
      );
      expect(result.stdout).toMatch(/fix: npm run node -- check --stack testnet --node writer --fix/);
      expect(result.code).toBe(1);
    });
  });

  itWithCluster("check: an old last import in the container's log fails the log check", async () => {
    fs.writeFileSync(cluster().containerLog, criLines([besuImportLine(600)]));
    const started = Date.now();
    const result = await node('check', '--window', '3');
    // The age is the line's 600 s plus however long the check took to read it (18 s once, on a loaded machine).
    const took = Math.ceil((Date.now() - started) / 1000);
    const age = Number(result.stdout.match(/block imports +FAIL +last block import (\d+) s ago/)?.[1]);
    expect([age >= 600, age <= 600 + took + 1]).toEqual([true, true]);
    expect(result.code).toBe(1);
  });

  itWithCluster('restart: the pod is deleted and the StatefulSet runs a new one on the same worker', async () => {
    const before = await podUid();
    const result = await node('restart');
    expect(result.code).toBe(0);
    await runningAgain(before);
    expect(await fieldOf(cluster(), POD_REF, '{.spec.nodeName}')).toBe(values.deploy.workerName);
  });

  itWithCluster('start: a new pod, waited for until Ready', async () => {
    const before = await podUid();
    const result = await node('start');
    expect(result.code).toBe(0);
    expect(await podUid()).not.toBe(before);
    expect(await fieldOf(cluster(), POD_REF, '{.status.conditions[?(@.type=="Ready")].status}')).toBe('True');
  });

  itWithCluster("logs: Besu's container log streamed through the API server (kubectl logs -f)", async () => {
    const config = path.join(work, 'Pulumi.testnet.yaml');
    const child = spawn('npm', ['run', '--silent', 'node', '--', 'logs', '--stack', 'testnet', '--config', config], {
      cwd: PROJECT_DIR,
      env: { ...process.env, ...clusterEnv() },
      detached: true,
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    for (let i = 0; i < 120 && !out.includes('Imported #42'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // It follows the log until stopped, as kubectl logs -f does.
    expect(child.exitCode).toBeNull();
    process.kill(-child.pid!, 'SIGTERM');
    expect(out).toContain('Imported #42');
  });
});

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
import { giveIngress } from '../../testing/cluster/cloudStandin';
import { fieldOf, fieldWhen } from '../../testing/cluster/objects';
import { expectRunningStatus } from '../../testing/cluster/nodeCommand';
import { clusterForSuite } from '../../testing/cluster/suite';
import { KEY_ONE } from '../../testing/fixtures';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram } from '../../testing/program';
import { guardedEnv, PROJECT_DIR, runNpmAsync } from '../../testing/run';
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

/** The DNS name a cloud gave the Service in the DNS-name test: it resolves to nothing (a made-up name, never asked of DNS). */
const SERVICE_DNS_NAME = 'k8s-operati-besunode-0123456789.elb.us-east-1.amazonaws.com';

/**
 * An operator's environment for this cluster: its kubeconfig, the real kubectl first on the PATH, and the DNS name's
 * answer (testing/netGuard.js stands in for DNS: no name is asked of a DNS server).
 */
const clusterEnv = () => ({
  KUBECONFIG: cluster().kubeconfig,
  PATH: `${cluster().binDir}:${process.env.PATH}`,
  LACCHAIN_TEST_NAMES: JSON.stringify({ [SERVICE_DNS_NAME]: [] }),
});

async function node(...args: string[]) {
  const config = path.join(work, 'Pulumi.testnet.yaml');
  return runNpmAsync('node', [...args, '--stack', 'testnet', '--config', config, '--rpc-url', standin!.rpcUrl], {
    env: clusterEnv(),
  });
}

/**
 * `node(...args)` with each kubectl run it makes recorded: a kubectl before the real one on the PATH writes its
 * arguments, one run a line, then runs the real one. Its runs' arguments are `calls`.
 */
async function nodeCountingKubectl(...args: string[]) {
  const bin = path.join(work, 'counting-kubectl');
  const record = path.join(work, 'kubectl.calls');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(bin, 'kubectl'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >>"$KUBECTL_RECORD"\nexec ${path.join(cluster().binDir, 'kubectl')} "$@"\n`,
    { mode: 0o755 },
  );
  fs.rmSync(record, { force: true });
  const config = path.join(work, 'Pulumi.testnet.yaml');
  const result = await runNpmAsync(
    'node',
    [...args, '--stack', 'testnet', '--config', config, '--rpc-url', standin!.rpcUrl],
    { env: { ...clusterEnv(), PATH: `${bin}:${clusterEnv().PATH}`, KUBECTL_RECORD: record } },
  );
  const calls = fs.existsSync(record) ? fs.readFileSync(record, 'utf8').trimEnd().split('\n') : [];
  return { ...result, calls };
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
const SERVICE_REF = { kind: 'service', name: kubernetesNames('writer').service, namespace: NAMESPACE };
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
  // The test cluster's load balancer (kwok's stage) puts the Service on its static IP, which status and check read.
  await fieldWhen(
    cluster(),
    SERVICE_REF,
    '{.status.loadBalancer.ingress[0].ip}',
    (ip) => ip === values.deploy.publicIP,
  );
  // The enode's address (kept on this machine) forwards to its p2p layer, as the static IP to the pod: check probes
  // 60606 TCP and UDP there.
  standin = await startBesuStandin(
    KEY_ONE,
    values.deploy.p2p.host,
    values.deploy.p2p.port,
    { contract: NETWORK.nodesPermissioningContract, bootnodes: BOOTNODES },
    undefined,
    undefined,
    true,
  );
  standin.register(registered(PERMISSIONED));
  await standin.setPeers(3);
  await runningAgain('');
});

beforeEach(() => {
  if (itWithCluster !== it.skip) importingLog();
});

afterAll(() => standin?.stop());

/** What the contract holds: `nodes` and the plain peers that stand for the network's reachable nodes here. */
function registered(nodes: readonly { enode: string; fromBlock?: number }[]) {
  return [...nodes, ...standin!.peerEnodes.map((each) => ({ enode: each }))];
}

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

  itWithCluster(
    'status and check read the pod and the Service once each: the kubectl runs of one command',
    async () => {
      const status = await nodeCountingKubectl('status');
      expectRunningStatus(status, enode, ['relay-signer', 'ethstats']);
      const check = await nodeCountingKubectl('check', '--window', '3');
      expect(check.stdout).toMatch(/verdict: healthy/);
      const reads = (calls: string[], what: RegExp) => calls.filter((call) => what.test(call)).length;
      // status: the StatefulSet (reach), the pod, the disk (an exec), the Service.
      expect({ runs: status.calls.length, pod: reads(status.calls, / get pod /) }).toEqual({ runs: 4, pod: 1 });
      // check: the StatefulSet, the pod, the Service, the disk, the log.
      expect({
        runs: check.calls.length,
        pod: reads(check.calls, / get pod /),
        service: reads(check.calls, / get service /),
      }).toEqual({ runs: 5, pod: 1, service: 1 });
    },
  );

  itWithCluster("check: healthy, the node's enode equal to the one annotated on its Service", async () => {
    const service = { kind: 'service', name: kubernetesNames('writer').service, namespace: NAMESPACE };
    const annotation = IDENTITY_ANNOTATIONS.enode.replace(/\./g, '\\.');
    expect(await fieldOf(cluster(), service, `{.metadata.annotations.${annotation}}`)).toBe(enode);
    const result = await node('check', '--window', '3');
    expect(result.stdout).toMatch(new RegExp(`^ *enode +ok +${escapeRegExp(enode)}$`, 'm'));
    expect(result.stdout).toMatch(/verdict: healthy/);
    expect(result.code).toBe(0);
  });

  describe("the Service's address as the cloud gave it (the test's stand-in: another IP, then a DNS name)", () => {
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: SERVICE_REF.name, namespace: NAMESPACE } };
    const ip = values.deploy.p2p.host;
    afterAll(async () => {
      if (itWithCluster !== it.skip) await giveIngress(cluster(), service, [{ ip, ipMode: 'VIP' }]);
    });

    itWithCluster("the enode's IP: status says so", async () => {
      const result = await node('status');
      expect(result.stdout).toContain(`  address  ok: the Service is on ${ip}, the enode's IP\n`);
      expect(result.code).toBe(0);
    });

    itWithCluster('another IP: status and check fail, naming the value and the setting to fix', async () => {
      await giveIngress(cluster(), service, [{ ip: '200.10.20.99', ipMode: 'VIP' }]);
      const status = await node('status');
      expect(status.stdout).toContain(
        `  address  FAIL: the Service is on 200.10.20.99, not the enode's IP ${ip} (fix: values/writer.yml: deploy.publicIP, or deploy.loadBalancer.cloud for your cloud)`,
      );
      expect(status.code).toBe(1);
      const check = await node('check', '--window', '3');
      expect(check.stdout).toMatch(
        new RegExp(
          `^ {2}static ip +FAIL +the Service is on 200\\.10\\.20\\.99, not the enode's IP ${escapeRegExp(ip)}$`,
          'm',
        ),
      );
      expect(check.stdout).toMatch(
        /fix: values\/writer\.yml: deploy\.publicIP, or deploy\.loadBalancer\.cloud for your cloud/,
      );
      expect(check.stdout).toMatch(/verdict: unhealthy/);
      expect(check.code).toBe(1);
    });

    itWithCluster(
      "a DNS name (EKS without the aws setting): status and check fail, naming the cloud's setting",
      async () => {
        const name = SERVICE_DNS_NAME;
        await giveIngress(cluster(), service, [{ hostname: name }]);
        const status = await node('status');
        expect(status.stdout).toContain(
          `  address  FAIL: the Service has the DNS name ${name}, not the enode's IP ${ip} (cloud other) (fix: values/writer.yml: deploy.loadBalancer.cloud, your cluster's (aws: with eipAllocations))`,
        );
        expect(status.code).toBe(1);
        const check = await node('check', '--window', '3');
        expect(check.stdout).toMatch(
          new RegExp(`^ {2}static ip +FAIL +the Service has the DNS name ${escapeRegExp(name)}`, 'm'),
        );
        expect(check.code).toBe(1);
      },
    );
  });

  describe("check asks the network's contract through the node's RPC: the three states", () => {
    afterEach(async () => {
      standin!.register(registered(PERMISSIONED));
      standin!.setState({});
      await standin!.setPeers(3);
    });

    itWithCluster('not yet permissioned: the contract refuses, the request is the fix', async () => {
      standin!.register(registered(BOOTNODES.map((each) => ({ enode: each }))));
      await standin!.waitForPeers(0); // its peers dropped at its next block
      const result = await node('check', '--window', '3');
      expect(result.stdout).toMatch(
        /permissioning +FAIL +not yet permissioned \(at block \d+, allowed to connect to 0 of the network's 2 bootnodes\)/,
      );
      expect(result.stdout).toMatch(
        /fix: send the node's permissioning request \(pulumi stack output nodes --stack testnet --json: writer\.permissioningRequest\)/,
      );
      expect(result.stdout).toMatch(/peers +FAIL +0 peers/);
      // Its port answers from here (the enode's address forwards to the stand-in's real p2p layer): nothing else fails.
      const at = escapeRegExp(values.deploy.p2p.host);
      expect(result.stdout).toMatch(new RegExp(`p2p tcp +ok +TCP ${at}: open from this machine`));
      expect(result.stdout).toMatch(new RegExp(`p2p udp +ok +UDP ${at}: no refusal from this machine`));
      // A restart cannot permission it: the recovery says to wait for the request, not to restart.
      expect(result.stdout.trimEnd().split('\n').pop()).toBe(AWAITING_PERMISSIONING_RECOVERY);
      expect(result.code).toBe(1);
      expect((await node('status', '--all')).stdout).toMatch(/^writer +writer +kubernetes .* no +2\/2 up$/m);
    });

    itWithCluster("permissioned, no peers: the causes, the pod's worker's address among them", async () => {
      await standin!.setPeers(0);
      const result = await nodeCountingKubectl('check', '--window', '3');
      // The StatefulSet, the pod, the Service, the disk, the log, then the pod's clock and its worker's addresses.
      expect(result.calls).toHaveLength(7);
      expect(result.stdout).toMatch(
        /permissioning +ok +permissioned, no peers \(at block \d+, allowed to connect to 2 of/,
      );
      expect(result.stdout).toMatch(/p2p address +(ok|FAIL) .*worker /);
      // 60606 probed at the enode's address, which forwards to the node's p2p layer (on this machine): open.
      expect(result.stdout).toMatch(/p2p tcp +ok +TCP /);
      expect(result.stdout).toMatch(/p2p udp +ok +UDP /);
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
        standin!.register(
          registered([{ enode, fromBlock: head + 1000 }, ...BOOTNODES.map((each) => ({ enode: each }))]),
        );
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
      // Not in the contract: its peers dropped, it imports no block since (at the head it had then)
      standin!.register(registered(BOOTNODES.map((each) => ({ enode: each }))));
      await standin!.waitForPeers(0);
      const head = await standin!.head();
      standin!.register(registered([{ enode, fromBlock: head + 1 }, ...BOOTNODES.map((each) => ({ enode: each }))]));
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
      env: guardedEnv(clusterEnv()),
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

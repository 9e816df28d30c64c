/**
 * Day-2 operations on a Kubernetes node in the states a real cluster's fake pods cannot be put in (a pod that is not
 * Running, a container not ready or missing, a node whose RPC does not answer): a recorded kubectl on PATH answers as
 * the cluster would, and the health check runs against a real JSON-RPC endpoint (the Besu stand-in on loopback, given
 * as --rpc-url as an operator would give a port-forward). The operations against a real API server are in
 * tests/cluster/operations.test.ts.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { KEY_ONE } from '../../testing/fixtures';
import { PROJECT_DIR, runNpmAsync } from '../../testing/run';
import { addressFor, valuesFor } from '../../testing/values';
import { besuImportLine, RunningStandin, startBesuStandin } from '../../testing/besuStandin';
import { freePort } from '../../testing/ports';
import { writePodAnswer, writeServiceAnswer } from '../../testing/recordedKubectl';

jest.setTimeout(120_000);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-ops-'));
const record = path.join(work, 'kubectl.calls');
const answers = path.join(work, 'answers');
const enode = deriveIdentity(KEY_ONE, '190.113.0.10', 60606).enode;
let standin: RunningStandin;
let rpcUrl: string;
/** The cloud's answer: the Service on the node's static IP, the enode's. */
const STATIC_IP = [{ ip: addressFor('writer'), ipMode: 'VIP' }];

beforeAll(async () => {
  fs.mkdirSync(answers);
  // The pod Running, its containers (Besu, the proxy, the relay signer and the ethstats client) ready.
  writePodAnswer(answers, { besuImage: 'hyperledger/besu:23.4.1' });
  writeServiceAnswer(answers, enode, STATIC_IP);
  fs.writeFileSync(path.join(answers, 'log'), `${besuImportLine(30)}\n${besuImportLine(2)}\n`);
  fs.mkdirSync(path.join(work, 'project', 'values'), { recursive: true });
  fs.writeFileSync(
    path.join(work, 'project', 'Pulumi.testnet.yaml'),
    yaml.dump({
      config: {
        'lacchain:network': 'open-protestnet',
        'lacchain:kubeContext': 'prod',
        'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
      },
    }),
  );
  fs.writeFileSync(path.join(work, 'project', 'values', 'writer.yml'), yaml.dump(valuesFor('testnet', 'writer')));
  // The node's RPC: the Besu stand-in with the node key, advertising the node's p2p address.
  standin = await startBesuStandin(KEY_ONE, '190.113.0.10', 60606);
  rpcUrl = standin.rpcUrl;
});

afterAll(async () => {
  await standin?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

async function node(...args: string[]) {
  fs.rmSync(record, { force: true });
  const result = await runNpmAsync(
    'node',
    [...args, '--stack', 'testnet', '--config', path.join(work, 'project', 'Pulumi.testnet.yaml'), '--rpc-url', rpcUrl],
    {
      env: {
        PATH: `${path.join(PROJECT_DIR, 'tests/fixtures/recorded-kubectl')}:${process.env.PATH}`,
        KUBECTL_RECORD: record,
        KUBECTL_ANSWERS: answers,
      },
    },
  );
  const calls = fs.existsSync(record) ? fs.readFileSync(record, 'utf8').trimEnd().split('\n') : [];
  return { ...result, calls };
}

const POD = 'besu-node-writer-0 -n lacchain';

describe('cluster operations in states a fake pod cannot show', () => {
  it("status of a node whose RPC does not answer: the address named, the version from the pod's image", async () => {
    const config = path.join(work, 'project', 'Pulumi.testnet.yaml');
    const silent = `http://127.0.0.1:${await freePort()}/`;
    const result = await runNpmAsync(
      'node',
      ['status', '--stack', 'testnet', '--config', config, '--rpc-url', silent],
      {
        env: {
          PATH: `${path.join(PROJECT_DIR, 'tests/fixtures/recorded-kubectl')}:${process.env.PATH}`,
          KUBECTL_RECORD: record,
          KUBECTL_ANSWERS: answers,
        },
      },
    );
    expect(result.stdout).toContain("version  hyperledger/besu:23.4.1 (the pod's image)");
    expect(result.stdout).toContain(`peers    unavailable (net_peerCount: no answer from ${silent} (ECONNREFUSED))`);
  });

  it('check --fix on a pod that is not running: deletes it and checks again', async () => {
    writePodAnswer(answers, { phase: 'Pending', besuImage: 'hyperledger/besu:23.4.1' });
    const result = await node('check', '--fix', '--window', '3');
    writePodAnswer(answers, { besuImage: 'hyperledger/besu:23.4.1' });
    expect(result.stdout).toMatch(/service +FAIL +Pending/);
    expect(result.calls).toContain(`--context prod delete pod ${POD}`);
    expect(result.stdout).toMatch(/recovery: restart the node/);
    expect(result.code).toBe(1);
  });

  it("check: the writer's relay signer not ready fails the check", async () => {
    writePodAnswer(answers, { besuImage: 'hyperledger/besu:23.4.1', notReady: ['writer-relay-signer'] });
    const result = await node('check', '--window', '3');
    writePodAnswer(answers, { besuImage: 'hyperledger/besu:23.4.1' });
    expect(result.stdout).toMatch(/relay-signer +FAIL +not ready: required on this node, and not running/);
    // Where the key lives, before the verdicts.
    expect(result.stdout).toMatch(
      /^ {2}key +keyCustody stack: in the stack's state \(a Pulumi secret\), copied to the node$/m,
    );
    expect(result.stdout).toMatch(/verdict: unhealthy/);
    expect(result.code).toBe(1);
  });

  it('check: the monitoring client missing from the pod fails the check', async () => {
    writePodAnswer(answers, { besuImage: 'hyperledger/besu:23.4.1', without: ['writer-ethstats'] });
    const result = await node('check', '--window', '3');
    writePodAnswer(answers, { besuImage: 'hyperledger/besu:23.4.1' });
    expect(result.stdout).toMatch(/ethstats +FAIL +no such container: required on this node, and not running/);
    expect(result.code).toBe(1);
  });
});

describe('kubectl runs: the pod and the Service read once for all the questions of one command', () => {
  /** How many of `calls` read the pod, the Service, or anything else (the StatefulSet, the log, an exec, a worker). */
  const runs = (calls: string[]) => ({
    pod: calls.filter((call) => call.includes(` get pod ${POD} -o json`)).length,
    service: calls.filter((call) => call.includes(' get service besu-node-writer -n lacchain -o json')).length,
    all: calls.length,
  });

  it('status: the StatefulSet, the pod, the disk, the Service', async () => {
    const result = await node('status');
    expect(runs(result.calls)).toEqual({ pod: 1, service: 1, all: 4 });
    expect(result.stdout).toContain('  service  Running\n');
    expect(result.stdout).toContain('  relay-signer  ready\n');
  });

  it("check of a node with no peers: the StatefulSet, the pod, the Service, the disk, the log, the clock, the worker's addresses", async () => {
    const result = await node('check', '--window', '1');
    expect(runs(result.calls)).toEqual({ pod: 1, service: 1, all: 7 });
    expect(result.stdout).toMatch(/^ {2}enode +ok /m);
    expect(result.stdout).toMatch(/^ {2}peers +FAIL +0 peers/m);
  });
});

describe("the Service's static IP, as the cloud gave it (kubectl's status.loadBalancer.ingress)", () => {
  const withIngress = async (ingress: object[], ...args: string[]) => {
    writeServiceAnswer(answers, enode, ingress);
    try {
      return await node(...args);
    } finally {
      writeServiceAnswer(answers, enode, STATIC_IP);
    }
  };

  it("status: the enode's IP is ok", async () => {
    const result = await node('status');
    expect(result.stdout).toContain(`  address  ok: the Service is on ${addressFor('writer')}, the enode's IP\n`);
    expect(result.calls).toContain('--context prod get service besu-node-writer -n lacchain -o json');
  });

  it('status and check: another IP fails, naming the setting to fix', async () => {
    const status = await withIngress([{ ip: '200.10.20.99', ipMode: 'VIP' }], 'status');
    expect(status.stdout).toContain(
      `  address  FAIL: the Service is on 200.10.20.99, not the enode's IP ${addressFor('writer')} (fix: values/writer.yml: deploy.publicIP, or deploy.loadBalancer.cloud for your cloud)`,
    );
    expect(status.code).toBe(1);
    const check = await withIngress([{ ip: '200.10.20.99', ipMode: 'VIP' }], 'check', '--window', '1');
    expect(check.stdout).toMatch(/^ {2}static ip +FAIL +the Service is on 200\.10\.20\.99, not the enode's IP/m);
    expect(check.stdout).toMatch(
      /^ +fix: values\/writer\.yml: deploy\.publicIP, or deploy\.loadBalancer\.cloud for your cloud$/m,
    );
    expect(check.code).toBe(1);
  });

  it('status: a DNS name instead of the IP fails, naming the cloud setting', async () => {
    const result = await withIngress([{ hostname: 'writer-0123.elb.us-east-1.amazonaws.com' }], 'status');
    expect(result.stdout).toContain(
      `  address  FAIL: the Service has the DNS name writer-0123.elb.us-east-1.amazonaws.com, not the enode's IP ${addressFor('writer')} (cloud other) (fix: values/writer.yml: deploy.loadBalancer.cloud, your cluster's (aws: with eipAllocations))`,
    );
    expect(result.code).toBe(1);
  });
});

describe('errors', () => {
  it('a missing kubectl is a clear error', async () => {
    // A PATH with node, npm and a shell, and no kubectl.
    const bin = path.join(work, 'bin-without-kubectl');
    fs.mkdirSync(bin);
    for (const tool of ['node', 'npm', 'sh', 'env']) {
      const found = ['/usr/local/bin', '/usr/bin', '/bin', path.dirname(process.execPath)]
        .map((dir) => path.join(dir, tool))
        .find((file) => fs.existsSync(file));
      if (found) fs.symlinkSync(found, path.join(bin, tool));
    }
    const result = await runNpmAsync(
      'node',
      ['restart', '--stack', 'testnet', '--config', path.join(work, 'project', 'Pulumi.testnet.yaml')],
      { env: { PATH: bin } },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/kubectl is not installed or not on PATH/);
  });

  it('usage errors exit 2 with the allowed values', async () => {
    expect((await node('reboot')).code).toBe(2);
    const unknownNode = await node('status', '--node', 'validator');
    expect([unknownNode.code, unknownNode.stderr]).toEqual([
      2,
      expect.stringMatching(/--node: given "validator"; allowed: writer/),
    ]);
    const badWindow = await node('check', '--window', '0');
    expect([badWindow.code, badWindow.stderr]).toEqual([2, expect.stringMatching(/--window/)]);
    const otherNode = await node('status', '--rpc-url', 'validator=http://127.0.0.1:1/');
    expect([otherNode.code, otherNode.stderr]).toEqual([
      2,
      expect.stringMatching(
        /--rpc-url: given "validator=http:\/\/127.0.0.1:1\/"; allowed: URL or NODE=URL with NODE one of writer/,
      ),
    ]);
    const notUrl = await node('status', '--rpc-url', 'writer=localhost:4545');
    expect([notUrl.code, notUrl.stderr]).toEqual([2, expect.stringMatching(/allowed: an http:\/\/ or https:\/\/ URL/)]);
  });
});

/**
 * Day-2 operations on a Kubernetes node: the exact kubectl commands (a recorded kubectl on PATH, since no cluster
 * can run here), and the health check against a real JSON-RPC endpoint (the Besu stand-in on loopback, given as
 * --rpc-url as an operator would give a port-forward).
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { KEY_ONE } from '../../testing/fixtures';
import { PROJECT_DIR, runNpmAsync } from '../../testing/run';
import { valuesFor } from '../../testing/values';

jest.setTimeout(120_000);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-ops-'));
/** The pod's containers as kubectl reports their readiness: Besu, the proxy, the relay signer and the ethstats client. */
const CONTAINERS_READY = 'writer-besu=true\nwriter-nginx=true\nwriter-relay-signer=true\nwriter-ethstats=true\n';
const record = path.join(work, 'kubectl.calls');
const answers = path.join(work, 'answers');
const enode = deriveIdentity(KEY_ONE, '203.0.113.10', 60606).enode;
let standin: ChildProcess;
let rpcUrl: string;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function importLine(secondsAgo: number): string {
  const time = new Date(Date.now() - secondsAgo * 1000).toISOString().replace('T', ' ').replace('Z', '+00:00');
  return `${time} | EthScheduler-Workers-0 | INFO  | PersistBlockTask | Imported #42 / 0 tx / 0 om / 0 (0.0%) gas / (0xab) in 0.001s. Peers: 3`;
}

beforeAll(async () => {
  fs.mkdirSync(answers);
  fs.writeFileSync(path.join(answers, 'pod-phase'), 'Running');
  fs.writeFileSync(path.join(answers, 'pod-image'), 'hyperledger/besu:23.4.1');
  fs.writeFileSync(path.join(answers, 'containers'), CONTAINERS_READY);
  fs.writeFileSync(path.join(answers, 'service-enode'), enode);
  fs.writeFileSync(path.join(answers, 'log'), `${importLine(30)}\n${importLine(2)}\n`);
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
  const port = await freePort();
  const data = path.join(work, 'data');
  fs.mkdirSync(data);
  fs.writeFileSync(path.join(data, 'key'), KEY_ONE);
  fs.writeFileSync(
    path.join(work, 'config.toml'),
    [
      `data-path = "${data}"`,
      'p2p-host = "203.0.113.10"',
      'p2p-port = 60606',
      'rpc-http-enabled = true',
      'rpc-http-host = "127.0.0.1"',
      `rpc-http-port = ${port}`,
      'rpc-http-api = ["ETH", "NET", "WEB3"]',
      'discovery-enabled = false',
    ].join('\n'),
  );
  standin = spawn('python3', [
    path.join(PROJECT_DIR, 'tests/fixtures/besu-standin/lib/besu_standin.py'),
    `--config-file=${path.join(work, 'config.toml')}`,
  ]);
  rpcUrl = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    const up = await fetch(rpcUrl, {
      method: 'POST',
      body: '{"jsonrpc":"2.0","method":"net_enode","params":[],"id":1}',
    })
      .then(() => true)
      .catch(() => false);
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(() => {
  standin?.kill('SIGTERM');
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
const CONTAINERS = `--context prod get pod ${POD} -o jsonpath={range .status.containerStatuses[*]}{.name}={.ready}{"\\n"}{end}`;

describe('cluster operations use the seed commands with the names the program created', () => {
  it('logs: kubectl logs <pod> -c <container> -f -n <namespace>', async () => {
    const result = await node('logs');
    expect(result.code).toBe(0);
    expect(result.calls).toEqual(['--context prod logs besu-node-writer-0 -c writer-besu -f -n lacchain']);
  });

  it('restart: deletes the pod so the StatefulSet recreates it', async () => {
    const result = await node('restart');
    expect(result.code).toBe(0);
    expect(result.calls).toEqual([`--context prod delete pod ${POD}`]);
  });

  it('start: deletes the pod and waits for it to be ready', async () => {
    const result = await node('start');
    expect(result.code).toBe(0);
    expect(result.calls).toEqual([
      `--context prod delete pod ${POD}`,
      `--context prod wait --for=condition=Ready pod/${POD} --timeout=300s`,
    ]);
  });

  it('status: the pod phase, peers, block, version and enode', async () => {
    const result = await node('status');
    expect(result.code).toBe(0);
    expect(result.calls).toEqual([`--context prod get pod ${POD} -o jsonpath={.status.phase}`, CONTAINERS]);
    expect(result.stdout).toMatch(/service {2}Running/);
    expect(result.stdout).toMatch(/relay-signer {2}ready/);
    expect(result.stdout).toMatch(/ethstats {2}ready/);
    expect(result.stdout).toMatch(/peers {4}3/);
    expect(result.stdout).toContain(`enode    ${enode}`);
  });

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

  it('check: healthy, comparing the node with the enode annotated on its Service', async () => {
    const result = await node('check', '--window', '3');
    expect(result.calls.sort()).toEqual(
      [
        `--context prod get pod ${POD} -o jsonpath={.status.phase}`,
        CONTAINERS,
        `--context prod get service besu-node-writer -n lacchain -o jsonpath={.metadata.annotations.lacchain\\.net/enode}`,
        `--context prod logs besu-node-writer-0 -c writer-besu --tail=200 -n lacchain`,
      ].sort(),
    );
    expect(result.stdout).toMatch(/verdict: healthy/);
    expect(result.code).toBe(0);
  });

  it('check --fix on a pod that is not running: deletes it and checks again', async () => {
    fs.writeFileSync(path.join(answers, 'pod-phase'), 'Pending');
    const result = await node('check', '--fix', '--window', '3');
    fs.writeFileSync(path.join(answers, 'pod-phase'), 'Running');
    fs.writeFileSync(path.join(answers, 'pod-image'), 'hyperledger/besu:23.4.1');
    expect(result.stdout).toMatch(/service +FAIL +Pending/);
    expect(result.calls).toContain(`--context prod delete pod ${POD}`);
    expect(result.stdout).toMatch(/recovery: restart the node/);
    expect(result.code).toBe(1);
  });

  it("check: the writer's relay signer not ready fails the check", async () => {
    fs.writeFileSync(
      path.join(answers, 'containers'),
      CONTAINERS_READY.replace('writer-relay-signer=true', 'writer-relay-signer=false'),
    );
    const result = await node('check', '--window', '3');
    fs.writeFileSync(path.join(answers, 'containers'), CONTAINERS_READY);
    expect(result.stdout).toMatch(/relay-signer +FAIL +not ready: required on this node, and not running/);
    expect(result.stdout).toMatch(/verdict: unhealthy/);
    expect(result.code).toBe(1);
  });

  it('check: the monitoring client missing from the pod fails the check', async () => {
    fs.writeFileSync(path.join(answers, 'containers'), CONTAINERS_READY.replace('writer-ethstats=true\n', ''));
    const result = await node('check', '--window', '3');
    fs.writeFileSync(path.join(answers, 'containers'), CONTAINERS_READY);
    expect(result.stdout).toMatch(/ethstats +FAIL +no such container: required on this node, and not running/);
    expect(result.code).toBe(1);
  });

  it('check: an old last import in the log fails the log check', async () => {
    fs.writeFileSync(path.join(answers, 'log'), `${importLine(600)}\n`);
    const result = await node('check', '--window', '3');
    fs.writeFileSync(path.join(answers, 'log'), `${importLine(2)}\n`);
    expect(result.stdout).toMatch(/block imports +FAIL +last block import 60\d s ago/);
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
  });
});

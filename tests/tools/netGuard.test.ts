/**
 * testing/netGuard.js, which every operator's command a test runs carries (testing/run.ts): a TCP connection, a UDP
 * datagram or a DNS lookup that would leave this machine ends the command loudly, and runNpm then throws; loopback
 * and the test stacks' public addresses (routed to this machine, testing/testNetworks.ts) go as usual.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { guardedEnv, PROJECT_DIR, runNpm } from '../../testing/run';
import { valuesFor } from '../../testing/values';
import { testPublicIp } from '../../testing/fixtures';
import { keepTestPublicNetworkHere } from '../../testing/testNetworks';
import { operatorStackFile } from '../../testing/nodeTool';
import { writePodAnswer } from '../../testing/recordedKubectl';

/** A documentation address (RFC 5737): routed out of this machine's default route, never a test network's. */
const OUTSIDE = '198.51.100.7';

/** Runs `script` in Node under the guard (as a test's operator command runs): its exit code and stderr. */
function guarded(script: string, env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync('node', ['-e', script], { env: guardedEnv(env), encoding: 'utf8', timeout: 20_000 });
  return { code: result.status, stderr: result.stderr.trim() };
}

const tcp = (host: string) =>
  `require('net').connect({ host: '${host}', port: 60606 }).on('error', (e) => console.error(e.code)).on('connect', () => console.error('open'))`;
const udp = (host: string) =>
  `const s = require('dgram').createSocket('udp4'); s.send('x', 60606, '${host}', () => s.close()); console.error('sent')`;
const lookup = (name: string) =>
  `require('dns').promises.lookup('${name}', { all: true, family: 4 }).then((a) => console.error(JSON.stringify(a)), (e) => console.error(e.code))`;

describe('the test network guard', () => {
  beforeAll(() => keepTestPublicNetworkHere());

  it('refuses a TCP connection, a UDP datagram and a DNS lookup that would leave this machine, loudly', () => {
    expect(guarded(tcp(OUTSIDE))).toEqual({
      code: 97,
      stderr: expect.stringMatching(
        new RegExp(
          `^test network guard: refused a TCP connection to port 60606 of ${OUTSIDE.replace(/\./g, '\\.')} \\(routed out of \\S+`,
        ),
      ),
    });
    expect(guarded(udp(OUTSIDE))).toEqual({
      code: 97,
      stderr: expect.stringMatching(/^test network guard: refused a UDP datagram to 198\.51\.100\.7 /),
    });
    expect(guarded(lookup('k8s-made-up.elb.us-east-1.amazonaws.com'))).toEqual({
      code: 97,
      stderr: expect.stringMatching(
        /^test network guard: refused a DNS lookup of k8s-made-up\.elb\.us-east-1\.amazonaws\.com:/,
      ),
    });
  });

  it("lets loopback and the test stacks' public addresses (kept on this machine) through, and answers a test's names", () => {
    expect(guarded(tcp('127.0.0.1'))).toEqual({ code: 0, stderr: 'ECONNREFUSED' });
    expect(guarded(tcp(testPublicIp(10)))).toEqual({ code: 0, stderr: 'ECONNREFUSED' });
    expect(guarded(udp(testPublicIp(10)))).toEqual({ code: 0, stderr: 'sent' });
    expect(guarded(lookup('localhost'))).toEqual({ code: 0, stderr: '[{"address":"127.0.0.1","family":4}]' });
    const names = {
      LACCHAIN_TEST_NAMES: JSON.stringify({ 'lb.example.org': [testPublicIp(10)], 'gone.example.org': [] }),
    };
    expect(guarded(lookup('lb.example.org'), names)).toEqual({
      code: 0,
      stderr: `[{"address":"${testPublicIp(10)}","family":4}]`,
    });
    expect(guarded(lookup('gone.example.org'), names)).toEqual({ code: 0, stderr: 'ENOTFOUND' });
  });

  it("runNpm throws on the guard's refusal: a test cannot pass with a call that would have left the machine", () => {
    // A Kubernetes node's status, kubectl recorded, its RPC given at an address outside the test networks.
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-guard-'));
    try {
      const answers = path.join(work, 'answers');
      fs.mkdirSync(answers);
      writePodAnswer(answers);
      fs.mkdirSync(path.join(work, 'values'));
      const config = operatorStackFile(work, {
        'lacchain:network': 'open-protestnet',
        'lacchain:kubeContext': 'prod',
        'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
      });
      fs.writeFileSync(path.join(work, 'values', 'writer.yml'), yaml.dump(valuesFor('testnet', 'writer')));
      const status = () =>
        runNpm('node', ['status', '--stack', 'testnet', '--config', config, '--rpc-url', `http://${OUTSIDE}:8545/`], {
          env: {
            PATH: `${path.join(PROJECT_DIR, 'tests/fixtures/recorded-kubectl')}:${process.env.PATH}`,
            KUBECTL_RECORD: path.join(work, 'kubectl.calls'),
            KUBECTL_ANSWERS: answers,
          },
        });
      expect(status).toThrow(`test network guard: refused a TCP connection to port 8545 of ${OUTSIDE}`);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});

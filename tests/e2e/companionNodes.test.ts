/**
 * A validator on mainnet-omega and a bootnode on open-protestnet, each deployed on a real Debian host of its own
 * (the writer on open-protestnet is sshNode.test.ts): every step as `pulumi up` declares it, run over real SSH, and
 * each node's companions running under systemd beside it: the validator's rotation client and both nodes' monitoring
 * client. Besu, the rotation client, the monitoring client's image and the network's monitoring server are stand-ins
 * (test fixtures); systemd, podman, the registry protocol and the scripts are real.
 */
import { DEFAULT_NODE_HOME } from '../../core/catalog/defaults';
import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import * as os from 'os';
import * as path from 'path';
import { ETHSTATS, ROTATION_VALIDATOR } from '../../core/catalog/companions';
import { NETWORKS, NetworkName, StackName } from '../../core/catalog/networks';
import { PORTS } from '../../core/catalog/ports';
import type { NodeType } from '../../core/catalog/nodeTypes';
import { settle } from '../../tools/recording/engine';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram } from '../../testing/program';
import { startTestHost, TestHost } from '../../testing/host/testHost';
import { packagesInstalledDisk } from '../../testing/host/packagesDisk';
import { connectsAs, withLoopbackListener } from '../../testing/host/loopbackProbe';
import type { FileServer } from '../../testing/host/fileServer';
import type { EthstatsServer } from '../../testing/ethstatsServer';
import { MonitoringStandins, startMonitoringStandins } from '../../testing/monitoringStandins';
import { hostsPossible, hostSuite } from '../../testing/hostSuite';
import { packStandinReleases, startReleaseServer } from '../../testing/standinReleases';
import { remoteCommands as commands, RemoteStep, runRemoteSteps } from '../../testing/replay';
import { sshNodeStack } from '../../testing/sshStacks';
import { requireTestHosts } from '../../testing/releaseHost';

const recorded = recordProgram();

/** A vote for a new validator, as an attacker would send it to a validator's RPC. */
const VOTE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'ibft_proposeValidatorVote',
  params: ['0x7e5f4552091a69125d5dfcb7b8c2659029395bdf', true],
});

/** POSTs the vote from this machine (outside the host) to a port of the host: its answer, or the connection's error. */
function voteFromOutside(ip: string, port: number, tls: boolean): Promise<string> {
  return new Promise((resolve) => {
    const request = (tls ? https : http).request(
      { host: ip, port, method: 'POST', path: '/', timeout: 5000, rejectUnauthorized: false },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve(`HTTP ${response.statusCode} ${body}`));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    request.setHeader('content-type', 'application/json');
    request.end(VOTE);
  });
}
const suite = hostSuite('SSH end-to-end tests of the companions');
jest.setTimeout(15 * 60 * 1000);

const VERSION = '23.4.1';
/** The node home: the catalog's default, as the stacks under test leave it. */
const HOME = DEFAULT_NODE_HOME;

/** The nodes deployed, one host each. */
const CASES: { typenode: NodeType; stack: StackName; network: NetworkName; index: number }[] = [
  { typenode: 'validator', stack: 'mainnet', network: 'mainnet-omega', index: 44 },
  { typenode: 'bootnode', stack: 'testnet', network: 'open-protestnet', index: 45 },
];

type Case = (typeof CASES)[number];

/** A node deployed on its host, with what its tests reach. */
interface Deployed {
  host: TestHost;
  files: FileServer;
  standins: MonitoringStandins;
  work: string;
  enode: string;
}

/**
 * Boots the case's host and declares its node as `pulumi up` declares it: the steps to run there. (Declared one case
 * at a time: the declarations share one recording of the program.)
 */
async function declare({ typenode, stack, network, index }: Case, deployed: Partial<Deployed>) {
  deployed.work = fs.mkdtempSync(path.join(os.tmpdir(), `lacchain-e2e-${typenode}-`));
  await packStandinReleases([VERSION], deployed.work);
  const host = (deployed.host = await startTestHost(`co-${typenode.slice(0, 4)}`, index, {
    base: await packagesInstalledDisk(),
  }));
  const files = (deployed.files = await startReleaseServer(host, deployed.work));
  const standins = (deployed.standins = await startMonitoringStandins(host, deployed.work));
  const declared = await declareProgram(
    recorded,
    stack,
    sshNodeStack(host, {
      typenode,
      network,
      version: VERSION,
      releaseBaseUrl: files.url,
      releaseDir: deployed.work,
      nodeName: `e2e-${typenode}`,
      dnsName: `${typenode}.e2e.test`,
      ethstats: standins.ethstats,
    }),
    {},
  );
  deployed.enode = (await settle(declared.outputs.nodes[typenode].enode)).value as string;
  return commands(declared);
}

/** The nodes, by type: deployed at once, each on its own host (their steps wait on their machines, not the cores). */
const nodes = new Map<string, Partial<Deployed>>(CASES.map((c) => [c.typenode, {}]));

beforeAll(async () => {
  if (!hostsPossible()) return;
  await requireTestHosts();
  const steps: RemoteStep[][] = [];
  for (const c of CASES) steps.push(await declare(c, nodes.get(c.typenode)!));
  // The steps of both run at once, each on its own host.
  await Promise.all(CASES.map((c, i) => runRemoteSteps(nodes.get(c.typenode)!.host!, steps[i])));
});

afterAll(async () => {
  for (const { files, standins, host, work } of nodes.values()) {
    await files?.close();
    await standins?.close();
    await host?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  }
});

suite.each(CASES)('a $typenode on $network, deployed with its companions', ({ typenode, network }) => {
  let host: TestHost;
  let monitor: EthstatsServer;
  let enode: string;
  const nodeName = `e2e-${typenode}`;

  const sh = async (command: string) => (await host.ssh(command, { timeoutMs: 60_000 })).stdout.trim();
  /**
   * Waits (30 s at most) until `unit` is active with a main process other than `not`, and returns its pid; throws,
   * naming the unit's state, when it is not.
   */
  async function runningPid(unit: string, not = ''): Promise<string> {
    for (let i = 0; i < 60; i++) {
      const pid = await sh(`systemctl is-active --quiet ${unit} && systemctl show -p MainPID --value ${unit}`);
      if (/^[1-9]\d*$/.test(pid) && pid !== not) return pid;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const state = await sh(`systemctl show -p ActiveState,SubState,MainPID ${unit} | tr '\\n' ' '`);
    throw new Error(`${unit} is not running${not ? ` a process other than ${not}` : ''} after 30 s: ${state}`);
  }
  /** The node's own answer to `net_enode`, asked on the machine's loopback. */
  const answeredEnode = async () =>
    JSON.parse(
      await sh(
        `curl -s -H 'content-type: application/json' --data '{"jsonrpc":"2.0","method":"net_enode","params":[],"id":1}' http://127.0.0.1:${PORTS.rpcHttp}/`,
      ),
    ).result;

  beforeAll(() => {
    const deployed = nodes.get(typenode)!;
    if (!deployed.host || !deployed.standins || deployed.enode === undefined) {
      throw new Error(`the ${typenode} was not deployed`);
    }
    ({ host, enode } = deployed as Deployed);
    ({ monitor } = deployed.standins);
  });

  it('runs the node, which answers with the identity of the stack', async () => {
    expect(await sh('systemctl is-active besu')).toBe('active');
    expect(await answeredEnode()).toBe(enode);
  });

  it("registers the node's name on the network's monitoring server, and keeps running it", async () => {
    const unit = `besu-${ETHSTATS.name}`;
    expect(await sh(`systemctl is-enabled ${unit}`)).toBe('enabled');
    const pid = await runningPid(unit);
    for (let i = 0; i < 60 && !monitor.messages.some((m) => m.topic === 'login'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(monitor.registered().has(nodeName)).toBe(true);
    expect(monitor.messages.find((m) => m.topic === 'registerNode')?.payload).toEqual({
      accountEmail: 'ops@example.org',
      nodeName,
    });
    await sh(`kill -9 ${pid}`);
    // Started again: runningPid throws when no other process runs the unit within its wait.
    await runningPid(unit, pid);
  });

  it('lets no vote in from outside: 4545 and 443 closed to the outside, IBFT only on the loopback', async () => {
    for (const [port, tls] of [
      [PORTS.rpcHttp, false],
      [PORTS.reverseProxyHttps, true],
    ] as const) {
      expect(await voteFromOutside(host.ip, port, tls)).toBe('ECONNREFUSED');
    }
    // Inside the machine the node's RPC has IBFT enabled, for a validator's rotation client: Besu does not answer
    // -32604 "Method not enabled" (the stand-in answers it does not simulate the vote).
    const local = await sh(
      `curl -s -H 'content-type: application/json' --data '${VOTE}' http://127.0.0.1:${PORTS.rpcHttp}/`,
    );
    expect(JSON.parse(local).error?.code).not.toBe(-32604);
  });

  it("runs the monitoring client as a user of its own, on Besu's WebSocket, which no other user reaches", async () => {
    await runningPid(`besu-${ETHSTATS.name}`);
    // The unit's main process is podman's (restarted by the test before); the client in its container starts after it.
    let user = '';
    for (let i = 0; i < 120 && user === ''; i++) {
      user = await sh('ps -o user= -C ethstats-cli.js');
      if (user === '') await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(user).toBe(ETHSTATS.systemUser);
    const connects = (user: string, port: number) => connectsAs(sh, user, port);
    // (No relay signer runs on these nodes: its fence, which keeps this user off 9001, is checked on the writer in
    // sshNode.test.ts.)
    // Besu's WebSocket has no authentication: only the companions' users (and root) reach it.
    await withLoopbackListener(sh, PORTS.rpcWs, async () => {
      expect(await connects(ETHSTATS.systemUser, PORTS.rpcWs)).toBe('reaches');
      expect(await connects('nobody', PORTS.rpcWs)).toBe('refused');
    });
    expect(await sh('nft list tables')).toContain('table inet lacchain_besu_websocket');
  });

  it('runs the rotation client on a validator only, configured for its network, unprivileged', async () => {
    const unit = `besu-${ROTATION_VALIDATOR.name}`;
    const dir = `${HOME}/companions/${ROTATION_VALIDATOR.name}`;
    if (typenode !== 'validator') {
      expect(await sh(`systemctl list-unit-files ${unit}.service | grep -c ${unit} || true`)).toBe('0');
      return;
    }
    const pid = await runningPid(unit);
    expect(await sh(`ps -o user= -p ${pid}`)).toBe('besu');
    const contract = NETWORKS[network].validatorRotationContract;
    expect(await sh(`cat ${dir}/config.toml`)).toContain(`contractAddress = "${contract}"`);
    // It read the key and reached Besu's RPC (the stand-in says so in its log, without the key).
    let log = '';
    for (let i = 0; i < 60 && !log.includes('key read'); i++) {
      log = await sh(`cat ${dir}/log/idbServiceLog.log 2>/dev/null || true`);
      if (!log.includes('key read')) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(log).toContain(`network ${NETWORKS[network].networkId}, rotation contract ${contract}`);
    expect(log).not.toContain((await sh(`cat ${HOME}/data/key`)).slice(2));
    await sh(`kill -9 ${pid}`);
    // Started again: runningPid throws when no other process runs the unit within its wait.
    await runningPid(unit, pid);
  });
});

/**
 * RPC access and authentication end to end, on a real Debian host: a writer with `lacchain:rpc` exposure tls-only
 * and password authentication, provisioned by running the program's recorded remote commands over real SSH (as
 * sshNode.test.ts does). Checks, from outside and on the machine: an unauthenticated call is refused (401), POST
 * /login gives a token that works, the writer's plain port 80 takes no login or token (every request is redirected to
 * https on 443 with 308; a login or token sent there is refused with 403), a disallowed API answers "Method not enabled", a Host outside the allowlist is refused by
 * nginx (443, 80) and by Besu (4545), 4545 is not reachable from outside, health endpoints answer, the proxy's rate
 * limit answers 429, and nginx accepts its configuration.
 */
import { DEFAULT_NODE_HOME } from '../../core/catalog/defaults';
import { CREDENTIALS_IN_CLEAR } from '../../core/proxy/nginxConf';
import { COMPANIONS_OFF } from '../../testing/fixtures';
import * as http from 'http';
import * as https from 'https';
import * as net from 'net';
import { settle } from '../../tools/recording/engine';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram, Declared } from '../../testing/program';
import { TestHost } from '../../testing/host/testHost';
import type { FileServer } from '../../testing/host/fileServer';
import {
  changedCommands,
  permittedBeforeStart,
  remoteCommands as commands,
  runRemoteStep,
  runRemoteSteps,
} from '../../testing/replay';
import { hostSuite, progress } from '../../testing/hostSuite';
import { sshWriterStack } from '../../testing/sshStacks';
import { permissioned, registerOnHost } from '../../testing/permissioning';
import { startReleaseHost, stopReleaseHost } from '../../testing/releaseHost';

const recorded = recordProgram();
const suite = hostSuite('RPC access end-to-end tests');
jest.setTimeout(15 * 60 * 1000);

const VERSION = '23.4.1';
const NODE = 'writer';
/** The node home: the catalog's default, as the stacks under test leave it. */
const HOME = DEFAULT_NODE_HOME;
const USER = 'dapp';
const PASSWORD = 'e2e rpc password 1';
const OUTSIDE_HOST = 'evil.example.org';

interface Answer {
  status?: number;
  /** The Location header of a redirect. */
  location?: string;
  body: string;
}

/** One HTTP(S) request from this machine (outside the host). */
function request(
  port: number,
  options: { method?: string; path?: string; host?: string; token?: string; body?: string },
): Promise<Answer> {
  const secure = port === 443;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.host) headers.host = options.host;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const call = (secure ? https : http).request(
      {
        host: target,
        port,
        method: options.method ?? 'POST',
        path: options.path ?? '/',
        headers,
        ...(secure ? { rejectUnauthorized: false, servername: undefined } : {}),
        agent: false,
      },
      (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode, location: response.headers.location, body }));
      },
    );
    call.setTimeout(10_000, () => call.destroy(new Error(`no answer on ${port} within 10 s`)));
    call.on('error', reject);
    call.end(options.body);
  });
}
let target = '';

const rpcBody = (method: string) => JSON.stringify({ jsonrpc: '2.0', method, params: [], id: 1 });

suite('RPC access and authentication on a real host', () => {
  let host: TestHost;
  let files: FileServer;
  let work: string;
  let declared: Declared;
  let enode: string;

  const sh = async (command: string) => {
    progress(`ssh: ${command.slice(0, 100)}`);
    return (await host.ssh(command, { timeoutMs: 60_000 })).stdout.trim();
  };
  /** curl on the machine itself: status line then body. */
  const local = async (args: string) => sh(`curl -s -w '\\n%{http_code}' ${args}`);

  function stack() {
    return {
      ...sshWriterStack(host, {
        version: VERSION,
        releaseBaseUrl: files.url,
        releaseDir: work,
        nodeName: 'e2e-rpc-writer',
        dnsName: 'rpc.e2e.test',
        node: NODE,
      }),
      'lacchain:rpc': {
        exposure: 'tls-only',
        authentication: { method: 'password', users: [{ name: USER }] },
        proxy: { requestsPerSecond: 2, burst: 4 },
      },
      'lacchain:rpcPasswords': { [USER]: PASSWORD } as Record<string, string>,
      // The companions call Besu's RPC without credentials: with authentication on they are off.
      'lacchain:companions': COMPANIONS_OFF,
    };
  }

  beforeAll(async () => {
    ({ host, files, work } = await startReleaseHost('rpcauth', 43, [VERSION], {
      packagesInstalled: true,
      workPrefix: 'lacchain-e2e-rpc-',
    }));
    target = host.ip;
    declared = await declareProgram(recorded, 'testnet', stack(), {});
    enode = (await settle(declared.outputs.nodes[NODE].enode)).value as string;
    // Registered in the network's contract (the stand-in's registry), as a node that serves is, before its first
    // start: it has its real peer (the host's network peer) at once, and its readiness says UP (90 s at most).
    const permit = () =>
      registerOnHost(
        host,
        `${DEFAULT_NODE_HOME}/data`,
        permissioned(enode, 'open-protestnet', 'writer', [host.networkPeer]),
      );
    await runRemoteSteps(host, commands(declared), permittedBeforeStart(NODE, permit));
    for (let i = 0; i < 180; i++) {
      if ((await local(`-H 'Host: localhost' http://127.0.0.1:4545/readiness`)).endsWith('\n200')) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  });

  afterAll(() => stopReleaseHost({ files, host, work }));

  /** A token from POST /login through the TLS proxy, after the rate limit's window has passed. */
  const login = async (password = PASSWORD) => {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    return request(443, { path: '/login', body: JSON.stringify({ username: USER, password }) });
  };

  it('writes the credentials file (bcrypt, 0600, the service user) and binds Besu to 127.0.0.1 only', async () => {
    expect(await sh(`stat -c '%U:%G %a' ${HOME}/rpc-credentials.toml`)).toBe('besu:besu 600');
    expect(await sh(`grep -c '^password = "\\$2b\\$10\\$' ${HOME}/rpc-credentials.toml`)).toBe('1');
    expect(await sh(`grep -c '${PASSWORD}' ${HOME}/rpc-credentials.toml || true`)).toBe('0');
    expect(await sh(`grep '^rpc-http-host' ${HOME}/config.toml`)).toBe('rpc-http-host = "127.0.0.1"');
    expect(await sh('nginx -t 2>&1 | tail -n 1')).toMatch(/test is successful/);
    const outside = await new Promise<string>((resolve) => {
      const socket = net.connect({ host: host.ip, port: 4545 });
      socket.setTimeout(5000, () => (socket.destroy(), resolve('timeout')));
      socket.on('connect', () => (socket.end(), resolve('connected')));
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    expect(outside).toBe('ECONNREFUSED');
  });

  it('the start check and the day-2 methods work without a token (exempt), the others do not', async () => {
    const exempt = await local(
      `-H 'Host: localhost' -H 'Content-Type: application/json' --data '${rpcBody('net_enode')}' http://127.0.0.1:4545/`,
    );
    expect(JSON.parse(exempt.split('\n')[0]).result).toBe(enode);
    const refused = await local(
      `-H 'Host: localhost' -H 'Content-Type: application/json' --data '${rpcBody('eth_chainId')}' http://127.0.0.1:4545/`,
    );
    expect(refused.split('\n')[1]).toBe('401');
  });

  it('refuses an unauthenticated call through the TLS proxy with HTTP 401', async () => {
    const answer = await request(443, { body: rpcBody('eth_chainId') });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body).error.code).toBe(-40100);
  });

  it('gives a token for the password on POST /login, refuses a wrong one, and the token works', async () => {
    const wrong = await login('not the password!');
    expect(wrong.status).toBe(401);
    const answer = await login();
    expect(answer.status).toBe(200);
    const token = JSON.parse(answer.body).token as string;
    expect(token).toBeTruthy();
    const call = await request(443, { body: rpcBody('eth_chainId'), token });
    expect(call.status).toBe(200);
    expect(JSON.parse(call.body).result).toMatch(/^0x[0-9a-f]+$/);
  });

  it("takes no login or token on the writer's plain port 80: they are refused (403), anything else redirected (308)", async () => {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const token = JSON.parse((await login()).body).token as string;
    const loginOn80 = await request(80, {
      path: '/login',
      host: host.ip,
      body: JSON.stringify({ username: USER, password: PASSWORD }),
    });
    // Credentials that crossed the network in clear are refused, not redirected: the client notices.
    expect([loginOn80.status, loginOn80.location]).toEqual([CREDENTIALS_IN_CLEAR.status, undefined]);
    expect(JSON.parse(loginOn80.body).error.code).toBe(CREDENTIALS_IN_CLEAR.code);
    expect(JSON.parse(loginOn80.body)).not.toHaveProperty('token');
    const withToken = await request(80, { body: rpcBody('net_enode'), host: host.ip, token });
    expect([withToken.status, withToken.location]).toEqual([CREDENTIALS_IN_CLEAR.status, undefined]);
    expect(withToken.body).not.toContain(enode);
    const plain = await request(80, { body: rpcBody('net_enode'), host: host.ip });
    expect([plain.status, plain.location]).toEqual([308, `https://${host.ip}/`]);
    // The allowlisted DNS name keeps its name in the redirect.
    const named = await request(80, { method: 'GET', path: '/readiness', host: 'rpc.e2e.test' });
    expect([named.status, named.location]).toEqual([308, 'https://rpc.e2e.test/readiness']);
  });

  it('answers "Method not enabled" for an API that is not on (ADMIN), even with a token', async () => {
    const token = JSON.parse((await login()).body).token as string;
    const answer = await request(443, { body: rpcBody('admin_peers'), token });
    expect(JSON.parse(answer.body).error).toEqual({ code: -32604, message: 'Method not enabled' });
  });

  it('refuses a Host outside the allowlist: nginx on 443 and 80, Besu on 4545', async () => {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    for (const port of [443, 80]) {
      const answer = await request(port, { body: rpcBody('net_enode'), host: OUTSIDE_HOST });
      expect({ port, status: answer.status }).toEqual({ port, status: 403 });
      expect(answer.body).not.toContain('enode');
    }
    const besu = await local(
      `-H 'Host: ${OUTSIDE_HOST}' -H 'Content-Type: application/json' --data '${rpcBody('net_enode')}' http://127.0.0.1:4545/`,
    );
    expect(besu.split('\n')).toEqual(['{"message": "Host not authorized."}', '403']);
    // The allowlisted DNS name is served.
    const named = await request(443, { body: rpcBody('net_enode'), host: 'rpc.e2e.test' });
    expect(JSON.parse(named.body).result).toBe(enode);
  });

  it('keeps the health endpoints answering without a token, through the proxy and for probes', async () => {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const liveness = await request(443, { method: 'GET', path: '/liveness' });
    expect([liveness.status, JSON.parse(liveness.body)]).toEqual([200, { status: 'UP' }]);
    const readiness = await request(443, { method: 'GET', path: '/readiness', host: host.ip });
    expect(readiness.status).toBe(200);
    expect((await local(`-H 'Host: localhost' http://127.0.0.1:4545/liveness`)).split('\n')[1]).toBe('200');
  });

  it('limits the request rate per client on the proxy (429 beyond the rate and burst)', async () => {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => request(443, { method: 'GET', path: '/liveness' })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
  });

  it('declares no step to run again when nothing changed; a new password declares only the node-key step, which applies it', async () => {
    const again = await declareProgram(recorded, 'testnet', stack(), {});
    const before = commands(declared);
    const changed = (next: Declared) => changedCommands(before, commands(next)).map((step) => step.name);
    expect(changed(again)).toEqual([]);
    const config = stack();
    config['lacchain:rpcPasswords'] = { [USER]: `${PASSWORD}-rotated` };
    const rotated = await declareProgram(recorded, 'testnet', config, {});
    expect(changed(rotated)).toEqual([`${NODE}-node-key`]);
    const keyStep = commands(rotated).find((s) => s.name === `${NODE}-node-key`)!;
    const result = await runRemoteStep(host, keyStep);
    expect(result).toMatchObject({ code: 0 }); // on failure, shows what the step printed
    expect(result.stdout).toMatch(/restarted besu for the new RPC credentials/);
    for (let i = 0; i < 30; i++) {
      const up = await local(`-H 'Host: localhost' http://127.0.0.1:4545/liveness`).catch(() => '');
      if (up.endsWith('200')) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect((await login()).status).toBe(401);
    expect((await login(`${PASSWORD}-rotated`)).status).toBe(200);
  });
});

/**
 * The writer's gas-model routing against a real nginx on this machine (Debian's nginx with its Lua module and cjson,
 * the packages the SSH path installs): the server block of an SSH writer's port 80, rendered by the project's own
 * renderer (core/proxy/nginxConf.ts) with the writer's own access rules, only moved to free loopback ports and
 * pointed at two stand-ins (for Besu and the relay signer, small Node HTTP servers that record what they receive)
 * through the renderer's inputs, then wrapped in a minimal `http {}`. Needs root (nginx is started as root, as on a
 * machine); elsewhere skipped with the reason printed, and under CI=true it must run.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { GAS_MODEL_METHODS, RELAY_SIGNER_PATH } from '../../core/catalog/gasModel';
import { LOCAL_HOSTS, PORTS } from '../../core/catalog/ports';
import { describeNode } from '../../core/node/description';
import { renderNginxServers } from '../../core/proxy/nginxConf';
import { proxyAccess } from '../../core/rpc/access';
import { loadStack } from '../../core/settings/load';
import {
  memoryFiles,
  rawConfig,
  sshValidatorEntry,
  validTestnetConfig,
  validWriterValues,
} from '../../testing/fixtures';

const NGINX = '/usr/sbin/nginx';
/** Debian's dynamic modules: the Nginx Development Kit first, which the Lua module needs. */
const MODULES = ['/usr/lib/nginx/modules/ndk_http_module.so', '/usr/lib/nginx/modules/ngx_http_lua_module.so'];
const PACKAGES = 'nginx-light libnginx-mod-http-lua lua-cjson';

/** Why the test cannot run here, or undefined. */
function missing(): string | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'needs root on Linux';
  const absent = [NGINX, ...MODULES].filter((file) => !fs.existsSync(file));
  if (absent.length > 0) return `needs ${PACKAGES} (tests/setup.sh installs them): ${absent.join(', ')} missing`;
  return undefined;
}

function suite(): jest.Describe {
  const reason = missing();
  if (reason === undefined) return describe;
  console.warn(`gas-model routing with a real nginx skipped: ${reason}`);
  if (process.env.CI === 'true') throw new Error(`gas-model routing with a real nginx cannot run in CI: ${reason}`);
  return describe.skip;
}

/** What a stand-in received. */
interface Received {
  method?: string;
  url?: string;
  host?: string;
  body: string;
}

/** A stand-in answering every request with a JSON-RPC result naming itself, and recording it. */
async function standIn(name: string): Promise<{ server: http.Server; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method,
        url: request.url,
        host: request.headers.host,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: name }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as net.AddressInfo).port, received };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The SSH writer of a test stack, with the schema's defaults (1m bodies, 20 requests a second, burst 40). */
function sshWriter() {
  const config = validTestnetConfig();
  config['lacchain:nodes'] = [
    { ...sshValidatorEntry({ host: '198.51.100.8', node_ip: '198.51.100.8' }), name: 'gateway', typenode: 'writer' },
  ];
  const files = memoryFiles({ 'values/writer.yml': yaml.dump(validWriterValues()) });
  return loadStack('testnet', rawConfig(config), files).settings.nodes[0];
}

interface Answer {
  status: number;
  body: string;
}

function post(port: number, body: string, options: { path?: string; host?: string; method?: string } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'POST',
        path: options.path ?? '/',
        headers: { 'content-type': 'application/json', host: options.host ?? 'localhost' },
        agent: false,
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.setTimeout(10_000, () => request.destroy(new Error('no answer within 10 s')));
    request.on('error', reject);
    request.end(options.method === 'GET' ? undefined : body);
  });
}

const call = (method: string, params: unknown[] = [], id: number = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

suite()('gas-model routing with a real nginx', () => {
  jest.setTimeout(60_000);
  let dir: string;
  let nginx: ChildProcess | undefined;
  let nginxOutput = '';
  let port: number;
  let besu: Awaited<ReturnType<typeof standIn>>;
  let signer: Awaited<ReturnType<typeof standIn>>;
  const writer = sshWriter();

  beforeAll(async () => {
    besu = await standIn('besu');
    signer = await standIn('relay-signer');
    port = await freePort();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-gas-model-'));
    // nginx's workers (not root) read the temporary folders nginx makes here.
    fs.chmodSync(dir, 0o755);
    // The writer's own plain-HTTP server and access rules, moved to a free loopback port and to the stand-ins. Only
    // the rate is raised, so that this test's quick requests are not limited.
    const description = describeNode(writer);
    const server = description.proxyServers.find((s) => s.port === PORTS.reverseProxyHttp)!;
    expect(server.gasModel).toEqual({ relaySignerPort: PORTS.relaySigner });
    const access = proxyAccess(writer, [...LOCAL_HOSTS, ...description.rpc.hosts], 'lacchain_test');
    const site = renderNginxServers({
      purpose: 'gas-model routing test',
      servers: [{ ...server, port, address: '127.0.0.1', gasModel: { relaySignerPort: signer.port } }],
      access: { ...access, requestsPerSecond: 1000, burst: 1000 },
      besuPort: besu.port,
    });
    fs.writeFileSync(path.join(dir, 'site.conf'), site);
    const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'];
    fs.writeFileSync(
      path.join(dir, 'nginx.conf'),
      [
        ...MODULES.map((module) => `load_module ${module};`),
        'worker_processes 1;',
        'events { worker_connections 64; }',
        'http {',
        ...temp.map((name) => `    ${name}_temp_path ${dir}/${name}_temp;`),
        '    access_log off;',
        `    include ${dir}/site.conf;`,
        '}',
        '',
      ].join('\n'),
    );
    nginx = spawn(
      NGINX,
      [
        '-e',
        'stderr',
        '-p',
        dir,
        '-c',
        `${dir}/nginx.conf`,
        '-g',
        `daemon off; pid ${dir}/nginx.pid; error_log stderr warn;`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    nginx.stdout!.on('data', (chunk) => (nginxOutput += chunk));
    nginx.stderr!.on('data', (chunk) => (nginxOutput += chunk));
    const exited = new Promise<never>((_, reject) =>
      nginx!.once('exit', (code) => reject(new Error(`nginx exited (${code}):\n${nginxOutput}`))),
    );
    exited.catch(() => undefined);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const open = await Promise.race([
        exited,
        new Promise<boolean>((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () => resolve(socket.end() !== undefined));
          socket.on('error', () => resolve(false));
        }),
      ]);
      if (open) break;
      if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} within 20 s:\n${nginxOutput}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const done = new Promise((resolve) => nginx!.once('exit', resolve));
      nginx.kill('SIGQUIT');
      await done;
    }
    await Promise.all([besu, signer].map((s) => s && new Promise((resolve) => s.server.close(resolve))));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Sends a body, and returns the answer and what each stand-in received for it. */
  async function send(body: string, options: { path?: string; host?: string; method?: string } = {}) {
    besu.received.length = 0;
    signer.received.length = 0;
    const answer = await post(port, body, options);
    return { answer, besu: [...besu.received], signer: [...signer.received] };
  }

  it.each([...GAS_MODEL_METHODS])('%s reaches the relay signer, and only it', async (method) => {
    const body = call(method, ['0xf86c0a8502540be400825208']);
    const got = await send(body);
    expect(got.answer).toEqual({
      status: 200,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'relay-signer' }),
    });
    expect(got.signer).toEqual([{ method: 'POST', url: '/', host: 'localhost', body }]);
    expect(got.besu).toEqual([]);
  });

  it.each(['eth_chainId', 'net_enode', 'eth_blockNumber', 'eth_call', 'eth_getBalance', 'web3_clientVersion'])(
    '%s reaches Besu, and only it',
    async (method) => {
      const body = call(method);
      const got = await send(body);
      expect(got.answer.status).toBe(200);
      expect(JSON.parse(got.answer.body).result).toBe('besu');
      expect(got.besu).toEqual([{ method: 'POST', url: '/', host: 'localhost', body }]);
      expect(got.signer).toEqual([]);
    },
  );

  it('a gas-model method written with JSON escapes still reaches the relay signer (the body is parsed)', async () => {
    const body = '{"jsonrpc":"2.0","id":7,"method":"eth_sendRaw\\u0054ransaction","params":["0x01"]}';
    const got = await send(body);
    expect(got.signer.map((r) => r.body)).toEqual([body]);
    expect(got.besu).toEqual([]);
  });

  it('a gas-model method name inside params routes nothing: the request reaches Besu', async () => {
    for (const body of [
      call('eth_call', [{ to: '0x00', data: 'eth_sendRawTransaction' }, 'latest']),
      call('eth_chainId', ['eea_sendRawTransaction']),
      JSON.stringify({ jsonrpc: '2.0', id: 1, params: { method: 'eth_sendRawTransaction' }, method: 'eth_chainId' }),
    ]) {
      const got = await send(body);
      expect(got.besu.map((r) => r.body)).toEqual([body]);
      expect(got.signer).toEqual([]);
    }
  });

  it('a batch holding a gas-model method is refused with 400 and reaches neither', async () => {
    for (const method of GAS_MODEL_METHODS) {
      const body = `[${call('eth_chainId', [], 1)},${call(method, ['0x01'], 2)}]`;
      const got = await send(body);
      expect(got.answer.status).toBe(400);
      const answer = JSON.parse(got.answer.body);
      expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(answer.error.message).toMatch(/^gas-model transactions must be sent one at a time/);
      expect(got.besu).toEqual([]);
      expect(got.signer).toEqual([]);
    }
  });

  it('a batch without one reaches Besu whole', async () => {
    const body = `[${call('eth_chainId', [], 1)},${call('net_enode', [], 2)},${call('eth_call', ['eth_sendRawTransaction'], 3)}]`;
    const got = await send(body);
    expect(got.answer.status).toBe(200);
    expect(got.besu.map((r) => r.body)).toEqual([body]);
    expect(got.signer).toEqual([]);
  });

  it('a body near the size limit is read whole and still routes; one above it is refused (413)', async () => {
    // The writer's limit is 1m: the body stays in one memory buffer of that size.
    expect(writer.rpc.proxy.maxBodySize).toBe('1m');
    const envelope = call('eth_sendRawTransaction', ['0x']).length;
    const near = call('eth_sendRawTransaction', [`0x${'ab'.repeat(Math.floor((1024 * 1024 - 64 - envelope) / 2))}`]);
    expect(near.length).toBeGreaterThan(1024 * 1024 - 100);
    // What each stand-in received, as body lengths and whether the body arrived intact (no megabytes in a failure).
    const lengths = (got: Awaited<ReturnType<typeof send>>, body: string) => ({
      status: got.answer.status,
      besu: got.besu.map((r) => [r.body.length, r.body === body]),
      signer: got.signer.map((r) => [r.body.length, r.body === body]),
    });
    expect(lengths(await send(near), near)).toEqual({ status: 200, besu: [], signer: [[near.length, true]] });
    const nearRead = call('eth_getBalance', [`0x${'cd'.repeat(Math.floor((1024 * 1024 - 64 - envelope) / 2))}`]);
    expect(lengths(await send(nearRead), nearRead)).toEqual({
      status: 200,
      besu: [[nearRead.length, true]],
      signer: [],
    });
    const above = call('eth_sendRawTransaction', [`0x${'ab'.repeat(1024 * 1024)}`]);
    expect(lengths(await send(above), above)).toEqual({ status: 413, besu: [], signer: [] });
  });

  it(`${RELAY_SIGNER_PATH} reaches the relay signer, whatever the method in the body`, async () => {
    const body = call('eth_chainId');
    const got = await send(body, { path: RELAY_SIGNER_PATH });
    expect(JSON.parse(got.answer.body).result).toBe('relay-signer');
    expect(got.signer).toEqual([{ method: 'POST', url: RELAY_SIGNER_PATH, host: 'localhost', body }]);
    expect(got.besu).toEqual([]);
  });

  it('a body that is not JSON is answered with a parse error and reaches neither (text after the JSON too)', async () => {
    for (const body of ['{"method":"eth_chainId"', `${call('eth_sendRawTransaction', ['0x01'])} trailing`]) {
      const got = await send(body);
      expect(got.answer.status).toBe(400);
      expect(JSON.parse(got.answer.body)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error' },
      });
      expect(got.besu).toEqual([]);
      expect(got.signer).toEqual([]);
    }
  });

  it("keeps the proxy's rules: only POST, only allowed Hosts, nothing else served", async () => {
    const refused = [
      await send('', { method: 'GET' }),
      await send('', { method: 'GET', path: RELAY_SIGNER_PATH }),
      await send(call('eth_sendRawTransaction', ['0x01']), { host: 'evil.example.org' }),
      await send(call('eth_chainId'), { path: '/other' }),
    ];
    expect(refused.map((got) => got.answer.status)).toEqual([403, 403, 403, 404]);
    expect(refused[2].answer.body).toBe('{"message":"Host not authorized."}');
    for (const got of refused) {
      expect(got.besu).toEqual([]);
      expect(got.signer).toEqual([]);
    }
    // No body was written to a temporary file: every one stayed in memory, where the router reads it.
    expect(nginxOutput).not.toContain('buffered to a temporary file');
    // No Lua error in the whole run (a body above the limit is logged as an error by nginx itself).
    expect(nginxOutput).not.toMatch(/\[(crit|alert|emerg)\]|runtime error|lua entry thread aborted/);
  });
});

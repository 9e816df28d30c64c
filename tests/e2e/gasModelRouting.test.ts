/**
 * The writer's gas-model routing against a real nginx on this machine (Debian's nginx with its Lua module and cjson,
 * the packages the SSH path installs): the server block of an SSH writer's port 80, rendered by the project's own
 * renderer (core/proxy/nginxConf.ts) with the writer's own access rules, only moved to free loopback ports and
 * pointed at two stand-ins (for Besu and the relay signer, small Node HTTP servers that record what they receive)
 * through the renderer's inputs, then wrapped in a minimal `http {}`. Needs root (nginx is started as root, as on a
 * machine); elsewhere skipped with the reason printed, and under CI=true it must run.
 */
import { GAS_MODEL_METHODS, RELAY_SIGNER_PATH } from '../../core/catalog/gasModel';
import { LOCAL_HOSTS, PORTS } from '../../core/catalog/ports';
import { describeNode } from '../../core/node/description';
import { renderNginxServers } from '../../core/proxy/nginxConf';
import { proxyAccess } from '../../core/rpc/access';
import { loadTestnet, sshValidatorEntry, validTestnetConfig } from '../../testing/fixtures';
import { realNginxSuite, request, RunningNginx, StandIn, standIn, startNginx } from '../../testing/nginx';
import { freePort } from '../../testing/ports';

/** The SSH writer of a test stack, with the schema's defaults (1m bodies, 20 requests a second, burst 40). */
function sshWriter() {
  const config = validTestnetConfig();
  config['lacchain:nodes'] = [
    { ...sshValidatorEntry({ host: '190.51.100.8', node_ip: '190.51.100.8' }), name: 'gateway', typenode: 'writer' },
  ];
  return loadTestnet(config).nodes[0];
}

const call = (method: string, params: unknown[] = [], id: number = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

realNginxSuite('gas-model routing with a real nginx')('gas-model routing with a real nginx', () => {
  jest.setTimeout(60_000);
  let nginx: RunningNginx | undefined;
  let port: number;
  let besu: StandIn;
  let signer: StandIn;
  const writer = sshWriter();

  beforeAll(async () => {
    besu = await standIn('besu');
    signer = await standIn('relay-signer');
    port = await freePort();
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
    nginx = await startNginx({ site, ports: [port] });
  });

  afterAll(async () => {
    await nginx?.stop();
    await Promise.all([besu, signer].map((s) => s?.close()));
  });

  /** Sends a body, and returns the answer and what each stand-in received for it. */
  async function send(body: string, options: { path?: string; host?: string; method?: string } = {}) {
    besu.received.length = 0;
    signer.received.length = 0;
    const answer = await request(port, body, options);
    return { answer, besu: [...besu.received], signer: [...signer.received] };
  }

  it.each([...GAS_MODEL_METHODS])('%s reaches the relay signer, and only it', async (method) => {
    const body = call(method, ['0xf86c0a8502540be400825208']);
    const got = await send(body);
    expect({ status: got.answer.status, body: got.answer.body }).toEqual({
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
    // No Lua error in the whole run (a body above the limit is logged as an error by nginx itself).
    expect(nginx!.output()).not.toMatch(/\[(crit|alert|emerg)\]|runtime error|lua entry thread aborted/);
  });
});

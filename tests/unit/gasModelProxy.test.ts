/**
 * The writer's proxy routes JSON-RPC by method (the LACChain gas model): where the routing is rendered (a writer's
 * pod port, a machine writer's 80 and 443; never a validator's or a bootnode's; with RPC authentication on, a
 * machine's 80 only redirects), what it is made of (the catalog's methods, the relay signer's port, the body kept in
 * memory), and the packages step that installs nginx's Lua module and cjson for it. What the routing does with real
 * requests is proved against a real nginx in tests/e2e/gasModelRouting.test.ts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { GAS_MODEL_METHODS, RELAY_SIGNER_PATH } from '../../core/catalog/gasModel';
import { PROXY_CONTAINER_PORT } from '../../core/catalog/kubernetes';
import { PORTS } from '../../core/catalog/ports';
import { describeNode } from '../../core/node/description';
import { renderNginxServers } from '../../core/proxy/nginxConf';
import { remoteSteps } from '../../core/remote/steps';
import type { NodeSettings, SshNodeSettings } from '../../core/settings/model';
import { COMPANIONS_OFF, loadTestnet, sshValidatorEntry, validTestnetConfig } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';

const PASSWORD = 'correct horse battery';

/** The nodes of a stack: a Kubernetes writer, an SSH validator, an SSH writer `gateway` and an SSH bootnode. */
function nodes(rpc?: Record<string, unknown>): NodeSettings[] {
  const config = validTestnetConfig();
  const entries = config['lacchain:nodes'] as Record<string, unknown>[];
  entries.push(
    { ...sshValidatorEntry({ host: '190.51.100.8', node_ip: '190.51.100.8' }), name: 'gateway', typenode: 'writer' },
    { ...sshValidatorEntry({ host: '190.51.100.9', node_ip: '190.51.100.9' }), name: 'boot', typenode: 'bootnode' },
  );
  if (rpc) {
    // Authentication is refused while a cluster writer's plain port is reachable: this stack has SSH nodes only.
    config['lacchain:nodes'] = entries.filter((entry) => entry.target === 'ssh');
    config['lacchain:rpc'] = rpc;
    config['lacchain:rpcPasswords'] = { alice: PASSWORD };
    // The companions call Besu without credentials: with authentication on, the relay signer is off, so no routing.
    config['lacchain:companions'] = structuredClone(COMPANIONS_OFF);
  }
  return loadTestnet(config).nodes;
}

const node = (all: NodeSettings[], name: string) => all.find((n) => n.name === name)!;

/** The server blocks of a rendered file, by their `listen` port (the routing ones, not the Host-refusing defaults). */
function servers(text: string): Map<number, string> {
  const blocks = new Map<number, string>();
  for (const block of text.split(/^server \{$/m).slice(1)) {
    const listen = /^ {4}listen (?:[\d.]+:)?(\d+)( ssl)?( default_server)?;$/m.exec(block);
    if (listen && !listen[3]) blocks.set(Number(listen[1]), block.slice(0, block.indexOf('\n}')));
  }
  return blocks;
}

const ROUTER = 'access_by_lua_block {';

describe('where the gas-model routing is', () => {
  it('a Kubernetes writer: its proxy port routes by method', () => {
    const description = describeNode(node(nodes(), 'writer'));
    expect(description.proxyServers).toEqual([
      { port: PROXY_CONTAINER_PORT, gasModel: { relaySignerPort: PORTS.relaySigner } },
    ]);
    expect(servers(description.files.proxyConfig!).get(PROXY_CONTAINER_PORT)).toContain(ROUTER);
  });

  it('an SSH writer: 80 and 443 (TLS) both route by method', () => {
    const description = describeNode(node(nodes(), 'gateway'));
    const blocks = servers(description.files.proxyConfig!);
    expect([...blocks.keys()].sort((a, b) => a - b)).toEqual([PORTS.reverseProxyHttp, PORTS.reverseProxyHttps]);
    for (const block of blocks.values()) {
      expect(block).toContain(ROUTER);
      expect(block).toContain(`location ${RELAY_SIGNER_PATH} {`);
    }
    expect(blocks.get(PORTS.reverseProxyHttps)).toContain('ssl_certificate ');
  });

  it.each(['validator', 'boot'])('an SSH %s: no routing, no relay signer, no Lua', (name) => {
    const description = describeNode(node(nodes(), name));
    expect(description.proxyServers.every((server) => server.gasModel === undefined)).toBe(true);
    const text = description.files.proxyConfig!;
    expect(text).not.toContain('lua');
    expect(text).not.toContain(String(PORTS.relaySigner));
    expect(text).not.toContain(RELAY_SIGNER_PATH);
    for (const method of GAS_MODEL_METHODS) expect(text).not.toContain(method);
  });

  it("with RPC authentication on (the relay signer then off), an SSH writer's 80 only redirects; 443 does not route", () => {
    const description = describeNode(
      node(
        nodes({ exposure: 'tls-only', authentication: { method: 'password', users: [{ name: 'alice' }] } }),
        'gateway',
      ),
    );
    const blocks = servers(description.files.proxyConfig!);
    const plain = blocks.get(PORTS.reverseProxyHttp)!;
    expect(plain).toContain('return 308 https://$host$request_uri;');
    expect(plain).not.toContain('proxy_pass');
    expect(plain).not.toContain('lua');
    expect(blocks.get(PORTS.reverseProxyHttps)).not.toContain(ROUTER);
    expect(blocks.get(PORTS.reverseProxyHttps)).toContain('location = /login {');
    expect(description.proxyServers.find((s) => s.port === PORTS.reverseProxyHttp)).toEqual({
      port: PORTS.reverseProxyHttp,
      address: undefined,
      redirectToHttps: PORTS.reverseProxyHttps,
    });
  });

  it('a redirecting server never routes', () => {
    expect(() =>
      renderNginxServers({
        purpose: 'p',
        servers: [{ port: 80, redirectToHttps: 443, gasModel: { relaySignerPort: 9001 } }],
      }),
    ).toThrow('port 80: a server that redirects to https routes nothing');
  });
});

describe('what the routing is made of', () => {
  const text = describeNode(node(nodes(), 'gateway')).files.proxyConfig!;
  const plain = servers(text).get(PORTS.reverseProxyHttp)!;

  it('the four methods come from the catalog, each written once per routing server, as a Lua set', () => {
    expect(GAS_MODEL_METHODS).toEqual([
      'eth_sendRawTransaction',
      'eth_getTransactionReceipt',
      'eth_getTransactionCount',
      'eea_sendRawTransaction',
    ]);
    expect(plain).toContain(`local gas_model = { ${GAS_MODEL_METHODS.map((m) => `${m} = true`).join(', ')} }`);
    // The table, and the refusal message of a batch: nowhere else (no regex on the raw body).
    for (const method of GAS_MODEL_METHODS) expect(plain.split(method)).toHaveLength(3);
  });

  it("parses the body with cjson and routes by the request's own method only", () => {
    expect(plain).toContain('local cjson = require "cjson.safe"');
    expect(plain).toContain('local request = cjson.decode(body)');
    expect(plain).toContain(
      `if gas_model[request.method] then ngx.var.lacchain_rpc_upstream = "127.0.0.1:${PORTS.relaySigner}" end`,
    );
    expect(plain).not.toMatch(/ngx\.re\.|string\.find|:find\(|:match\(/);
  });

  it('relay signer and Besu by IP literal (no resolver), a small body buffer and bounds on slow clients', () => {
    expect(plain).toContain(`set $lacchain_rpc_upstream 127.0.0.1:${PORTS.rpcHttp};`);
    expect(plain).toContain('proxy_pass http://$lacchain_rpc_upstream;');
    expect(plain).not.toContain('localhost:');
    expect(plain).not.toContain('resolver');
    expect(plain).toContain('client_max_body_size 1m;');
    // A body larger than 16k waits in a temporary file (the router reads it there): no body held whole in memory.
    expect(plain).toContain('client_body_buffer_size 16k;');
    expect(plain).not.toContain('client_body_in_single_buffer');
    for (const bound of [
      'client_header_timeout 10s;',
      'client_body_timeout 10s;',
      'send_timeout 10s;',
      'keepalive_timeout 15s;',
      'large_client_header_buffers 4 8k;',
      'limit_conn lacchain_besu_connections 20;',
      'limit_conn_status 429;',
    ]) {
      expect(plain).toContain(bound);
    }
    expect(text).toContain('limit_conn_zone $binary_remote_addr zone=lacchain_besu_connections:10m;');
    expect(plain).toContain(`location ${RELAY_SIGNER_PATH} {\n        limit_except POST { deny all; }`);
    expect(plain).toContain(`proxy_pass http://127.0.0.1:${PORTS.relaySigner};`);
  });

  it('keeps the Host allowlist, the rate limit, server_tokens off and the method rule', () => {
    expect(text).toContain('listen 80 default_server;');
    expect(plain).toContain('server_name localhost 127.0.0.1 190.51.100.8;');
    expect(plain).toContain('limit_req zone=lacchain_besu burst=40 nodelay;');
    expect(plain).toContain('server_tokens off;');
    expect(plain).toContain('location = / {\n        limit_except POST { deny all; }');
    // The rate limit and the method rule come first: the router runs in the access phase, after them.
    expect(plain.indexOf('limit_except POST')).toBeLessThan(plain.indexOf(ROUTER));
  });

  it("the stand-in ports of a test reach the rendered file through the renderer's inputs", () => {
    const test = renderNginxServers({
      purpose: 'p',
      servers: [{ port: 8080, gasModel: { relaySignerPort: 19001 } }],
      besuPort: 14545,
    });
    expect(test).toContain('set $lacchain_rpc_upstream 127.0.0.1:14545;');
    expect(test).toContain('ngx.var.lacchain_rpc_upstream = "127.0.0.1:19001"');
    expect(test).toContain('proxy_pass http://127.0.0.1:14545;');
    expect(test).not.toContain(`127.0.0.1:${PORTS.rpcHttp}`);
  });
});

describe('the packages step', () => {
  const steps = (name: string) =>
    remoteSteps(describeNode(node(nodes(), name) as SshNodeSettings), {
      genesis: '',
      genesisSha256: '',
      enode: '',
      address: '',
    });

  it("installs nginx's Lua module and cjson for a writer only (GAS_MODEL)", () => {
    expect(steps('gateway').find((s) => s.name === 'packages')!.env.GAS_MODEL).toBe('true');
    expect(steps('validator').find((s) => s.name === 'packages')!.env.GAS_MODEL).toBe('false');
    expect(steps('boot').find((s) => s.name === 'packages')!.env.GAS_MODEL).toBe('false');
  });

  it('apt: libnginx-mod-http-lua and lua-cjson, checked offered first; yum and dnf: refused for a writer', () => {
    const script = fs.readFileSync(path.join(PROJECT_DIR, 'scripts/remote/packages.sh'), 'utf8');
    expect(script).toContain('gas_model_packages="libnginx-mod-http-lua lua-cjson"');
    expect(script).toMatch(/apt-cache show "\$package"[\s\S]*apt-get install[\s\S]*\$gas_model_packages/);
    expect(script).toContain('which this program installs only on Debian or Ubuntu (apt)');
  });
});

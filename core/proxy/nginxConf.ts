/**
 * The reverse proxy in front of Besu's JSON-RPC: nginx `server` blocks, rendered from the catalog's ports.
 * Used by the writer's proxy container on Kubernetes and by the proxy on a remote machine (TLS on 443, and 80).
 * The file is included inside nginx's `http {}` (conf.d), so it may open with http-level directives (the rate zone).
 * A writer's servers route JSON-RPC by method (the gas model, `gasModel`): that needs nginx's Lua module and cjson.
 */
import { GAS_MODEL_METHODS, RELAY_SIGNER_PATH } from '../catalog/gasModel';
import { LOOPBACK, PORTS } from '../catalog/ports';
import { TLS_POLICY } from '../catalog/remote';
import { METRICS } from '../catalog/metrics';
import { PROXY_CLIENT_BOUNDS } from '../catalog/rpc';

/** One listening server of the proxy. */
export interface ProxyServer {
  /** The port nginx listens on. */
  port: number;
  /** The address it listens on; every address when absent. */
  address?: string;
  /** TLS certificate and key files; plain HTTP when absent. */
  tls?: { certificateFile: string; keyFile: string };
  /**
   * A plain-HTTP server that only redirects: a request (with an allowed Host) is answered 308 to https:// on this
   * port, and nothing reaches Besu, so no login or token is processed in plain text; one that carries credentials (a
   * token, a login) is refused instead, so its client notices they crossed the network in clear. 308 keeps the method
   * and body, so a client that follows it POSTs again, over TLS.
   */
  redirectToHttps?: number;
  /**
   * The LACChain gas model (a writer): JSON-RPC is routed by method, the catalog's GAS_MODEL_METHODS to the relay
   * signer on 127.0.0.1 at this port, everything else to Besu; a batch holding one of them is refused (the relay
   * signer takes one request at a time). Also serves the relay signer at the reference's path. Needs nginx's Lua
   * module and cjson. Not with `redirectToHttps` (a redirecting server routes nothing).
   */
  gasModel?: { relaySignerPort: number };
  /**
   * Not JSON-RPC: a machine's metrics for the operator's Prometheus, over TLS, to a request with the bearer token only
   * (the file `tokenCheck` refuses any other with 401): Besu's at METRICS.besuPath, the machine's file at
   * METRICS.machinePath.
   */
  metrics?: { tokenCheck: string; besuPort: number; machineFile: string };
}

/** What the proxy enforces: the same choices as Besu (`lacchain:rpc`). */
export interface ProxyAccess {
  /** Host names served (Besu's allowlist); any other Host is refused with 403. `*` serves any. */
  hosts: readonly string[];
  /** Password authentication: POST /login reaches Besu. */
  login: boolean;
  /** CORS origins are set: preflight OPTIONS requests reach Besu, which answers them. */
  cors: boolean;
  /** Largest request body (nginx size). */
  maxBodySize: string;
  /** Requests per second per client address, and the burst above it. */
  requestsPerSecond: number;
  burst: number;
  /** Connections open at once per client address. */
  maxConnectionsPerClient: number;
  /** The rate zone's name, unique among the files nginx loads. */
  zone: string;
}

/** What the proxy serves. */
export interface ProxyConfigInput {
  /** Why the proxy is there, for the file's header. */
  purpose: string;
  servers: ProxyServer[];
  /** Largest JSON-RPC request body accepted (when no access is given). */
  maxBodySize?: string;
  /** The access rules; without them any Host is served, with no rate limit. */
  access?: ProxyAccess;
  /** Besu's RPC port on 127.0.0.1: the catalog's, unless a test puts a stand-in there. */
  besuPort?: number;
}

/**
 * Where the proxy reaches a process on its own machine or pod (Besu, the relay signer): an IP literal and a port, so
 * no resolver is needed, also where the address is a variable.
 */
const loopback = (port: number): string => `${LOOPBACK}:${port}`;

/** Status of a refused Host, as Besu refuses one outside its allowlist. */
export const REFUSED_HOST_STATUS = 403;

/**
 * nginx configuration: JSON-RPC by POST on `/` (routed by method on a gas-model server, which also serves the relay
 * signer's path), /login when enabled, the health endpoints by GET, nothing else.
 */
export function renderNginxServers(input: ProxyConfigInput): string {
  const access = input.access;
  const maxBodySize = access?.maxBodySize ?? input.maxBodySize ?? '1m';
  const head = [
    `# ${input.purpose}`,
    '# Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.',
    '',
  ];
  if (access) {
    if (!/^[a-z][a-z0-9_]*$/.test(access.zone)) throw new Error(`not an nginx zone name: ${access.zone}`);
    head.push(
      '# Requests per second and connections at once per client address (http level: this file is included inside',
      '# http {}).',
      `limit_req_zone $binary_remote_addr zone=${access.zone}:10m rate=${access.requestsPerSecond}r/s;`,
      `limit_conn_zone $binary_remote_addr zone=${connectionZone(access.zone)}:10m;`,
      '',
    );
  }
  const besu = loopback(input.besuPort ?? PORTS.rpcHttp);
  const metrics = input.servers.filter((server) => server.metrics !== undefined);
  const blocks = metrics.map((server) => metricsBlock(server, server.metrics!));
  blocks.push(
    ...input.servers
      .filter((server) => server.metrics === undefined)
      .flatMap((server) => [
        ...(access && !access.hosts.includes('*') ? [refuseBlock(server, access)] : []),
        server.redirectToHttps !== undefined
          ? redirectBlock(server, server.redirectToHttps, access)
          : serverBlock(server, maxBodySize, access, besu),
      ]),
  );
  return `${head.join('\n')}\n${blocks.join('\n')}`;
}

/**
 * The metrics endpoint: GET only, with the bearer token only (401 otherwise, before anything is read); any Host (a
 * scraper names the machine by its address), no rate zone (one scraper, every few seconds), the client bounds.
 */
function metricsBlock(server: ProxyServer, metrics: NonNullable<ProxyServer['metrics']>): string {
  if (!server.tls) throw new Error(`port ${server.port}: the metrics endpoint is served over TLS only`);
  return [
    "# The machine's metrics for the operator's Prometheus: over TLS, with the bearer token only.",
    'server {',
    ...listen(server, false),
    '    server_name _;',
    ...clientBounds(undefined),
    '    default_type text/plain;',
    '    # The token check (lacchain:metricsToken): 401 without the token. Written by the node-key step: it holds it.',
    `    include ${metrics.tokenCheck};`,
    `    location = ${METRICS.besuPath} {`,
    '        limit_except GET { deny all; }',
    `        proxy_pass http://${loopback(metrics.besuPort)};`,
    '        proxy_set_header Host localhost;',
    "        # The token stays here: Besu's metrics server is not given it.",
    '        proxy_set_header Authorization "";',
    '    }',
    `    location = ${METRICS.machinePath} {`,
    '        limit_except GET { deny all; }',
    `        alias ${metrics.machineFile};`,
    '    }',
    '    location / { return 404; }',
    '}',
    '',
  ].join('\n');
}

/** The zone counting a client address's open connections, beside its rate zone. */
const connectionZone = (zone: string) => `${zone}_connections`;

/**
 * What every server holds a client to (PROXY_CLIENT_BOUNDS): time-outs for slow headers, bodies and answers, bounded
 * header buffers, and with access rules, its address's connections at once.
 */
function clientBounds(access: ProxyAccess | undefined): string[] {
  const seconds = PROXY_CLIENT_BOUNDS.clientTimeoutSeconds;
  return [
    `    client_header_timeout ${seconds}s;`,
    `    client_body_timeout ${seconds}s;`,
    `    send_timeout ${seconds}s;`,
    `    keepalive_timeout ${PROXY_CLIENT_BOUNDS.keepaliveSeconds}s;`,
    `    large_client_header_buffers ${PROXY_CLIENT_BOUNDS.largeHeaderBuffers};`,
    ...(access
      ? [
          `    limit_conn ${connectionZone(access.zone)} ${access.maxConnectionsPerClient};`,
          '    limit_conn_status 429;',
        ]
      : []),
  ];
}

function listen(server: ProxyServer, defaultServer: boolean): string[] {
  const where = server.address ? `${server.address}:${server.port}` : String(server.port);
  const lines = [
    `    listen ${where}${server.tls ? ' ssl' : ''}${defaultServer ? ' default_server' : ''};`,
    // No nginx version in answers and error pages.
    '    server_tokens off;',
  ];
  if (server.tls) {
    lines.push(
      `    ssl_certificate ${server.tls.certificateFile};`,
      `    ssl_certificate_key ${server.tls.keyFile};`,
      `    ssl_protocols ${TLS_POLICY.protocols};`,
      `    ssl_ciphers ${TLS_POLICY.ciphers};`,
      '    ssl_prefer_server_ciphers on;',
    );
  }
  return lines;
}

/** The default server of a port: any Host outside the allowlist is refused, as Besu refuses it. */
function refuseBlock(server: ProxyServer, access: ProxyAccess): string {
  return [
    '# Any Host outside the allowlist is refused, as Besu refuses it.',
    'server {',
    ...listen(server, true),
    ...clientBounds(access),
    '    server_name _;',
    '    default_type application/json;',
    `    return ${REFUSED_HOST_STATUS} '{"message":"Host not authorized."}';`,
    '}',
    '',
  ].join('\n');
}

/** A plain-HTTP server that answers every request with a 308 redirect to the same Host and path over https. */
function redirectBlock(server: ProxyServer, httpsPort: number, access: ProxyAccess | undefined): string {
  if (server.tls) throw new Error(`port ${server.port}: a TLS server does not redirect to https`);
  if (server.gasModel) throw new Error(`port ${server.port}: a server that redirects to https routes nothing`);
  const named = access && !access.hosts.includes('*');
  const port = httpsPort === PORTS.reverseProxyHttps ? '' : `:${httpsPort}`;
  const refusal = JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: { code: CREDENTIALS_IN_CLEAR.code, message: CREDENTIALS_IN_CLEAR.message(httpsPort) },
  });
  return [
    '# RPC authentication is on: no login or token is taken over plain HTTP. A request that carries one (a token in',
    '# Authorization, a login) is refused, never redirected, so its client notices that its credentials crossed the',
    '# network in clear; any other is redirected to https (308 keeps the method and body). Nothing here reaches Besu.',
    'server {',
    ...listen(server, false),
    `    server_name ${named ? access.hosts.join(' ') : '_'};`,
    ...clientBounds(access),
    '    default_type application/json;',
    `    if ($http_authorization != "") { return ${CREDENTIALS_IN_CLEAR.status} '${refusal}'; }`,
    `    location = /login { return ${CREDENTIALS_IN_CLEAR.status} '${refusal}'; }`,
    `    location / { return 308 https://$host${port}$request_uri; }`,
    '}',
    '',
  ].join('\n');
}

/** How a plain-HTTP request carrying credentials is answered where RPC authentication is on. */
export const CREDENTIALS_IN_CLEAR = {
  status: 403,
  /** Besu's code for a failed authentication. */
  code: -40100,
  message: (httpsPort: number) =>
    `credentials sent over plain HTTP are refused: use https on port ${httpsPort}, and change the password or token, which crossed the network in clear`,
};

/** A server passing JSON-RPC to Besu at `besu` (address:port), or routing it by method (gas model). */
function serverBlock(server: ProxyServer, maxBodySize: string, access: ProxyAccess | undefined, besu: string): string {
  const named = access && !access.hosts.includes('*');
  const gasModel = server.gasModel;
  const lines = ['server {', ...listen(server, false)];
  lines.push(
    `    server_name ${named ? access.hosts.join(' ') : '_'};`,
    `    client_max_body_size ${maxBodySize};`,
    '    # A small buffer per body: a larger body waits in a temporary file (the router reads it from there), so many',
    '    # slow clients cannot hold the largest body allowed in memory each.',
    `    client_body_buffer_size ${PROXY_CLIENT_BOUNDS.bodyBufferSize};`,
    ...clientBounds(access),
  );
  if (access) {
    lines.push(`    limit_req zone=${access.zone} burst=${access.burst} nodelay;`, '    limit_req_status 429;');
  }
  const methods = `limit_except POST${access?.cors ? ' OPTIONS' : ''} { deny all; }`;
  if (gasModel) {
    const relaySigner = loopback(gasModel.relaySignerPort);
    lines.push(
      '',
      '    # JSON-RPC, routed by method (the LACChain gas model). Besu sees Host: localhost, which its host allowlist',
      '    # always accepts.',
      '    location = / {',
      `        ${methods}`,
      `        set $${UPSTREAM_VARIABLE} ${besu};`,
      ...gasModelRouter(relaySigner),
      ...upstream(`$${UPSTREAM_VARIABLE}`),
      '    }',
      '',
      "    # The relay signer itself, at the reference deployment's path.",
      `    location ${RELAY_SIGNER_PATH} {`,
      '        limit_except POST { deny all; }',
      ...upstream(relaySigner),
      '    }',
      '',
    );
  } else {
    lines.push(
      '',
      '    # JSON-RPC. Besu sees Host: localhost, which its host allowlist always accepts.',
      '    location = / {',
      `        ${methods}`,
      ...upstream(besu),
      '    }',
      '',
    );
  }
  if (access?.login) {
    lines.push(
      '    # Password authentication: POST /login gives a token.',
      '    location = /login {',
      '        limit_except POST { deny all; }',
      ...upstream(besu),
      '    }',
      '',
    );
  }
  lines.push(
    '    # Health endpoints, for probes and monitoring.',
    '    location ~ ^/(liveness|readiness)$ {',
    '        limit_except GET { deny all; }',
    ...upstream(besu),
    '    }',
    '',
    '    location / { return 404; }',
    '}',
    '',
  );
  return lines.join('\n');
}

/** The nginx variable holding where a routed JSON-RPC request goes (an IP literal and port: no resolver needed). */
const UPSTREAM_VARIABLE = 'lacchain_rpc_upstream';

/** HTTP status of a request the router refuses (a batch with a gas-model method, a body that is not JSON). */
const REFUSED_REQUEST_STATUS = 400;

/**
 * The gas model's router (Lua, access phase: after the rate limit and the method rule, before the proxy). It parses
 * the body as JSON (cjson) and decides where the request goes:
 * - one request whose `method` is one of GAS_MODEL_METHODS: to the relay signer;
 * - a batch (a JSON array) holding one of them anywhere: refused (400, JSON-RPC error -32600), reaching neither: the
 *   relay signer decodes one request at a time, and Besu must not take a gas-model transaction;
 * - any other request or batch, and a POST without a body: to Besu, as without the router;
 * - a body that is not JSON: refused (400, JSON-RPC parse error -32700, as Besu answers one). It is not passed to
 *   Besu because Besu reads more than strict JSON (it ignores text after the first value), so a body the router
 *   cannot read could carry a gas-model method past it.
 * A method name elsewhere in the body (inside params) routes nothing: only the request's own `method` counts.
 */
function gasModelRouter(relaySigner: string): string[] {
  for (const method of GAS_MODEL_METHODS) {
    if (!/^[a-z][a-zA-Z_]*$/.test(method)) throw new Error(`not a JSON-RPC method name: ${method}`);
  }
  const table = GAS_MODEL_METHODS.map((method) => `${method} = true`).join(', ');
  const batchMessage =
    'gas-model transactions must be sent one at a time: a batch may not hold ' +
    `${GAS_MODEL_METHODS.slice(0, -1).join(', ')} or ${GAS_MODEL_METHODS[GAS_MODEL_METHODS.length - 1]}`;
  const lua = [
    'local cjson = require "cjson.safe"',
    `local gas_model = { ${table} }`,
    'local function refuse(status, code, message)',
    '    ngx.status = status',
    '    ngx.header["Content-Type"] = "application/json"',
    '    ngx.say(cjson.encode({ jsonrpc = "2.0", id = cjson.null, error = { code = code, message = message } }))',
    '    return ngx.exit(ngx.HTTP_OK)',
    'end',
    'if ngx.req.get_method() ~= "POST" then return end',
    'ngx.req.read_body()',
    'local body = ngx.req.get_body_data()',
    'if body == nil then',
    '    local file = ngx.req.get_body_file()',
    '    if file == nil then return end',
    '    -- A body larger than the in-memory buffer waits in a temporary file: read it from there.',
    '    local handle = io.open(file, "rb")',
    '    if handle then',
    '        body = handle:read("*a")',
    '        handle:close()',
    '    end',
    '    if body == nil then return refuse(500, -32603, "the request body could not be read") end',
    'end',
    'local request = cjson.decode(body)',
    `if request == nil then return refuse(${REFUSED_REQUEST_STATUS}, -32700, "Parse error") end`,
    'if type(request) ~= "table" then return end',
    'if request[1] ~= nil then',
    '    for _, call in ipairs(request) do',
    '        if type(call) == "table" and gas_model[call.method] then',
    `            return refuse(${REFUSED_REQUEST_STATUS}, -32600, "${batchMessage}")`,
    '        end',
    '    end',
    '    return',
    'end',
    `if gas_model[request.method] then ngx.var.${UPSTREAM_VARIABLE} = "${relaySigner}" end`,
  ];
  return ['        access_by_lua_block {', ...lua.map((line) => `            ${line}`), '        }'];
}

/** Passes the request to `target` (address:port, or a variable holding one), as sent (no URI rewritten). */
function upstream(target: string): string[] {
  return [
    `        proxy_pass http://${target};`,
    '        proxy_http_version 1.1;',
    '        proxy_set_header Host localhost;',
    '        proxy_set_header Authorization $http_authorization;',
    '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '        proxy_read_timeout 60s;',
  ];
}

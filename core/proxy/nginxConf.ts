/**
 * The reverse proxy in front of Besu's JSON-RPC: nginx `server` blocks, rendered from the catalog's ports.
 * Used by the writer's proxy container on Kubernetes and by the proxy on a remote machine (TLS on 443, and 80).
 * The file is included inside nginx's `http {}` (conf.d), so it may open with http-level directives (the rate zone).
 */
import { PORTS } from '../catalog/ports';
import { TLS_POLICY } from '../catalog/remote';

/** One listening server of the proxy. */
export interface ProxyServer {
  /** The port nginx listens on. */
  port: number;
  /** The address it listens on; every address when absent. */
  address?: string;
  /** TLS certificate and key files; plain HTTP when absent. */
  tls?: { certificateFile: string; keyFile: string };
  /**
   * A plain-HTTP server that only redirects: every request (with an allowed Host) is answered 308 to https:// on
   * this port, and nothing reaches Besu, so no login or token is processed in plain text. 308 keeps the method and
   * body, so a client that follows it POSTs again, over TLS.
   */
  redirectToHttps?: number;
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
}

/** Besu's RPC as the proxy reaches it (same pod or same machine). */
export const RPC_UPSTREAM = `http://127.0.0.1:${PORTS.rpcHttp}`;

/** Status of a refused Host, as Besu refuses one outside its allowlist. */
export const REFUSED_HOST_STATUS = 403;

/** nginx configuration: JSON-RPC by POST on `/`, /login when enabled, the health endpoints by GET, nothing else. */
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
      '# Requests per second per client address (http level: this file is included inside http {}).',
      `limit_req_zone $binary_remote_addr zone=${access.zone}:10m rate=${access.requestsPerSecond}r/s;`,
      '',
    );
  }
  const blocks = input.servers.flatMap((server) => [
    ...(access && !access.hosts.includes('*') ? [refuseBlock(server)] : []),
    server.redirectToHttps !== undefined
      ? redirectBlock(server, server.redirectToHttps, access)
      : serverBlock(server, maxBodySize, access),
  ]);
  return `${head.join('\n')}\n${blocks.join('\n')}`;
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
function refuseBlock(server: ProxyServer): string {
  return [
    '# Any Host outside the allowlist is refused, as Besu refuses it.',
    'server {',
    ...listen(server, true),
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
  const named = access && !access.hosts.includes('*');
  const port = httpsPort === PORTS.reverseProxyHttps ? '' : `:${httpsPort}`;
  return [
    '# RPC authentication is on: no login or token is taken over plain HTTP. Every request is redirected to https',
    '# (308 keeps the method and body); nothing here reaches Besu.',
    'server {',
    ...listen(server, false),
    `    server_name ${named ? access.hosts.join(' ') : '_'};`,
    `    return 308 https://$host${port}$request_uri;`,
    '}',
    '',
  ].join('\n');
}

function serverBlock(server: ProxyServer, maxBodySize: string, access: ProxyAccess | undefined): string {
  const named = access && !access.hosts.includes('*');
  const lines = ['server {', ...listen(server, false)];
  lines.push(`    server_name ${named ? access.hosts.join(' ') : '_'};`, `    client_max_body_size ${maxBodySize};`);
  if (access) {
    lines.push(`    limit_req zone=${access.zone} burst=${access.burst} nodelay;`, '    limit_req_status 429;');
  }
  lines.push(
    '',
    '    # JSON-RPC. Besu sees Host: localhost, which its host allowlist always accepts.',
    '    location = / {',
    `        limit_except POST${access?.cors ? ' OPTIONS' : ''} { deny all; }`,
    ...upstream(),
    '    }',
    '',
  );
  if (access?.login) {
    lines.push(
      '    # Password authentication: POST /login gives a token.',
      '    location = /login {',
      '        limit_except POST { deny all; }',
      ...upstream(),
      '    }',
      '',
    );
  }
  lines.push(
    '    # Health endpoints, for probes and monitoring.',
    '    location ~ ^/(liveness|readiness)$ {',
    '        limit_except GET { deny all; }',
    ...upstream(),
    '    }',
    '',
    '    location / { return 404; }',
    '}',
    '',
  );
  return lines.join('\n');
}

function upstream(): string[] {
  return [
    `        proxy_pass ${RPC_UPSTREAM};`,
    '        proxy_http_version 1.1;',
    '        proxy_set_header Host localhost;',
    '        proxy_set_header Authorization $http_authorization;',
    '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '        proxy_read_timeout 60s;',
  ];
}

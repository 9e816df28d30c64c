/**
 * The reverse proxy in front of Besu's JSON-RPC: nginx `server` blocks, rendered from the catalog's ports.
 * Used by the writer's proxy container on Kubernetes and by the proxy on a remote machine (TLS on 443, and 80).
 */
import { PORTS } from '../catalog/ports';

/** One listening server of the proxy. */
export interface ProxyServer {
  /** The port nginx listens on. */
  port: number;
  /** TLS certificate and key files; plain HTTP when absent. */
  tls?: { certificateFile: string; keyFile: string };
}

/** What the proxy serves. */
export interface ProxyConfigInput {
  /** Why the proxy is there, for the file's header. */
  purpose: string;
  servers: ProxyServer[];
  /** Largest JSON-RPC request body accepted. */
  maxBodySize?: string;
}

/** Besu's RPC as the proxy reaches it (same pod or same machine). */
export const RPC_UPSTREAM = `http://127.0.0.1:${PORTS.rpcHttp}`;

/** nginx `server` blocks: JSON-RPC by POST on `/`, the health endpoints by GET, nothing else. */
export function renderNginxServers(input: ProxyConfigInput): string {
  const blocks = input.servers.map((server) => serverBlock(server, input.maxBodySize ?? '1m'));
  return `# ${input.purpose}\n# Written by the lacchain-besu-node Pulumi program: edit the settings, not this file.\n\n${blocks.join('\n')}`;
}

function serverBlock(server: ProxyServer, maxBodySize: string): string {
  const lines = [`server {`];
  if (server.tls) {
    lines.push(
      `    listen ${server.port} ssl;`,
      `    ssl_certificate ${server.tls.certificateFile};`,
      `    ssl_certificate_key ${server.tls.keyFile};`,
      '    ssl_protocols TLSv1.2 TLSv1.3;',
      '    ssl_prefer_server_ciphers on;',
    );
  } else {
    lines.push(`    listen ${server.port};`);
  }
  lines.push(
    '    server_name _;',
    `    client_max_body_size ${maxBodySize};`,
    '',
    '    # JSON-RPC. Besu sees Host: localhost, which its host allowlist always accepts.',
    '    location = / {',
    '        limit_except POST { deny all; }',
    ...upstream(),
    '    }',
    '',
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
    '        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '        proxy_read_timeout 60s;',
  ];
}

'use strict';
/**
 * aptProxy.js — a small HTTP forward proxy for apt inside an e2e test host.
 *
 * The test host (testing/host/start-host.sh) has no route out; its apt is configured with
 * `Acquire::http::Proxy "http://<gateway>:3142"`. This proxy listens on that gateway address
 * (this machine's end of the host's veth pair), accepts absolute-URI requests
 * (`GET http://deb.debian.org/debian/dists/... HTTP/1.1`, also HEAD) and relays them using this
 * machine's own name resolution, streaming the response back. CONNECT (for https sources) is
 * supported too. apt-cacher-ng is not used because it does not resolve names here.
 *
 * Safety: it binds only to one specific address — a test host's gateway (10.231.N.1) or a
 * loopback address — never to a wildcard; and it relays only to the Debian archive host names
 * that this machine's apt uses (plus deb.debian.org and security.debian.org) on ports 80/443,
 * unless `allowHosts` says otherwise. Anything else gets 403.
 *
 * API:  const { startAptProxy } = require('./aptProxy');
 *       const proxy = await startAptProxy({ host: '10.231.1.1', port: 3142 });
 *       ...; await proxy.close();
 * CLI:  node aptProxy.js HOST PORT        (Ctrl-C / SIGTERM to stop)
 * Env (CLI): APT_PROXY_ALLOW=host1,host2 adds allowed host names ('*' allows any).
 */
const http = require('http');
const net = require('net');
const fs = require('fs');
const path = require('path');
const { checkBindAddress, listen, runUntilSignal } = require('./testServer');

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Host names of this machine's apt sources (sources.list, *.list, *.sources). */
function aptSourceHosts() {
  const files = ['/etc/apt/sources.list'];
  const dir = '/etc/apt/sources.list.d';
  try {
    for (const f of fs.readdirSync(dir)) {
      if (f.endsWith('.list') || f.endsWith('.sources')) files.push(path.join(dir, f));
    }
  } catch {
    /* no such dir */
  }
  const hosts = new Set();
  for (const f of files) {
    let text = '';
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (/^\s*#/.test(line)) continue;
      for (const m of line.matchAll(/\bhttps?:\/\/([^/\s:\]]+)/gi)) hosts.add(m[1].toLowerCase());
    }
  }
  return [...hosts];
}

function defaultAllowHosts() {
  return [...new Set(['deb.debian.org', 'security.debian.org', ...aptSourceHosts()])];
}

function makeAllowed(allowHosts) {
  const list = (allowHosts || defaultAllowHosts()).map((h) => String(h).toLowerCase());
  if (list.includes('*')) return () => true;
  return (hostname, port) => {
    const h = String(hostname || '')
      .toLowerCase()
      .replace(/\.$/, '');
    return (port === 80 || port === 443) && list.includes(h);
  };
}

/**
 * Start the proxy.
 * @param {{host: string, port: number, allowHosts?: string[], log?: (line: string) => void}} opts
 * @returns {Promise<{host: string, port: number, url: string, requests: () => number, close: () => Promise<void>}>}
 */
function startAptProxy(opts) {
  const { host, port } = opts || {};
  checkBindAddress('aptProxy', host);
  const log = (opts && opts.log) || (() => {});
  const allowed = makeAllowed(opts && opts.allowHosts);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  let count = 0;

  const server = http.createServer((req, res) => {
    count += 1;
    let target;
    try {
      target = new URL(req.url);
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('aptProxy: absolute http:// URL required\n');
      return;
    }
    const tport = Number(target.port || 80);
    if (target.protocol !== 'http:' || !['GET', 'HEAD'].includes(req.method)) {
      res.writeHead(405, { 'content-type': 'text/plain' });
      res.end('aptProxy: only GET/HEAD of http:// URLs (use CONNECT for https)\n');
      return;
    }
    if (!allowed(target.hostname, tport)) {
      log(`403 ${req.method} ${req.url}`);
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end(`aptProxy: ${target.hostname}:${tport} is not an allowed destination\n`);
      return;
    }
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (!HOP_BY_HOP.has(k.toLowerCase())) headers[k] = v;
    }
    headers.host = target.host;
    const upstream = http.request(
      {
        host: target.hostname,
        port: tport,
        method: req.method,
        path: target.pathname + target.search,
        headers,
        agent,
        timeout: 60000,
      },
      (up) => {
        const out = {};
        for (const [k, v] of Object.entries(up.headers)) {
          if (!HOP_BY_HOP.has(k.toLowerCase())) out[k] = v;
        }
        res.writeHead(up.statusCode || 502, up.statusMessage, out);
        up.pipe(res);
        up.on('error', () => res.destroy());
        log(`${up.statusCode} ${req.method} ${req.url}`);
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timeout')));
    upstream.on('error', (err) => {
      log(`502 ${req.method} ${req.url}: ${err.message}`);
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`aptProxy: ${err.message}\n`);
      } else {
        res.destroy();
      }
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });

  server.on('connect', (req, clientSocket, head) => {
    count += 1;
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url || '');
    const thost = m ? m[1] : '';
    const tport = m ? Number(m[2]) : 0;
    if (!m || !allowed(thost, tport)) {
      log(`403 CONNECT ${req.url}`);
      clientSocket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const up = net.connect(tport, thost, () => {
      clientSocket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head && head.length) up.write(head);
      up.pipe(clientSocket);
      clientSocket.pipe(up);
      log(`200 CONNECT ${req.url}`);
    });
    up.setTimeout(60000, () => up.destroy());
    up.on('error', (err) => {
      log(`502 CONNECT ${req.url}: ${err.message}`);
      if (clientSocket.writable) clientSocket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      clientSocket.destroy();
    });
    clientSocket.on('error', () => up.destroy());
    clientSocket.on('close', () => up.destroy());
  });

  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
  });

  return listen(server, host, port, () => agent.destroy()).then((listening) => ({
    host,
    port: listening.port,
    url: `http://${host}:${listening.port}`,
    requests: () => count,
    close: listening.close,
  }));
}

module.exports = { startAptProxy, defaultAllowHosts };

if (require.main === module) {
  const [host, portText] = process.argv.slice(2);
  if (!host || !portText) {
    process.stderr.write('usage: node aptProxy.js HOST PORT\n');
    process.exit(2);
  }
  const extra = (process.env.APT_PROXY_ALLOW || '').split(',').filter(Boolean);
  const started = startAptProxy({
    host,
    port: Number(portText),
    allowHosts: extra.length ? [...defaultAllowHosts(), ...extra] : undefined,
    log: (line) => process.stderr.write(`aptProxy ${new Date().toISOString()} ${line}\n`),
  });
  runUntilSignal('aptProxy', started, (p) => `listening on ${p.url}`);
}

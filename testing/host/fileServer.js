'use strict';
/**
 * fileServer.js — a static HTTP file server for e2e tests: serves release archives, genesis
 * files and the like from a local directory to a test host (which can reach only its gateway).
 *
 * API:  const { startFileServer } = require('./fileServer');
 *       const fsrv = await startFileServer({ host: '10.231.1.1', port: 8080, root: '/tmp/dist' });
 *       fsrv.url  // 'http://10.231.1.1:8080' — then e.g. curl "$url/besu.tar.gz" on the host
 *       await fsrv.close();
 * CLI:  node fileServer.js HOST PORT ROOT
 *
 * GET and HEAD only; files only (no directory listings); paths cannot escape ROOT (no "..",
 * symlinks are resolved and must stay inside ROOT). port 0 picks a free port. Binds only to a
 * specific address (a test host gateway 10.231.N.1 or loopback), never to a wildcard.
 * Single "bytes=a-b" ranges are honoured (206), so resumable downloaders work. With `tls: {key, cert}` it serves
 * HTTPS; `redirects: {'/path': 'http://…'}` answers those paths with a 302 (to test what a client does with one).
 */
const http = require('http');
const https = require('https');
const fs = require('fs');
const path = require('path');
const { checkBindAddress, listen, runUntilSignal } = require('./testServer');

const TYPES = {
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.toml': 'text/plain; charset=utf-8',
  '.sh': 'text/x-shellscript',
  '.html': 'text/html; charset=utf-8',
  '.gz': 'application/gzip',
  '.tgz': 'application/gzip',
  '.zip': 'application/zip',
  '.tar': 'application/x-tar',
  '.sha256': 'text/plain; charset=utf-8',
  '.asc': 'text/plain; charset=utf-8',
};

/**
 * @param {{host: string, port: number, root: string, log?: (line: string) => void}} opts
 * @returns {Promise<{url: string, port: number, requests: () => string[], close: () => Promise<void>}>}
 */
function startFileServer(opts) {
  const { host, port, root } = opts || {};
  checkBindAddress('fileServer', host);
  if (!root) throw new Error('fileServer: root is required');
  const realRoot = fs.realpathSync(root);
  const log = (opts && opts.log) || (() => {});
  const seen = [];

  const redirects = (opts && opts.redirects) || {};
  const handler = (req, res) => {
    const send = (code, text) => {
      res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(req.method === 'HEAD' ? undefined : text);
      log(`${code} ${req.method} ${req.url}`);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url || '/', 'http://x').pathname);
    } catch {
      return send(400, 'bad path\n');
    }
    seen.push(rel);
    const redirect = redirects[rel];
    if (redirect) {
      res.writeHead(302, { location: redirect, 'content-length': 0 });
      res.end();
      log(`302 ${req.method} ${req.url} -> ${redirect}`);
      return undefined;
    }
    if (rel.includes('\0') || rel.split('/').includes('..')) return send(403, 'forbidden\n');
    let file;
    try {
      file = fs.realpathSync(path.join(realRoot, rel));
    } catch {
      return send(404, 'not found\n');
    }
    if (file !== realRoot && !file.startsWith(realRoot + path.sep)) return send(403, 'forbidden\n');
    let st;
    try {
      st = fs.statSync(file);
    } catch {
      return send(404, 'not found\n');
    }
    if (!st.isFile()) return send(404, 'not found\n');

    const headers = {
      'content-type': TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream',
      'last-modified': st.mtime.toUTCString(),
      'accept-ranges': 'bytes',
    };
    let start = 0;
    let end = st.size - 1;
    let code = 200;
    const range = /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range || ''));
    if (range && (range[1] !== '' || range[2] !== '')) {
      if (range[1] === '') {
        start = Math.max(0, st.size - Number(range[2]));
      } else {
        start = Number(range[1]);
        if (range[2] !== '') end = Math.min(end, Number(range[2]));
      }
      if (start > end || start >= st.size) {
        res.writeHead(416, { 'content-range': `bytes */${st.size}` });
        res.end();
        return undefined;
      }
      code = 206;
      headers['content-range'] = `bytes ${start}-${end}/${st.size}`;
    }
    headers['content-length'] = st.size === 0 ? 0 : end - start + 1;
    res.writeHead(code, headers);
    log(`${code} ${req.method} ${req.url}`);
    if (req.method === 'HEAD' || st.size === 0) {
      res.end();
      return undefined;
    }
    const stream = fs.createReadStream(file, { start, end });
    stream.on('error', () => res.destroy());
    stream.pipe(res);
    return undefined;
  };
  const server = opts.tls ? https.createServer(opts.tls, handler) : http.createServer(handler);

  const urlHost = host.includes(':') ? `[${host}]` : host;
  return listen(server, host, port).then((listening) => ({
    url: `${opts.tls ? 'https' : 'http'}://${urlHost}:${listening.port}`,
    port: listening.port,
    requests: () => [...seen],
    close: listening.close,
  }));
}

module.exports = { startFileServer };

if (require.main === module) {
  const [host, portText, root] = process.argv.slice(2);
  if (!host || !portText || !root) {
    process.stderr.write('usage: node fileServer.js HOST PORT ROOT\n');
    process.exit(2);
  }
  const started = startFileServer({
    host,
    port: Number(portText),
    root,
    log: (line) => process.stderr.write(`fileServer ${line}\n`),
  });
  runUntilSignal('fileServer', started, (s) => `serving ${root} on ${s.url}`);
}

'use strict';
/**
 * testServer.js — what the test servers (aptProxy.js, fileServer.js) share: where they may listen (a test host's
 * gateway, 10.231.N.1, or a loopback address, never a wildcard, so nothing outside this machine reaches them), and
 * how one runs from the command line.
 */

/** Throws unless `host` is a test host's gateway or a loopback address; `who` names the server in the message. */
function checkBindAddress(who, host) {
  if (typeof host !== 'string' || host === '') throw new Error(`${who}: host (bind address) is required`);
  const ok = /^10\.231\.(\d{1,3})\.1$/.test(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1';
  if (!ok) {
    throw new Error(`${who}: refusing to bind to ${host}: only a test host gateway (10.231.N.1) or loopback`);
  }
}

/**
 * Runs a server started from the command line (`started`, a promise of it) until SIGINT or SIGTERM, first saying on
 * stderr where it listens (`where(server)`); a server that cannot start exits 1 with its message.
 */
function runUntilSignal(who, started, where) {
  started.then(
    (server) => {
      process.stderr.write(`${who} ${where(server)}\n`);
      const stop = () => server.close().then(() => process.exit(0));
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    },
    (err) => {
      process.stderr.write(`${who}: ${err.message}\n`);
      process.exit(1);
    },
  );
}

/**
 * Starts `server` listening on `host`:`port`, keeping track of its connections: resolves with the port it got and
 * `close()`, which ends it at once (every open connection destroyed, then `also()`), the same promise however often
 * it is called.
 */
function listen(server, host, port, also = () => {}) {
  const sockets = new Set();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.removeListener('error', reject);
      const addr = server.address();
      let closed = null;
      resolve({
        port: typeof addr === 'object' && addr ? addr.port : port,
        close() {
          if (!closed) {
            closed = new Promise((done) => {
              server.close(() => done());
              for (const s of sockets) s.destroy();
              also();
            });
          }
          return closed;
        },
      });
    });
  });
}

module.exports = { checkBindAddress, listen, runUntilSignal };

'use strict';
/**
 * netGuard.js — loaded (NODE_OPTIONS --require) into every process the tests start as an operator's command
 * (testing/run.ts: `npm run <tool>`, and the Pulumi program it runs): it refuses, loudly, anything that would reach an
 * address outside this machine's test networks. A TCP connection or a UDP datagram (check's probes of 60606) to an
 * address the kernel routes through this machine's default route (its way out), and a name lookup that would ask a
 * DNS server, end the process at once with exit code 97 and one line on stderr starting with REFUSED_MARK
 * (testing/run.ts turns that line into the test's failure). Loopback, the test hosts' veths and bridges, and the test
 * stacks' public addresses (routed to this machine itself, testing/testNetworks.ts) are the test networks.
 *
 * Loading it installs it: only an operator's command loads it (never a test's own process, whose helpers such as the
 * test hosts' apt proxy reach the package mirrors on purpose); its refusal line is in netGuardMark.js.
 *
 * Names: `localhost`, /etc/hosts' names and IP literals resolve as usual; a test gives other names their answer in
 * LACCHAIN_TEST_NAMES (JSON: name -> addresses, [] for a name that does not resolve), which stands in for DNS.
 */
const { execFileSync } = require('child_process');
const dgram = require('dgram');
const dns = require('dns');
const fs = require('fs');
const net = require('net');
const { REFUSED_MARK, REFUSED_EXIT } = require('./netGuardMark.js');

function refuse(what) {
  fs.writeSync(2, `${REFUSED_MARK} ${what}: outside this machine's test networks (testing/netGuard.js)\n`);
  process.exit(REFUSED_EXIT);
}

/** `ip -j <args>` parsed; refuses when the routes cannot be read (the guard cannot tell, so nothing goes). */
function ipJson(args, what) {
  let failure;
  // iproute2's ip, wherever the PATH a test gives finds it, else where Debian puts it.
  for (const ip of ['ip', '/usr/sbin/ip', '/sbin/ip']) {
    try {
      return JSON.parse(execFileSync(ip, ['-j', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    } catch (error) {
      failure = failure ?? error;
    }
  }
  return refuse(`${what} (the routes could not be read: ${String(failure.message).split('\n')[0]})`);
}

let wayOut;
/** The devices of this machine's default routes (IPv4 and IPv6): its way out. */
function wayOutDevices() {
  if (wayOut === undefined) {
    wayOut = new Set(
      [
        ...ipJson(['route', 'show', 'default'], 'the default route'),
        ...ipJson(['-6', 'route', 'show', 'default'], 'the default route'),
      ]
        .map((route) => route.dev)
        .filter(Boolean),
    );
  }
  return wayOut;
}

const judged = new Map();
/** Refuses `address` (an IP literal) when the kernel sends it out of this machine's default route. */
function checkAddress(address, what) {
  const plain = String(address).replace(/^::ffff:(?=\d+\.)/, '');
  if (judged.get(plain) === true) return;
  const loopback = /^127\./.test(plain) || plain === '::1';
  if (!loopback) {
    const [route] = ipJson(['route', 'get', plain], `${what} ${plain}`);
    if (route && route.type !== 'local' && wayOutDevices().has(route.dev)) {
      refuse(`${what} ${plain} (routed out of ${route.dev}${route.gateway ? ` via ${route.gateway}` : ''})`);
    }
  }
  judged.set(plain, true);
}

/** The names that resolve without asking a DNS server: localhost and /etc/hosts'. */
function localNames() {
  const names = new Set(['localhost']);
  try {
    for (const line of fs.readFileSync('/etc/hosts', 'utf8').split('\n')) {
      line
        .replace(/#.*/, '')
        .trim()
        .split(/\s+/)
        .slice(1)
        .forEach((name) => names.add(name.toLowerCase()));
    }
  } catch {
    /* no /etc/hosts: localhost only */
  }
  return names;
}

const testNames = JSON.parse(process.env.LACCHAIN_TEST_NAMES || '{}');
const answeredHere = localNames();

/** The test's answer for `name` (addresses), undefined to resolve it as usual; refuses a name DNS would be asked for. */
function testAnswer(name) {
  const lower = String(name).toLowerCase();
  if (net.isIP(lower) || answeredHere.has(lower)) return undefined;
  if (Object.prototype.hasOwnProperty.call(testNames, lower)) return testNames[lower];
  return refuse(`a DNS lookup of ${name}`);
}

function notFound(name) {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND', hostname: name });
}

const lookup = dns.lookup;
dns.lookup = function guardedLookup(name, options, callback) {
  const done = typeof options === 'function' ? options : callback;
  const settings = typeof options === 'object' && options !== null ? options : {};
  const answer = testAnswer(name);
  if (answer === undefined) {
    return lookup.call(dns, name, typeof options === 'function' ? {} : options, (error, address, family) => {
      if (!error)
        (Array.isArray(address) ? address : [{ address }]).forEach((a) => checkAddress(a.address, 'a lookup'));
      done(error, address, family);
    });
  }
  const found = answer.map((address) => ({ address, family: net.isIP(address) }));
  process.nextTick(() => {
    if (found.length === 0) return done(notFound(name));
    return settings.all ? done(null, found) : done(null, found[0].address, found[0].family);
  });
  return {};
};
dns.promises.lookup = (name, options = {}) =>
  new Promise((resolve, reject) =>
    dns.lookup(name, options, (error, address, family) =>
      error ? reject(error) : resolve(Array.isArray(address) ? address : { address, family }),
    ),
  );

// TCP: the address a socket connects to (a name goes through dns.lookup above).
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options = typeof first === 'object' && first !== null ? first : { port: first, host: args[1] };
  if (options.path === undefined && options.host !== undefined && net.isIP(String(options.host))) {
    checkAddress(options.host, `a TCP connection to port ${options.port} of`);
  }
  return connect.apply(this, args);
};

// UDP: a connected socket's peer, and every datagram's destination.
const udpConnect = dgram.Socket.prototype.connect;
dgram.Socket.prototype.connect = function guardedUdpConnect(port, address, ...rest) {
  if (typeof address === 'string' && net.isIP(address)) checkAddress(address, `UDP to port ${port} of`);
  return udpConnect.call(this, port, address, ...rest);
};
const send = dgram.Socket.prototype.send;
dgram.Socket.prototype.send = function guardedSend(...args) {
  const address = args.find((arg, i) => i > 0 && typeof arg === 'string' && net.isIP(arg));
  if (address !== undefined) checkAddress(address, 'a UDP datagram to');
  return send.apply(this, args);
};

'use strict';
/**
 * relay-pipe.js SOCKET HOST PORT — ssh's ProxyCommand in a test that cuts the operator's connections
 * (testing/cuts/connectionCut.ts): its standard input and output joined to the test's relay on the Unix socket SOCKET,
 * which connects on to HOST:PORT. It ends (exit 255, as ssh's own connection would) as soon as the relay drops it.
 */
const net = require('net');

const [socketPath, host, port] = process.argv.slice(2);
const relay = net.connect(socketPath, () => relay.write(`${host} ${port}\n`));
process.stdin.pipe(relay);
relay.pipe(process.stdout);
relay.on('error', () => process.exit(255));
relay.on('close', () => process.exit(255));

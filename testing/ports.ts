/**
 * Ports for the servers the tests start on this machine's loopback.
 */
import * as net from 'net';

/**
 * Where the tests' ports are taken from: below the kernel's ephemeral range (ip_local_port_range, 32768-60999 by
 * default) and Kubernetes' node ports (30000-32767). A port from the ephemeral range, free when chosen, can be taken
 * by any outgoing connection before the server that was to listen on it starts (kwok, started after the API server
 * and its controllers, found "address already in use" in a fresh clone's run).
 */
const TEST_PORTS = { first: 20_000, count: 10_000 } as const;

/** Whether `port` can be listened on at 127.0.0.1 right now. */
function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port free on 127.0.0.1 right now, from the tests' own range (TEST_PORTS). */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries += 1) {
    const port = TEST_PORTS.first + Math.floor(Math.random() * TEST_PORTS.count);
    if (await listenable(port)) return port;
  }
  throw new Error(`no free port in ${TEST_PORTS.first}-${TEST_PORTS.first + TEST_PORTS.count - 1} after 200 tries`);
}

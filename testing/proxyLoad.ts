/**
 * Slow clients against a real nginx running the proxy's rendered file (testing/nginx.ts), for the load test
 * (tests/e2e/proxyLoad.test.ts) and its benchmark (bench/proxyLoad.ts): many connections from several loopback
 * addresses (127.0.0.2, 127.0.0.3, …: all of 127.0.0.0/8 is on lo), each sending its headers in pieces and part of a
 * large body, then one more byte a second, held open; meanwhile the nginx workers' resident memory is sampled and one
 * legitimate request is sent from another address. Loopback only, bounded in count and time, and it stops by itself.
 */
import * as net from 'net';
import { LOCAL_HOSTS, PORTS } from '../core/catalog/ports';
import { describeNode } from '../core/node/description';
import { renderNginxServers } from '../core/proxy/nginxConf';
import { proxyAccess } from '../core/rpc/access';
import type { NodeSettings } from '../core/settings/model';
import { loadTestnet, sshValidatorEntry, validTestnetConfig } from './fixtures';
import { request, residentKiB } from './nginx';

/** The SSH writer `gateway` of a test stack, with the schema's defaults unless `rpc` (lacchain:rpc) is given. */
export function sshWriter(rpc?: Record<string, unknown>, secrets: Record<string, unknown> = {}): NodeSettings {
  const config = { ...validTestnetConfig(), ...secrets };
  config['lacchain:nodes'] = [
    { ...sshValidatorEntry({ host: '190.51.100.8', node_ip: '190.51.100.8' }), name: 'gateway', typenode: 'writer' },
  ];
  if (rpc) config['lacchain:rpc'] = rpc;
  return loadTestnet(config).nodes[0];
}

/** Where the proxy under load listens and passes to. */
export interface LoadSite {
  /** The writer's gas-model server (its port 80, moved) and a plain server (no routing), on 127.0.0.1. */
  gasModelPort: number;
  plainPort: number;
  /** The stand-ins for Besu and the relay signer. */
  besuPort: number;
  relaySignerPort: number;
}

/**
 * The site under load: the SSH writer's own port-80 server and access rules (the schema's defaults: the rate limit,
 * the body limit, the connections per address), moved to loopback ports and pointed at stand-ins, plus a plain server
 * with the same rules.
 */
export function loadTestSite(ports: LoadSite): string {
  const writer = sshWriter();
  const description = describeNode(writer);
  const server = description.proxyServers.find((s) => s.port === PORTS.reverseProxyHttp)!;
  if (!server.gasModel) throw new Error("the writer's port 80 does not route by method");
  return renderNginxServers({
    purpose: 'proxy load test',
    servers: [
      {
        ...server,
        port: ports.gasModelPort,
        address: '127.0.0.1',
        gasModel: { relaySignerPort: ports.relaySignerPort },
      },
      { port: ports.plainPort, address: '127.0.0.1' },
    ],
    access: proxyAccess(writer, [...LOCAL_HOSTS, ...description.rpc.hosts], 'lacchain_load'),
    besuPort: ports.besuPort,
  });
}

/** The load. */
export interface SlowLoad {
  /** The servers' ports: connection i of an address goes to ports[i % ports.length]. */
  ports: number[];
  /** The addresses the slow clients connect from. */
  addresses: string[];
  /** Connections opened from each address. */
  perAddress: number;
  /** The Content-Length each announces. */
  bodyBytes: number;
  /** The body bytes each sends at once after its headers (the rest: one byte a second). */
  sentBytes: number;
  /** How long the connections are held from the last one opened, in ms. */
  holdMs: number;
  /** The workers' process ids (read at every sample: nginx may start new ones). */
  workerPids: () => number[];
  /** The legitimate request: the port, the address it comes from, and its body. */
  legitimate: { port: number; address: string; body: string };
  /** Also open one connection that stops after half its headers, and one that stops after part of its body. */
  silent?: boolean;
}

/** What a slow client saw. */
interface Client {
  address: string;
  /** The status nginx answered with, if it answered. */
  status?: number;
  /** When nginx closed the connection (ms after the load began). */
  closedAtMs?: number;
}

/** What the load measured. */
export interface SlowLoadResult {
  connections: number;
  addresses: number;
  /** Per address: connections answered 429, answered otherwise, and still held when the hold ended. */
  perAddress: Record<string, { refused: number; answered: number; held: number }>;
  /** The workers' summed resident memory before the load, and its peak while it lasted, in KiB. */
  rssBeforeKiB: number;
  rssPeakKiB: number;
  /** From the first connection to the end of the hold, in seconds. */
  seconds: number;
  /** The legitimate request's status, body and time. */
  legitimate: { status: number; body: string; ms: number };
  /** The silent connections: when nginx closed them (ms after they stopped sending), if it did. */
  silent?: { headersClosedMs?: number; bodyClosedMs?: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const workersKiB = (pids: () => number[]) => pids().reduce((sum, pid) => sum + residentKiB(pid), 0);

/** Runs the load once and returns what it measured; every socket it opened is closed when it returns. */
export async function slowLoad(load: SlowLoad): Promise<SlowLoadResult> {
  const rssBeforeKiB = workersKiB(load.workerPids);
  let rssPeakKiB = rssBeforeKiB;
  const sampler = setInterval(() => (rssPeakKiB = Math.max(rssPeakKiB, workersKiB(load.workerPids))), 50);
  const sockets: net.Socket[] = [];
  const timers: NodeJS.Timeout[] = [];
  const start = Date.now();
  const head = [
    'POST / HTTP/1.1',
    'Host: localhost',
    'Content-Type: application/json',
    `Content-Length: ${load.bodyBytes}`,
    '',
    '',
  ].join('\r\n');
  const body = Buffer.alloc(load.sentBytes, 'a');

  /** Opens one connection; `stop` says where it goes silent (never: it trickles a byte a second). */
  const open = (address: string, port: number, stop?: 'headers' | 'body'): Promise<Client> => {
    const client: Client = { address };
    return new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port, localAddress: address });
      sockets.push(socket);
      let received = '';
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        const status = /^HTTP\/1\.1 (\d{3})/.exec(received);
        // A client that is answered stops sending, as a real one would.
        if (status && client.status === undefined) {
          client.status = Number(status[1]);
          socket.destroy();
        }
      });
      socket.on('close', () => (client.closedAtMs ??= Date.now() - start));
      socket.on('error', () => undefined);
      socket.on('connect', () => {
        const half = Math.floor(head.length / 2);
        socket.write(head.slice(0, half));
        if (stop === 'headers') return resolve(client);
        timers.push(
          setTimeout(() => {
            socket.write(head.slice(half));
            socket.write(body);
            if (stop === 'body') return resolve(client);
            let sent = load.sentBytes;
            const trickle = setInterval(() => {
              if (socket.destroyed || sent >= load.bodyBytes - 1) return;
              socket.write('a');
              sent += 1;
            }, 1000);
            timers.push(trickle);
            resolve(client);
          }, 100),
        );
      });
    });
  };

  try {
    const clients: Client[] = [];
    for (let i = 0; i < load.perAddress; i++) {
      const round = await Promise.all(
        load.addresses.map((address) => open(address, load.ports[i % load.ports.length])),
      );
      clients.push(...round);
    }
    const silentStart = Date.now() - start;
    const silent = load.silent
      ? await Promise.all([
          open(load.legitimate.address, load.ports[0], 'headers'),
          open(load.legitimate.address, load.ports[0], 'body'),
        ])
      : [];
    const openedAt = Date.now();
    // Every connection has sent its headers and its first body bytes: the buffers are allocated now.
    await sleep(1000);
    const legitimateStart = Date.now();
    const answer = await request(load.legitimate.port, load.legitimate.body, {
      localAddress: load.legitimate.address,
    });
    const legitimate = { status: answer.status, body: answer.body, ms: Date.now() - legitimateStart };
    await sleep(Math.max(0, openedAt + load.holdMs - Date.now()));
    const seconds = (Date.now() - start) / 1000;
    const perAddress: SlowLoadResult['perAddress'] = {};
    for (const address of load.addresses) perAddress[address] = { refused: 0, answered: 0, held: 0 };
    for (const client of clients) {
      const counts = perAddress[client.address];
      if (client.status === 429) counts.refused += 1;
      else if (client.status !== undefined || client.closedAtMs !== undefined) counts.answered += 1;
      else counts.held += 1;
    }
    const closedAfter = (client: Client | undefined) =>
      client?.closedAtMs === undefined ? undefined : client.closedAtMs - silentStart;
    return {
      connections: clients.length,
      addresses: load.addresses.length,
      perAddress,
      rssBeforeKiB,
      rssPeakKiB,
      seconds,
      legitimate,
      ...(load.silent
        ? { silent: { headersClosedMs: closedAfter(silent[0]), bodyClosedMs: closedAfter(silent[1]) } }
        : {}),
    };
  } finally {
    clearInterval(sampler);
    for (const timer of timers) clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
  }
}

/** The loopback addresses 127.0.0.<first> … 127.0.0.<first + count - 1>. */
export function loopbackAddresses(first: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `127.0.0.${first + i}`);
}

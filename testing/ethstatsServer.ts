/**
 * A stand-in for the LACChain network's monitoring server, for tests: it takes the messages of the ethstats-cli
 * stand-in (tests/fixtures/companion-standins/ethstats-cli), which POSTs each one as JSON {topic, payload} to /api
 * instead of speaking websockets, records them, registers nodes and checks logins. Like testing/host/fileServer.js it
 * binds only to a test host gateway (10.231.N.1) or loopback, never to a wildcard.
 */
import * as crypto from 'crypto';
import * as http from 'http';
import type { AddressInfo } from 'net';

/** One message a client sent, as received. */
export interface EthstatsMessage {
  topic: string;
  payload: Record<string, unknown>;
}

/** A running monitoring-server stand-in. */
export interface EthstatsServer {
  /** http://host:port, for --server-url. */
  readonly url: string;
  /** Every well-formed message received, oldest first (login payloads hold secret keys: tests only). */
  readonly messages: readonly EthstatsMessage[];
  /** The registered nodes, name to secret key (a copy). */
  registered(): Map<string, string>;
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
}

const NODE_NAME = /^[a-zA-Z0-9-_]{3,64}$/;
const EMAIL = /^[^@\s]+@[^@\s]+$/;
const MAX_BODY = 1024 * 1024;

function checkBindAddress(host: string): void {
  const ok = /^10\.231\.(\d{1,3})\.1$/.test(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1';
  if (!ok)
    throw new Error(`ethstatsServer: refusing to bind to ${host}: only a test host gateway (10.231.N.1) or loopback`);
}

/** The answer to one message, as the real server's shape: {success, data?} or {success: false, errors}. */
function answerTo(message: EthstatsMessage, nodes: Map<string, string>): Record<string, unknown> {
  const { nodeName, accountEmail, secretKey } = message.payload;
  switch (message.topic) {
    case 'registerNode':
      if (typeof nodeName !== 'string' || !NODE_NAME.test(nodeName)) {
        return { success: false, errors: ['Invalid node name'] };
      }
      if (typeof accountEmail !== 'string' || !EMAIL.test(accountEmail)) {
        return { success: false, errors: ['Invalid account email'] };
      }
      if (nodes.has(nodeName)) return { success: false, errors: ['Node name already exists'] };
      nodes.set(nodeName, crypto.randomBytes(20).toString('hex'));
      return { success: true, data: [{ nodeName, secretKey: nodes.get(nodeName) }] };
    case 'login':
      if (typeof nodeName === 'string' && nodes.has(nodeName) && nodes.get(nodeName) === secretKey) {
        return { success: true };
      }
      return { success: false, errors: ['Invalid node name or secret key'] };
    default:
      return { success: true };
  }
}

function parseMessage(body: string): EthstatsMessage | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { topic, payload } = parsed as Record<string, unknown>;
    if (typeof topic !== 'string' || typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      return undefined;
    }
    return { topic, payload: payload as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/** Starts the monitoring-server stand-in on host (a 10.231.N.1 gateway or loopback) and port (0: a free one). */
export function startEthstatsServer(host: string, port = 0): Promise<EthstatsServer> {
  checkBindAddress(host);
  const messages: EthstatsMessage[] = [];
  const nodes = new Map<string, string>();

  const server = http.createServer((req, res) => {
    const send = (code: number, body: Record<string, unknown>) => {
      const text = JSON.stringify(body);
      res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/api')
      return send(404, { success: false, errors: ['Not found'] });
    if (req.method !== 'POST') return send(405, { success: false, errors: ['POST only'] });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        send(413, { success: false, errors: ['Message too large'] });
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => {
      const message = parseMessage(Buffer.concat(chunks).toString('utf8'));
      if (!message) return send(400, { success: false, errors: ['Not a {topic, payload} JSON message'] });
      messages.push(message);
      return send(200, answerTo(message, nodes));
    });
    return undefined;
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.removeListener('error', reject);
      const urlHost = host.includes(':') ? `[${host}]` : host;
      let closed: Promise<void> | undefined;
      resolve({
        url: `http://${urlHost}:${(server.address() as AddressInfo).port}`,
        messages,
        registered: () => new Map(nodes),
        close() {
          closed ??= new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          });
          return closed;
        },
      });
    });
  });
}

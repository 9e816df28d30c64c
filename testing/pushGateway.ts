/**
 * A stand-in for a network's Prometheus push gateway, for tests: it records what is pushed to it (the method, the
 * path naming the job, the content type, the body, when) and answers as a push gateway does (200 to a POST or PUT,
 * 202 to a DELETE). Binds only to a test host's gateway (10.231.N.1) or the loopback.
 */
import * as http from 'http';
import type { AddressInfo } from 'net';

/** One request, as received. */
export interface Push {
  method: string;
  path: string;
  contentType: string;
  body: string;
  /** When it arrived, epoch milliseconds. */
  at: number;
}

/** A running push gateway stand-in. */
export interface PushGateway {
  host: string;
  port: number;
  /** Every request received, oldest first. */
  readonly pushes: readonly Push[];
  close(): Promise<void>;
}

export async function startPushGateway(host: string): Promise<PushGateway> {
  if (!/^10\.231\.\d{1,3}\.1$/.test(host) && !/^127\./.test(host)) {
    throw new Error(`pushGateway: refusing to bind to ${host}: only a test host gateway (10.231.N.1) or loopback`);
  }
  const pushes: Push[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      pushes.push({
        method: request.method ?? '',
        path: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        body,
        at: Date.now(),
      });
      response.writeHead(request.method === 'DELETE' ? 202 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    host,
    port: (server.address() as AddressInfo).port,
    pushes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The names of the series in a text of Prometheus' format (what a push or a scrape carries). */
export function seriesNames(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.split(/[{ ]/)[0]),
  );
}

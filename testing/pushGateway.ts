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
  /** When it was answered, epoch milliseconds (later than `at` for an answer held by `holdNextAnswer`). */
  answeredAt?: number;
}

/** A running push gateway stand-in. */
export interface PushGateway {
  host: string;
  port: number;
  /** Every request received, oldest first. */
  readonly pushes: readonly Push[];
  /** Holds the answer to the next POST for `ms` milliseconds, as a slow gateway would: the push that gets it is late. */
  holdNextAnswer(ms: number): void;
  close(): Promise<void>;
}

export async function startPushGateway(host: string): Promise<PushGateway> {
  if (!/^10\.231\.\d{1,3}\.1$/.test(host) && !/^127\./.test(host)) {
    throw new Error(`pushGateway: refusing to bind to ${host}: only a test host gateway (10.231.N.1) or loopback`);
  }
  const pushes: Push[] = [];
  let hold = 0;
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const push: Push = {
        method: request.method ?? '',
        path: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        body,
        at: Date.now(),
      };
      pushes.push(push);
      const held = push.method === 'POST' ? hold : 0;
      if (push.method === 'POST') hold = 0;
      // Node's timers may fire a millisecond before Date.now() shows the delay passed: answer once it shows it.
      const answer = () => {
        const left = push.at + held - Date.now();
        if (left > 0) return void setTimeout(answer, left);
        push.answeredAt = Date.now();
        response.writeHead(push.method === 'DELETE' ? 202 : 200).end();
      };
      answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    host,
    port: (server.address() as AddressInfo).port,
    pushes,
    holdNextAnswer: (ms) => {
      hold = ms;
    },
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

/**
 * Whether the gateway answered a POST in the `intervalSeconds` up to the second a relay's last-push series names
 * (`seconds`: the relay reads its clock once the answer came): the series tells of a push the gateway took.
 */
export function answeredPushAt(gateway: PushGateway, seconds: number, intervalSeconds: number): boolean {
  return gateway.pushes.some(
    (push) =>
      push.method === 'POST' &&
      push.answeredAt !== undefined &&
      push.answeredAt < (seconds + 1) * 1000 &&
      push.answeredAt >= (seconds - intervalSeconds) * 1000,
  );
}

/**
 * An HTTP request whose whole answer, body included, comes within a time limit or fails. Node's fetch aborted by its
 * own signal while it reads a body can leave that read pending forever (nodejs/node#56917); with no other work left,
 * Node then ends the process with status 0 as if the command had finished (seen: `npm run node -- restore` on a cluster
 * ended 0 before checking the restored node, its RPC port-forward stalled while the pod restarted). Here the limit is
 * a timer of its own, which keeps the process alive until it fires and then fails the request.
 */

import { ANSWER_LIMITS } from './catalog/answers';

/** A whole answer: its HTTP status and its body. */
export interface WholeAnswer {
  status: number;
  ok: boolean;
  body: Buffer;
}

/** The error of a request that did not end within its limit (`name` is `TimeoutError`, as the fetch's own). */
export class AnswerTimeout extends Error {
  override name = 'TimeoutError';
}

/** The error of an answer whose body passed its bound (the request is aborted there). */
export class AnswerTooLarge extends Error {}

/**
 * `fetcher(url, init)` and its body, within `ms` milliseconds and `maxBytes` bytes (ANSWER_LIMITS.http unless said);
 * the request is aborted when the time is up or the body passes the bound.
 */
export async function fetchWithin(
  url: string,
  init: RequestInit,
  ms: number,
  fetcher: typeof fetch = fetch,
  maxBytes: number = ANSWER_LIMITS.http,
): Promise<WholeAnswer> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new AnswerTimeout(`no whole answer within ${ms / 1000} s`);
      controller.abort(error);
      reject(error);
    }, ms);
  });
  const answer = (async () => {
    const response = await fetcher(url, { ...init, signal: controller.signal });
    return { status: response.status, ok: response.ok, body: await boundedBody(response, maxBytes, controller) };
  })();
  // Once the time is up the answer may still fail (aborted): that is no unhandled rejection.
  answer.catch(() => undefined);
  try {
    return await Promise.race([answer, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** The body of `response`, read until it passes `maxBytes` (then the request is aborted and an AnswerTooLarge thrown). */
async function boundedBody(response: Response, maxBytes: number, controller: AbortController): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let read = 0;
  if (!response.body) return Buffer.alloc(0);
  for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) {
    read += part.length;
    if (read > maxBytes) {
      const error = new AnswerTooLarge(`the answer passed ${maxBytes} bytes: stopped reading it`);
      controller.abort(error);
      throw error;
    }
    parts.push(part);
  }
  return Buffer.concat(parts);
}

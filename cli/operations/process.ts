/**
 * Running the real clients (ssh, kubectl): captured, or streamed to the terminal through a filter; a missing client is
 * a clear error.
 */
import { spawn } from 'child_process';
import type { Readable } from 'stream';
import { ANSWER_LIMITS } from '../../core/catalog/answers';
import { ToolFailure } from '../cli';

/** What a client printed and how it ended. */
export interface ClientResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The error of a client whose answer passed its bound: what it was, and that reading stopped there. */
export class AnswerTooLarge extends ToolFailure {}

/** The one line of a client that printed more than `limit` bytes. */
function tooLarge(client: string, args: string[], limit: number): AnswerTooLarge {
  const what = args.length > 0 ? ` (${args[args.length - 1].split('\n')[0].slice(0, 80)})` : '';
  return new AnswerTooLarge(
    `${client}${what} answered more than ${limit} bytes: stopped reading it (a machine or pod answering without end is not read whole); check what answers there`,
  );
}

/**
 * Runs a client and captures its output. A client that prints more than `maxOutputBytes` on either stream (a machine
 * not yet trusted may answer without end; ANSWER_LIMITS.client unless the read says less) is stopped there, and the
 * run fails with an AnswerTooLarge saying so in one line.
 */
export function runClient(
  client: string,
  args: string[],
  input?: string,
  timeoutMs = 60_000,
  maxOutputBytes: number = ANSWER_LIMITS.client,
): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(client, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let read = { stdout: 0, stderr: 0 };
    let tooMuch = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const bounded = (stream: 'stdout' | 'stderr', kept: Buffer[], more: Buffer) => {
      if (tooMuch) return;
      read = { ...read, [stream]: read[stream] + more.length };
      if (read[stream] <= maxOutputBytes) {
        kept.push(more);
        return;
      }
      tooMuch = true;
      child.kill('SIGKILL');
      // And stop reading: whatever the client started may still hold the pipes (then SIGPIPE ends it).
      child.stdout.destroy();
      child.stderr.destroy();
    };
    child.stdout.on('data', (d: Buffer) => bounded('stdout', stdout, d));
    child.stderr.on('data', (d: Buffer) => bounded('stderr', stderr, d));
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        error.code === 'ENOENT'
          ? new ToolFailure(`${client} is not installed or not on PATH: install it to run this operation`)
          : error,
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (tooMuch) {
        reject(tooLarge(client, args, maxOutputBytes));
        return;
      }
      const text = (kept: Buffer[]) => Buffer.concat(kept).toString();
      resolve({ code: code ?? (signal ? 124 : 1), stdout: text(stdout), stderr: text(stderr) });
    });
    // A client that exits before reading its input closes the pipe: that is not an error of the operation.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * Runs a client whose output streams to the terminal (logs that follow), each line passed through `clean` first (a
 * line split across reads is cleaned whole); resolves with its exit code.
 */
export function attachClient(client: string, args: string[], clean: (text: string) => string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(client, args, { stdio: ['inherit', 'pipe', 'pipe'] });
    const flushers = [relayLines(child.stdout, process.stdout, clean), relayLines(child.stderr, process.stderr, clean)];
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new ToolFailure(`${client} is not installed or not on PATH`) : error),
    );
    child.on('close', (code) => {
      flushers.forEach((flush) => flush());
      resolve(code ?? 1);
    });
  });
}

/** Copies whole lines from a stream to a terminal stream through `clean`; returns what writes out a last partial line. */
function relayLines(from: Readable, to: NodeJS.WritableStream, clean: (text: string) => string): () => void {
  let pending = '';
  from.setEncoding('utf8');
  from.on('data', (chunk: string) => {
    const text = pending + chunk;
    const end = text.lastIndexOf('\n') + 1;
    pending = text.slice(end);
    if (end > 0) to.write(clean(text.slice(0, end)));
  });
  return () => {
    if (pending) to.write(clean(pending));
    pending = '';
  };
}

/**
 * Runs a client whose standard output is read line by line as it comes (`onLine`, each line whole) and whose standard
 * error is shown as it comes, through `clean`, and kept for the result; resolves with its exit code and both texts (their
 * last ANSWER_LIMITS.keptTail bytes). A line longer than ANSWER_LIMITS.line stops the client: an AnswerTooLarge.
 */
export function streamClient(
  client: string,
  args: string[],
  onLine: (line: string) => void,
  clean: (text: string) => string,
  input?: string,
): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(client, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let pending = '';
    let tooMuch = false;
    const tail = (text: string) => text.slice(-ANSWER_LIMITS.keptTail);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (tooMuch) return;
      stdout = tail(stdout + chunk);
      const text = pending + chunk;
      const lines = text.split('\n');
      pending = lines.pop() ?? '';
      if (Buffer.byteLength(pending) > ANSWER_LIMITS.line) {
        tooMuch = true;
        child.kill('SIGKILL');
        child.stdout.destroy();
        child.stderr.destroy();
        return;
      }
      lines.forEach(onLine);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (tooMuch) return;
      stderr = tail(stderr + chunk);
      process.stderr.write(clean(chunk));
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new ToolFailure(`${client} is not installed or not on PATH`) : error),
    );
    child.on('close', (code, signal) => {
      if (tooMuch) {
        reject(tooLarge(client, args, ANSWER_LIMITS.line));
        return;
      }
      if (pending) onLine(pending);
      resolve({ code: code ?? (signal ? 124 : 1), stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * Running the real clients (ssh, kubectl): captured, or streamed to the terminal through a filter; a missing client is
 * a clear error.
 */
import { spawn } from 'child_process';
import type { Readable } from 'stream';
import { ToolFailure } from '../cli';

/** What a client printed and how it ended. */
export interface ClientResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a client and captures its output. A client that prints more than `maxOutputBytes` on either stream (a machine
 * not yet trusted may answer without end) is stopped there, and its result says so on standard error.
 */
export function runClient(
  client: string,
  args: string[],
  input?: string,
  timeoutMs = 60_000,
  maxOutputBytes = Infinity,
): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(client, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let tooMuch = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const bounded = (text: string, more: Buffer) => {
      if (tooMuch) return text;
      if (text.length + more.length <= maxOutputBytes) return text + more.toString();
      tooMuch = true;
      child.kill('SIGKILL');
      // And stop reading: whatever the client started may still hold the pipes (then SIGPIPE ends it).
      child.stdout.destroy();
      child.stderr.destroy();
      return text;
    };
    child.stdout.on('data', (d: Buffer) => (stdout = bounded(stdout, d)));
    child.stderr.on('data', (d: Buffer) => (stderr = bounded(stderr, d)));
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
      if (tooMuch) stderr += `\n${client} printed more than ${maxOutputBytes} bytes: stopped`;
      resolve({ code: code ?? (signal ? 124 : 1), stdout, stderr });
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
 * error is shown as it comes, through `clean`, and kept for the result; resolves with its exit code and both texts.
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
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const text = pending + chunk;
      const lines = text.split('\n');
      pending = lines.pop() ?? '';
      lines.forEach(onLine);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      process.stderr.write(clean(chunk));
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new ToolFailure(`${client} is not installed or not on PATH`) : error),
    );
    child.on('close', (code, signal) => {
      if (pending) onLine(pending);
      resolve({ code: code ?? (signal ? 124 : 1), stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

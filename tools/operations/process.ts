/**
 * Running the real clients (ssh, kubectl): captured, or attached to the terminal; a missing client is a clear error.
 */
import { spawn } from 'child_process';
import { ToolFailure } from '../cli';

/** What a client printed and how it ended. */
export interface ClientResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a client and captures its output. */
export function runClient(client: string, args: string[], input?: string, timeoutMs = 60_000): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(client, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
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
      resolve({ code: code ?? (signal ? 124 : 1), stdout, stderr });
    });
    // A client that exits before reading its input closes the pipe: that is not an error of the operation.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** Runs a client attached to the terminal (logs that stream); resolves with its exit code. */
export function attachClient(client: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(client, args, { stdio: 'inherit' });
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new ToolFailure(`${client} is not installed or not on PATH`) : error),
    );
    child.on('close', (code) => resolve(code ?? 1));
  });
}

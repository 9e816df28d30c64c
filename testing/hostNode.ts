/**
 * Questions a test asks a node on a test host as root over SSH (the move's tests: machine to machine, into a pod and
 * out of one, and their cuts): a script's output, a JSON-RPC answer from the node's own RPC, its unit's starts and stops.
 */
import type { TestHost } from './host/testHost';

/** Runs `script` as root on `host` under `set -euo pipefail`; its trimmed output, or an error with all it said. */
export async function asRoot(host: TestHost, script: string): Promise<string> {
  const result = await host.ssh('bash -s', { input: `set -euo pipefail\n${script}`, timeoutMs: 120_000 });
  if (result.code !== 0) throw new Error(`${host.name}: exit ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout.trim();
}

/** The `result` of JSON-RPC `method` asked of the node's RPC on the host itself (127.0.0.1:4545). */
export async function hostRpc(host: TestHost, method: string): Promise<string> {
  const request = JSON.stringify({ jsonrpc: '2.0', method, params: [], id: 1 });
  const answer = await asRoot(
    host,
    `curl -s -H 'Host: localhost' -H 'Content-Type: application/json' --data '${request}' http://127.0.0.1:4545/`,
  );
  return JSON.parse(answer).result as string;
}

/** Each Started and Stopped line of `unit` in the host's journal (since epoch second `since`, when given). */
export async function unitTimes(
  host: TestHost,
  unit: string,
  since?: number,
): Promise<Array<{ host: string; at: number; started: boolean }>> {
  const after = since === undefined ? '' : ` --since @${Math.floor(since)}`;
  const lines = await asRoot(
    host,
    `journalctl -u ${unit} -o short-unix --no-pager${after} | grep -E ' (Started|Stopped) ' || true`,
  );
  return lines
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ host: host.name, at: Number(line.split(' ')[0]), started: / Started /.test(line) }));
}

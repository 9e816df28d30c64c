/**
 * A request whose answer stalls, and an operation left waiting for something that cannot come, never end a tool with
 * status 0. Node's fetch aborted by its own signal while it reads a body can leave that read pending forever
 * (nodejs/node#56917), and Node then ends the process with status 0 as if the command had finished: it did so to
 * `npm run node -- restore` on a real pod (its RPC port-forward stalled while the pod restarted), before the restored
 * node was checked. core/fetchWithin.ts bounds the whole answer with a timer of its own; cli/cli.ts's runTool turns a
 * process that ran out of work unfinished into a failure.
 */
import { spawnSync } from 'child_process';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import { EXIT, UNFINISHED_OPERATION } from '../../cli/cli';
import { fetchWithin } from '../../core/fetchWithin';
import { ensureBuilt, PROJECT_DIR } from '../../testing/run';

/** A server that sends its headers and the first part of a body, then nothing more until it is closed. */
async function stallingServer(): Promise<{ url: string; close(): void }> {
  const sockets = new Set<import('net').Socket>();
  const server = http.createServer((_, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    response.write('{"jsonrpc":"2.0",');
  });
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe('fetchWithin: a whole answer within its limit, or a failure', () => {
  it('fails when the body stalls after the headers, at its limit', async () => {
    const server = await stallingServer();
    try {
      const started = Date.now();
      await expect(fetchWithin(server.url, { method: 'POST', body: '{}' }, 300)).rejects.toMatchObject({
        name: 'TimeoutError',
        message: 'no whole answer within 0.3 s',
      });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      server.close();
    }
  });

  it('gives the status and the whole body of an answer that comes', async () => {
    const server = http.createServer((_, response) => response.writeHead(201).end('all of it'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const answer = await fetchWithin(url, {}, 5000);
      expect([answer.status, answer.ok, answer.body.toString()]).toEqual([201, true, 'all of it']);
    } finally {
      server.close();
    }
  });
});

describe('runTool: an operation that never finishes is a failure', () => {
  it('a tool whose work ran out while it waited ends 1 with one line saying so, not 0', () => {
    ensureBuilt();
    const tool = `require(${JSON.stringify(path.join(PROJECT_DIR, 'bin/cli/cli.js'))}).runTool(() => new Promise(() => {}))`;
    const result = spawnSync(process.execPath, ['-e', tool], { encoding: 'utf8', timeout: 30_000 });
    expect(result.stderr).toBe(`${UNFINISHED_OPERATION}\n`);
    expect(result.status).toBe(EXIT.failed);
  });

  it('a tool that finished is not touched by it', () => {
    ensureBuilt();
    const tool = `require(${JSON.stringify(path.join(PROJECT_DIR, 'bin/cli/cli.js'))}).runTool(async () => 0)`;
    const result = spawnSync(process.execPath, ['-e', tool], { encoding: 'utf8', timeout: 30_000 });
    expect([result.status, result.stderr]).toEqual([EXIT.ok, '']);
  });
});

/**
 * A real nginx on this machine for tests and benchmarks (Debian's nginx with its Lua module and cjson, the packages the
 * SSH path installs): the project's own server blocks (core/proxy/nginxConf.ts) wrapped in a minimal `http {}`,
 * started in the foreground from a throwaway folder, and small Node HTTP stand-ins for what the proxy passes to
 * (Besu, the relay signer). Needs root (nginx is started as root, as on a machine).
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

const NGINX = '/usr/sbin/nginx';
/** Debian's dynamic modules: the Nginx Development Kit first, which the Lua module needs. */
const MODULES = ['/usr/lib/nginx/modules/ndk_http_module.so', '/usr/lib/nginx/modules/ngx_http_lua_module.so'];
/** The packages that provide them (tests/setup.sh installs them). */
const PACKAGES = 'nginx-light libnginx-mod-http-lua lua-cjson';

/** Why a real nginx cannot run here, or undefined. */
export function nginxMissing(): string | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'needs root on Linux';
  const absent = [NGINX, ...MODULES].filter((file) => !fs.existsSync(file));
  if (absent.length > 0) return `needs ${PACKAGES} (tests/setup.sh installs them): ${absent.join(', ')} missing`;
  return undefined;
}

/** `describe`, or `describe.skip` with the reason printed; under CI=true a suite that cannot run fails instead. */
export function realNginxSuite(title: string): jest.Describe {
  const reason = nginxMissing();
  if (reason === undefined) return describe;
  console.warn(`${title} skipped: ${reason}`);
  if (process.env.CI === 'true') throw new Error(`${title} cannot run in CI: ${reason}`);
  return describe.skip;
}

/** What a stand-in received. */
export interface Received {
  method?: string;
  url?: string;
  host?: string;
  body: string;
}

/** A stand-in HTTP server on 127.0.0.1. */
export interface StandIn {
  server: http.Server;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

/** A stand-in answering every request with a JSON-RPC result naming itself, and recording it. */
export async function standIn(name: string): Promise<StandIn> {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method,
        url: request.url,
        host: request.headers.host,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: name }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as net.AddressInfo).port,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A running nginx. */
export interface RunningNginx {
  /** Its folder (configuration, temporary folders, pid file). */
  dir: string;
  /** The master process's id. */
  pid: number;
  /** What nginx wrote (its error log goes to stderr), so far. */
  output(): string;
  /** The worker processes' ids (the master's children). */
  workerPids(): number[];
  /** Stops it (graceful quit, then kill after 10 s) and removes its folder. */
  stop(): Promise<void>;
}

/**
 * Starts nginx on a site file (server blocks, included inside `http {}`) with one worker, and waits until every port
 * in `ports` accepts connections on 127.0.0.1. The error log goes to stderr at `logLevel`.
 */
export async function startNginx(options: {
  site: string;
  ports: number[];
  /** worker_connections (default 64). */
  workerConnections?: number;
  /** The error log's level (default warn). */
  logLevel?: string;
}): Promise<RunningNginx> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-nginx-'));
  // nginx's workers (not root) read and write the temporary folders nginx makes here.
  fs.chmodSync(dir, 0o755);
  fs.writeFileSync(path.join(dir, 'site.conf'), options.site);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'];
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    [
      ...MODULES.map((module) => `load_module ${module};`),
      'worker_processes 1;',
      `events { worker_connections ${options.workerConnections ?? 64}; }`,
      'http {',
      ...temp.map((name) => `    ${name}_temp_path ${dir}/${name}_temp;`),
      '    access_log off;',
      `    include ${dir}/site.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  let output = '';
  const nginx: ChildProcess = spawn(
    NGINX,
    [
      '-e',
      'stderr',
      '-p',
      dir,
      '-c',
      `${dir}/nginx.conf`,
      '-g',
      `daemon off; pid ${dir}/nginx.pid; error_log stderr ${options.logLevel ?? 'warn'};`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  nginx.stdout!.on('data', (chunk) => (output += chunk));
  nginx.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<never>((_, reject) =>
    nginx.once('exit', (code) => reject(new Error(`nginx exited (${code}):\n${output}`))),
  );
  exited.catch(() => undefined);
  const stop = async () => {
    if (nginx.exitCode === null && nginx.signalCode === null) {
      const done = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGQUIT');
      const timer = setTimeout(() => nginx.kill('SIGKILL'), 10_000);
      await done;
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 20_000;
    for (const port of options.ports) {
      for (;;) {
        const open = await Promise.race([
          exited,
          new Promise<boolean>((resolve) => {
            const socket = net.connect(port, '127.0.0.1', () => resolve(socket.end() !== undefined));
            socket.on('error', () => resolve(false));
          }),
        ]);
        if (open) break;
        if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} within 20 s:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const pid = nginx.pid!;
  return {
    dir,
    pid,
    output: () => output,
    workerPids: () => childrenOf(pid),
    stop,
  };
}

/** The ids of a process's children (from /proc/<pid>/task/<tid>/children). */
function childrenOf(pid: number): number[] {
  const tasks = fs.readdirSync(`/proc/${pid}/task`);
  return tasks.flatMap((task) =>
    fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
}

/** A process's resident set (VmRSS) in KiB, or 0 once it is gone. */
export function residentKiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** An HTTP answer. */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * Sends one request to port `port` of 127.0.0.1 or of `address` (POST / with a JSON body unless told otherwise) and
 * waits for the answer.
 */
export function request(
  port: number,
  body: string,
  options: {
    path?: string;
    host?: string;
    method?: string;
    headers?: Record<string, string>;
    /** The local address to send from (any of 127.0.0.0/8 on lo). */
    localAddress?: string;
    /** The machine to send to (default 127.0.0.1). */
    address?: string;
  } = {},
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const sent = http.request(
      {
        host: options.address ?? '127.0.0.1',
        port,
        method: options.method ?? 'POST',
        path: options.path ?? '/',
        headers: { 'content-type': 'application/json', host: options.host ?? 'localhost', ...options.headers },
        agent: false,
        localAddress: options.localAddress,
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
      },
    );
    sent.setTimeout(10_000, () => sent.destroy(new Error(`no answer on ${port} within 10 s`)));
    sent.on('error', reject);
    sent.end(options.method === 'GET' ? undefined : body);
  });
}

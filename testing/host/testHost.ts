/**
 * testHost.ts — real Debian bookworm test hosts (systemd + sshd in systemd-nspawn, each in its
 * own network namespace) for end-to-end tests that run provisioning scripts over real SSH.
 *
 *   const check = await canBuildHosts();
 *   const host = await startTestHost('e2e1', 1);   // 10.231.1.2, gateway 10.231.1.1
 *   const r = await host.ssh('systemctl is-system-running');
 *   const s = await host.ssh('sudo -n true', { user: host.sudoUser });
 *   await host.stop();
 *
 * startTestHost builds the cached rootfs if needed (build-rootfs.sh, ~1 min once), boots the
 * host (start-host.sh, a couple of seconds), starts the apt proxy (aptProxy.js) on
 * gateway:3142 in this process, and returns a handle. ssh() runs the real `ssh` client
 * asynchronously — never use spawnSync/execSync against the host: the apt proxy lives in
 * this process's event loop and would stall. Needs root. Uses child_process only.
 *
 * Env: LACCHAIN_E2E_HOSTS=0 makes canBuildHosts() answer "disabled"; LACCHAIN_TEST_VERBOSE=1
 * echoes the scripts' progress to stderr; LACCHAIN_TEST_CACHE moves the cache directory.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import { promises as fsp } from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startAptProxy } from './aptProxy';
import { kernelLinesSince, secondsSinceBoot } from './kernelLog';
import type { AptProxy } from './aptProxy';
import { PlainPeer, startPlainPeer } from '../networkPeer';

/**
 * The test hosts' networks (10.231.INDEX.0/30 each, testing/host/common.sh): the only ones the Besu stand-in's p2p
 * layer on a test host dials and accepts (never a real network's bootnode).
 */
export const TEST_HOSTS_NETWORK = '10.231.0.0/16';
/** The port of a test host's network peer, on its gateway. */
const NETWORK_PEER_PORT = 30303;

export interface SshResult {
  /** Exit status of the remote command (255: ssh itself failed; 124: timed out locally). */
  code: number;
  stdout: string;
  stderr: string;
}

export interface SshOptions {
  /** Login user; default "root". Use host.sudoUser for the sudo path. */
  user?: string;
  /** Written to the remote command's stdin. */
  input?: string;
  /** Local time limit in ms (default 600000); the ssh client is killed after it. */
  timeoutMs?: number;
}

/** The Debian releases a test host boots: bookworm (Debian 12, the default) and trixie (Debian 13). */
export type TestHostSystem = 'bookworm' | 'trixie';

/** How a test host is booted. */
export interface TestHostOptions {
  /** A disk saved by stopAndSave(): the host boots a copy of it (on the system it was saved from). */
  base?: string;
  /** The Debian release of a host booted bare (default: bookworm). */
  system?: TestHostSystem;
}

export interface TestHost {
  name: string;
  /** The Debian release it runs. */
  system: TestHostSystem;
  /** The host's address, e.g. 10.231.1.2. */
  ip: string;
  /** This machine's end of the veth pair, e.g. 10.231.1.1 (apt proxy on :3142; serve files here). */
  gateway: string;
  /** "root". */
  user: string;
  /** "operator": a non-root user with passwordless sudo. */
  sudoUser: string;
  /** OpenSSH private key (ed25519) accepted for root and operator. */
  privateKey: string;
  privateKeyFile: string;
  /** known_hosts with the host's own ed25519 key (for StrictHostKeyChecking=yes). */
  knownHostsFile: string;
  /** "ssh-ed25519 AAAA..." — the host key, e.g. for a pinned hostKey setting. */
  hostPublicKey: string;
  /** pid of the systemd-nspawn process. */
  pid: number;
  stateDir: string;
  /** http://GATEWAY:3142 */
  aptProxyUrl: string;
  /**
   * The enode of the host's network peer: a plain peer on its gateway (testing/networkPeer.ts) that a Besu stand-in
   * on the host dials (named in /etc/besu-standin/static-nodes, test-only), standing for the network's nodes it
   * reaches. It stays a peer when the node's contract registers it (testing/permissioning.ts: permissioned).
   */
  networkPeer: string;
  /**
   * What the network peer's p2p layer said so far (testing/networkPeer.ts: one event each; `up` names the node that
   * connected as the peer saw it, the address it connected from or was dialed at and its enode port).
   */
  networkPeerEvents(): Record<string, unknown>[];
  /** ssh client options (without the destination) for tests that spawn ssh/scp themselves. */
  sshOptions: string[];
  ssh(command: string, opts?: SshOptions): Promise<SshResult>;
  /**
   * The machine stopped hard and booted again on the same disk (crash-host.sh): every process inside killed at once,
   * then a boot with the same address and keys; resolves once SSH answers again.
   */
  crash(): Promise<void>;
  /**
   * Close the apt proxy and stop/remove the host. Idempotent. Killed at once, not powered off in order: its disk is
   * thrown away, and an orderly poweroff cost about 1.4 s of a core each (systemd-shutdown, in process accounting).
   */
  stop(): Promise<void>;
  /**
   * As stop(), keeping the host's disk in `dir` first, powered off in order so that the disk is as a machine leaves it:
   * startTestHost(…, { base: dir }) boots a copy of it.
   */
  stopAndSave(dir: string): Promise<void>;
}

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The process id the command ran as (for reading a signal trace by it). */
  pid?: number;
}

const HERE = __dirname;
const APT_PROXY_PORT = Number(process.env.LACCHAIN_TEST_APT_PROXY_PORT || 3142);
const verbose = process.env.LACCHAIN_TEST_VERBOSE === '1';

function run(
  cmd: string,
  args: string[],
  opts: { input?: string; timeoutMs?: number; echoStderr?: boolean; env?: Record<string, string> } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    const env = opts.env ? { ...process.env, ...opts.env } : process.env;
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer =
      opts.timeoutMs && opts.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, opts.timeoutMs)
        : undefined;
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      err.push(d);
      if (opts.echoStderr) process.stderr.write(d);
    });
    child.stdin.on('error', () => {
      /* remote side closed stdin early: not an error for us */
    });
    child.on('error', (e: Error) => {
      if (timer) clearTimeout(timer);
      resolve({ code: 127, stdout: '', stderr: `${cmd}: ${e.message}` });
    });
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
      if (timer) clearTimeout(timer);
      const stderr = Buffer.concat(err).toString('utf8');
      resolve({
        code: timedOut ? 124 : (code ?? (signal ? 128 : 255)),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: timedOut ? `${stderr}\n[timed out after ${opts.timeoutMs} ms]` : stderr,
        pid: child.pid,
      });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

async function commandExists(name: string): Promise<boolean> {
  const r = await run('sh', ['-c', `command -v ${name}`]);
  return r.code === 0;
}

/** Can this machine build and boot test hosts? (root, Linux, tools present or installable, netns works) */
export async function canBuildHosts(): Promise<{ ok: boolean; reason?: string }> {
  if (process.env.LACCHAIN_E2E_HOSTS === '0') return { ok: false, reason: 'disabled by LACCHAIN_E2E_HOSTS=0' };
  if (process.platform !== 'linux') return { ok: false, reason: `needs Linux (this is ${process.platform})` };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return { ok: false, reason: 'needs root (debootstrap, network namespaces, systemd-nspawn)' };
  }
  const tools: Array<[string, string]> = [
    ['debootstrap', 'debootstrap'],
    ['systemd-nspawn', 'systemd-container'],
    ['ip', 'iproute2'],
    ['ssh', 'openssh-client'],
    ['ssh-keygen', 'openssh-client'],
  ];
  const missing: string[] = [];
  for (const [cmd, pkg] of tools) if (!(await commandExists(cmd))) missing.push(pkg);
  if (missing.length > 0 && !(await commandExists('apt-get'))) {
    return { ok: false, reason: `missing ${Array.from(new Set(missing)).join(', ')} and no apt-get to install them` };
  }
  if (!missing.includes('iproute2')) {
    const probe = `lct-probe-${process.pid % 100000}`;
    const add = await run('ip', ['netns', 'add', probe]);
    await run('ip', ['netns', 'del', probe]);
    if (add.code !== 0) return { ok: false, reason: `cannot create a network namespace: ${add.stderr.trim()}` };
  }
  return missing.length > 0
    ? { ok: true, reason: `will install ${Array.from(new Set(missing)).join(', ')} with apt-get` }
    : { ok: true };
}

// Hosts not yet stopped: torn down synchronously if the process exits without stop().
const running = new Map<string, () => void>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    running.forEach((stopNow) => stopNow());
  });
}

function lastJsonLine(stdout: string): Record<string, unknown> {
  const lines = stdout
    .trim()
    .split('\n')
    .filter((l) => l.trim().startsWith('{'));
  if (lines.length === 0) throw new Error('start-host.sh printed no JSON');
  return JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
}

function str(o: Record<string, unknown>, k: string): string {
  const v = o[k];
  if (typeof v !== 'string') throw new Error(`start-host.sh JSON lacks string "${k}"`);
  return v;
}

/**
 * Build (if needed) and boot the real test host NAME with address 10.231.INDEX.2, start the apt
 * proxy on 10.231.INDEX.1:3142, and return a handle. NAME: 1-11 chars [a-z0-9-]; INDEX: 1..254,
 * unique among hosts running at the same time. A previous host with the same NAME is replaced.
 */
export async function startTestHost(name: string, index: number, options: TestHostOptions = {}): Promise<TestHost> {
  if (!/^[a-z][a-z0-9-]{0,10}$/.test(name)) throw new Error(`bad test host name "${name}"`);
  if (!Number.isInteger(index) || index < 1 || index > 254) throw new Error(`bad test host index ${index}`);

  const system: Record<string, string> = options.system ? { LACCHAIN_TEST_SYSTEM: options.system } : {};
  const build = await run('bash', [path.join(HERE, 'build-rootfs.sh')], {
    timeoutMs: 20 * 60_000,
    echoStderr: verbose,
    env: system,
  });
  if (build.code !== 0) throw new Error(`build-rootfs.sh failed (${build.code}):\n${build.stderr.slice(-4000)}`);

  const stopScript = path.join(HERE, 'stop-host.sh');
  const start = await run('bash', [path.join(HERE, 'start-host.sh'), name, String(index)], {
    timeoutMs: 5 * 60_000,
    echoStderr: verbose,
    env: { ...system, ...(options.base ? { LACCHAIN_TEST_HOST_BASE: options.base } : {}) },
  });
  if (start.code !== 0) {
    await run('bash', [stopScript, name]);
    throw new Error(`start-host.sh ${name} ${index} failed (${start.code}):\n${start.stderr.slice(-4000)}`);
  }
  installExitHook();
  running.set(name, () => {
    spawnSync('bash', [stopScript, name], { stdio: 'ignore', timeout: 60_000 });
  });

  let proxy: AptProxy | undefined;
  let peer: PlainPeer | undefined;
  try {
    const info = lastJsonLine(start.stdout);
    const ip = str(info, 'ip');
    const gateway = str(info, 'gateway');
    const privateKeyFile = str(info, 'privateKeyFile');
    const knownHostsFile = str(info, 'knownHostsFile');
    proxy = await startAptProxy({ host: gateway, port: APT_PROXY_PORT });
    peer = await startPlainPeer(gateway, NETWORK_PEER_PORT, { netrestrict: TEST_HOSTS_NETWORK });
    // At this process's exit, the network peer goes with the host (it would hold the gateway's port otherwise).
    const startedPeer = peer;
    running.set(name, () => {
      startedPeer.stop();
      spawnSync('bash', [stopScript, name], { stdio: 'ignore', timeout: 60_000 });
    });
    const privateKey = await fsp.readFile(privateKeyFile, 'utf8');
    const sshOptions = [
      '-F',
      'none',
      '-o',
      'BatchMode=yes',
      '-o',
      'IdentitiesOnly=yes',
      '-i',
      privateKeyFile,
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      `UserKnownHostsFile=${knownHostsFile}`,
      '-o',
      'GlobalKnownHostsFile=/dev/null',
      '-o',
      'ConnectTimeout=10',
      '-o',
      'ServerAliveInterval=15',
      '-o',
      'LogLevel=ERROR',
    ];
    // Root's sessions (the tests' own looks at the machine) share one SSH connection: a session over it takes
    // milliseconds, a new connection a quarter of a second or more. The steps and commands under test run as the sudo
    // user, each its own connection and login session, as the provider and the node tool make them (a cut kills
    // those sessions, never root's). Closed before the host stops or crashes, and by itself when idle.
    const rootSocket = path.join(str(info, 'stateDir'), 'root-connection');
    // Every session of the steps' user that ssh ended with 255, with its debug log's last lines and the machine's
    // journal, appended as it happens (issue 54): in the logs folder beside the hosts' state (testing/host/common.sh).
    const ssh255Record = path.join(str(info, 'stateDir'), '..', '..', 'logs', 'ssh-255.log');
    const rootShared = ['-o', `ControlPath=${rootSocket}`, '-o', 'ControlPersist=300'];
    let rootConnection: Promise<RunResult> | undefined;
    const closeRootConnection = () => {
      spawnSync('ssh', [...sshOptions, ...rootShared, '-O', 'exit', `root@${ip}`], {
        stdio: 'ignore',
        timeout: 10_000,
      });
      rootConnection = undefined;
    };
    const theProxy = proxy;
    const thePeer = peer;
    let stopped: Promise<void> | undefined;
    let sessions = 0;
    /** What sshd, logind and the kernel logged on the machine since `since` (epoch seconds), as one block. */
    const sshdSaid = async (since: number): Promise<string> => {
      const journal = await host.ssh(
        `journalctl --no-pager -o short-precise --since @${since} -t sshd -t systemd-logind -t systemd -t kernel 2>&1 | tail -n 60`,
        { timeoutMs: 30_000 },
      );
      return `\n[ssh ended 255; the machine's sshd, logind and kernel since then (exit ${journal.code}):]\n${journal.stdout}${journal.stderr}`;
    };
    const host: TestHost = {
      name,
      system: str(info, 'system') as TestHostSystem,
      ip,
      gateway,
      user: str(info, 'user'),
      sudoUser: str(info, 'sudoUser'),
      privateKey,
      privateKeyFile,
      knownHostsFile,
      hostPublicKey: str(info, 'hostPublicKey'),
      pid: Number(info.pid),
      stateDir: str(info, 'stateDir'),
      aptProxyUrl: theProxy.url,
      networkPeer: thePeer.enode,
      networkPeerEvents: () => thePeer.events(),
      sshOptions,
      ssh(command: string, opts: SshOptions = {}): Promise<SshResult> {
        const user = opts.user ?? 'root';
        // A session of the steps' user keeps ssh's own debug log in a file of its own (-E: nothing more on standard
        // error), read only when ssh ends it with 255: ssh then says no more at LogLevel ERROR in three cases that only
        // its debug log tells apart: the remote command ended by a signal ('rtype exit-signal', 'Exit status -1'), the
        // remote command exiting 255 itself ('Exit status 255'), and this side's ssh ended by a signal that a process of
        // this machine sent it ('Killed by signal 15.': the machine's sshd then logs a plain 'disconnected by user').
        const debugLog =
          user === 'root' ? undefined : path.join(os.tmpdir(), `lacchain-ssh-${process.pid}-${++sessions}.log`);
        const call = () =>
          run(
            'ssh',
            [
              ...(debugLog ? ['-E', debugLog, '-o', 'LogLevel=DEBUG1'] : []),
              ...sshOptions,
              ...(user === 'root' ? [...rootShared, '-o', 'ControlMaster=auto'] : []),
              `${user}@${ip}`,
              command,
            ],
            {
              input: opts.input,
              timeoutMs: opts.timeoutMs ?? 600_000,
            },
          );
        // A session of the steps' user that ssh ended itself (255) carries ssh's debug log's last words and what the
        // machine's sshd, logind and kernel said meanwhile, so that such an end names its cause (issue 54); ssh's
        // errors are on standard error as they would have been.
        if (debugLog) {
          const beganAt = new Date();
          const began = Math.floor(beganAt.getTime() / 1000) - 1;
          const bootSecondsAtStart = secondsSinceBoot();
          return call().then(async (result) => {
            const said = fs.existsSync(debugLog) ? fs.readFileSync(debugLog, 'utf8') : '';
            fs.rmSync(debugLog, { force: true });
            if (result.code !== 255) return result;
            const errors = said.split('\n').filter((line) => line !== '' && !line.startsWith('debug1:'));
            const last = said
              .split('\n')
              .filter((line) => line.startsWith('debug1:'))
              .slice(-25);
            const words = [...errors, "[ssh's debug log, its last lines:]", ...last].join('\n');
            // Which ssh it was and when, to read a signal trace by (trace-signals.sh: `pid=<its pid>`), and this
            // machine's kernel log meanwhile: a crash or the OOM killer is named there only.
            const here = [
              `[this side: ssh pid ${result.pid}, from ${beganAt.toISOString()} to ${new Date().toISOString()}; this machine's kernel log meanwhile:]`,
              ...kernelLinesSince(bootSecondsAtStart),
            ].join('\n');
            const stderr = `${result.stderr}${words}${await sshdSaid(began)}\n${here}`;
            // Kept where no test's handling of the result can lose it (a retried step, a failure a test expects).
            fs.mkdirSync(path.dirname(ssh255Record), { recursive: true });
            fs.appendFileSync(
              ssh255Record,
              `=== ${new Date().toISOString()} ${name} ${user}: ${command.slice(0, 200)}\n${stderr}\n`,
            );
            return { ...result, stderr };
          });
        }
        // The shared connection is made once, before root's first session (not by several sessions at once); a session
        // that finds it gone (the machine rebooted) makes a new one by itself (ControlMaster=auto).
        rootConnection ??= run(
          'ssh',
          [...sshOptions, ...rootShared, '-o', 'ControlMaster=yes', '-f', '-N', `root@${ip}`],
          {
            timeoutMs: 60_000,
          },
        );
        return rootConnection.then(call);
      },
      async crash(): Promise<void> {
        closeRootConnection();
        const r = await run('bash', [path.join(HERE, 'crash-host.sh'), name], {
          timeoutMs: 5 * 60_000,
          echoStderr: verbose,
        });
        if (r.code !== 0) throw new Error(`crash-host.sh ${name} failed (${r.code}):\n${r.stderr.slice(-4000)}`);
        host.pid = Number(lastJsonLine(r.stdout).pid);
      },
      stop(): Promise<void> {
        return stopWith({ LACCHAIN_TEST_STOP_TIMEOUT: '0' });
      },
      stopAndSave(dir: string): Promise<void> {
        return stopWith({ LACCHAIN_TEST_SAVE_HOST: dir });
      },
    };
    const stopWith = (env: Record<string, string>): Promise<void> => {
      if (!stopped) {
        closeRootConnection();
        stopped = (async () => {
          await theProxy.close();
          thePeer.stop();
          const r = await run('bash', [stopScript, name], { timeoutMs: 300_000, echoStderr: verbose, env });
          running.delete(name);
          if (r.code !== 0) throw new Error(`stop-host.sh ${name} failed (${r.code}):\n${r.stderr}`);
        })();
      }
      return stopped;
    };
    // The Besu stand-in's p2p layer on the host: only the test hosts' networks, and the network peer as a static node.
    const standinFiles = await host.ssh(
      `mkdir -p /etc/besu-standin && echo ${TEST_HOSTS_NETWORK} >/etc/besu-standin/netrestrict && ` +
        `echo ${thePeer.enode} >/etc/besu-standin/static-nodes`,
    );
    if (standinFiles.code !== 0) throw new Error(`cannot write /etc/besu-standin on ${name}: ${standinFiles.stderr}`);
    return host;
  } catch (e) {
    peer?.stop();
    if (proxy) await proxy.close();
    await run('bash', [stopScript, name]);
    running.delete(name);
    throw e;
  }
}

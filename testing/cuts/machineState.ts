/**
 * What the fault-injection harness reads from an SSH test host to judge a cut: the node's files (by digest), its key
 * file, the release link, what answers from outside, and the node's own answers. One SSH session gathers the files;
 * the ports are probed from this machine, as a peer on the network would connect.
 */
import * as net from 'net';
import { DEFAULT_NODE_HOME, DEFAULT_NODE_SERVICE, DEFAULT_SERVICE_USER } from '../../core/catalog/defaults';
import { NODE_HOME_LAYOUT } from '../../core/catalog/remote';
import { PORTS } from '../../core/catalog/ports';
import { BEFORE_RESTORE_SUFFIX, MACHINE_BACKUP_FILES } from '../../core/catalog/backups';
import { readScript, REMOTE_LIBRARY_SCRIPT } from '../../core/scripts';
import type { TestHost } from '../host/testHost';

/** The node's home on the test hosts (the catalog's default, as the stacks under test leave it). */
export const HOME = DEFAULT_NODE_HOME;

const DATA_DIR = `${HOME}/${NODE_HOME_LAYOUT.dataDir}`;
/** Where a restore sets the node's data aside while it swaps the restored data in. */
const DATA_ASIDE = `${DATA_DIR}${BEFORE_RESTORE_SUFFIX}`;

/**
 * The files the provisioning writes whose content depends only on the stack (not on the machine or the time): the
 * node's configuration, launchers and identity files, the units, the proxy site, the log rotation and the backup
 * settings. The node key is judged on its own (keyState); TLS material, logs, data and releases are not compared, nor
 * what a restore keeps beside the data while it works. The identity files in the data folder are read where the node's
 * data is: in the data folder, or set aside by a restore cut before the restored data was in place (nothing lost).
 */
const TRACKED_FILES = [
  `find ${HOME} -xdev \\( -path '${DATA_DIR}' -o -path '${DATA_ASIDE}' -o -path '${HOME}/.restore-*'`,
  `-o -path '${HOME}/${NODE_HOME_LAYOUT.logsDir}'`,
  `-o -path '${HOME}/${NODE_HOME_LAYOUT.tlsDir}' -o -path '${HOME}/${NODE_HOME_LAYOUT.releasesDir}'`,
  `-o -path '${HOME}/${NODE_HOME_LAYOUT.companionsDir}/*/releases' -o -path '${HOME}/${NODE_HOME_LAYOUT.companionsDir}/*/log'`,
  `-o -path '${HOME}/${NODE_HOME_LAYOUT.companionsDir}/*/state' \\) -prune -o -type f -print;`,
  `data=${DATA_DIR}; [ -e "$data" ] || data=${DATA_ASIDE};`,
  `for f in ${[NODE_HOME_LAYOUT.genesis, NODE_HOME_LAYOUT.nodeAddress, NODE_HOME_LAYOUT.enode]
    .map((file) => file.slice(NODE_HOME_LAYOUT.dataDir.length + 1))
    .join(' ')}; do [ -f "$data/$f" ] && echo "$data/$f"; done;`,
  'find /etc/systemd/system /etc/nginx/conf.d /etc/lacchain -maxdepth 1 -type f -print 2>/dev/null;',
  "find /etc/nginx /etc/logrotate.d -maxdepth 1 -type f -name 'lacchain-*' -print 2>/dev/null",
].join(' ');

/** Each tracked file's SHA-256 by path (a file that is not there is absent from the map). */
export type FileDigests = Record<string, string>;

/** Reads the tracked files' digests (the data folder's under its own name, wherever a restore put it). */
export async function fileDigests(host: TestHost): Promise<FileDigests> {
  const out = await rootSh(host, `{ ${TRACKED_FILES}; } | sort -u | xargs -r -d '\\n' sha256sum`);
  const digests: FileDigests = {};
  for (const line of out.split('\n').filter(Boolean)) {
    const [digest, file] = line.split(/\s+/, 2);
    digests[file.startsWith(`${DATA_ASIDE}/`) ? `${DATA_DIR}/${file.slice(DATA_ASIDE.length + 1)}` : file] = digest;
  }
  return digests;
}

/** The node key file as found: absent, or its owner, mode and whether it holds exactly `key`. */
export type KeyState = { present: false } | { present: true; owner: string; mode: string; holdsKey: boolean };

/** Reads the key file's owner and mode and compares its content with `key` (on the machine: the key never travels back). */
export async function keyState(host: TestHost, key: string): Promise<KeyState> {
  const file = `${HOME}/${NODE_HOME_LAYOUT.key}`;
  const out = await rootSh(
    host,
    `if [ -f ${file} ]; then stat -c '%U:%G %a' ${file}; ` +
      `[ "$(tr -d '\\n' < ${file})" = "$(cat)" ] && echo same || echo different; else echo absent; fi`,
    key,
  );
  if (out === 'absent') return { present: false };
  const [ownerMode, content] = out.split('\n');
  const [owner, mode] = ownerMode.split(' ');
  return { present: true, owner, mode, holdsKey: content === 'same' };
}

/** Where the release link points and whether that release is complete (its Besu executable is there). */
export async function releaseLink(host: TestHost): Promise<{ target: string; complete: boolean } | undefined> {
  const link = `${HOME}/${NODE_HOME_LAYOUT.releasesDir}/current`;
  const out = await rootSh(
    host,
    `if [ -L ${link} ]; then basename "$(readlink ${link})"; [ -x ${link}/bin/besu ] && echo complete || echo incomplete; fi`,
  );
  if (!out) return undefined;
  const [target, complete] = out.split('\n');
  return { target, complete: complete === 'complete' };
}

/** Whether config.toml (when there) parses as TOML, with the parser's complaint when not. */
export async function configParses(host: TestHost): Promise<string | undefined> {
  const file = `${HOME}/${NODE_HOME_LAYOUT.config}`;
  const out = await rootSh(
    host,
    `[ -f ${file} ] || exit 0; python3 -c 'import sys, tomllib; tomllib.load(open(sys.argv[1], "rb"))' ${file} 2>&1 | tail -n 1`,
  );
  return out || undefined;
}

/**
 * The TCP ports that accept a connection from this machine (a peer's view): every port the host listens on at an
 * address other than the loopback, tried from outside. Sorted.
 */
export async function reachableTcpPorts(host: TestHost): Promise<number[]> {
  const out = await rootSh(host, "ss -Htln | awk '{print $4}'");
  const ports = new Set<number>();
  for (const local of out.split('\n').filter(Boolean)) {
    const at = local.lastIndexOf(':');
    const address = local.slice(0, at);
    if (/^(127\.|\[::1\])/.test(address)) continue;
    ports.add(Number(local.slice(at + 1)));
  }
  const open: number[] = [];
  for (const port of [...ports].sort((a, b) => a - b)) if (await connects(host.ip, port)) open.push(port);
  return open;
}

function connects(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: ip, port, timeout: 1500 });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/** One JSON-RPC answer of the node on the machine (its plain-HTTP RPC on the loopback), or undefined. */
export async function nodeAnswer(host: TestHost, method: string): Promise<unknown> {
  const body = JSON.stringify({ jsonrpc: '2.0', method, params: [], id: 1 });
  const out = await host.ssh(
    `curl -s -m 3 -H 'Host: localhost' -H 'Content-Type: application/json' --data '${body}' http://127.0.0.1:${PORTS.rpcHttp}/`,
    { timeoutMs: 20_000 },
  );
  try {
    return (JSON.parse(out.stdout) as { result?: unknown }).result;
  } catch {
    return undefined;
  }
}

/** The node's head (eth_blockNumber), or undefined when it does not answer. */
export async function nodeHead(host: TestHost): Promise<number | undefined> {
  const head = await nodeAnswer(host, 'eth_blockNumber');
  return typeof head === 'string' ? parseInt(head, 16) : undefined;
}

/** Waits (at most `seconds`) until the node answers net_enode, and returns its answer (undefined if it never did). */
export async function enodeAnswered(host: TestHost, seconds: number): Promise<string | undefined> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const enode = await nodeAnswer(host, 'net_enode');
    if (typeof enode === 'string' || Date.now() > deadline) return enode as string | undefined;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * The lines where Besu refused data a newer release opened (version-compatibility protection), in the node's journal
 * and info log: a start on such data is what the protection stops.
 */
export async function versionRefusals(host: TestHost): Promise<string[]> {
  const out = await rootSh(
    host,
    `{ journalctl -q -u ${DEFAULT_NODE_SERVICE} --no-pager 2>/dev/null; cat ${HOME}/${NODE_HOME_LAYOUT.logsDir}/*.log 2>/dev/null; } | grep -i 'version compatibility protection' || true`,
  );
  return out.split('\n').filter(Boolean);
}

/** Whether the node's service is active. */
export async function serviceActive(host: TestHost): Promise<boolean> {
  return (await host.ssh(`systemctl is-active --quiet ${DEFAULT_NODE_SERVICE}`)).code === 0;
}

/** The owner the key file must have, and its mode, as docs/security.md documents them. */
export const KEY_OWNER = `${DEFAULT_SERVICE_USER}:${DEFAULT_SERVICE_USER}`;
export const KEY_MODES = ['600'];

async function rootSh(host: TestHost, command: string, input?: string): Promise<string> {
  const result = await host.ssh(command, { timeoutMs: 60_000, input });
  if (result.code !== 0)
    throw new Error(`on ${host.name}: ${command.slice(0, 80)}: exit ${result.code}: ${result.stderr}`);
  return result.stdout.trim();
}

/** restic's own check of the node's backup repository (`restic check`), with its last line when it fails. */
export async function resticCheck(host: TestHost): Promise<string | undefined> {
  const result = await host.ssh(
    `set -a; . ${backupEnvironment}; set +a; RESTIC_CACHE_DIR=/var/cache/lacchain-restic restic check 2>&1 | tail -n 1; exit "\${PIPESTATUS[0]}"`,
    { timeoutMs: 300_000 },
  );
  return result.code === 0 ? undefined : result.stdout.trim() || `exit ${result.code}`;
}

/** What a restore leaves beside the data folder while it works: none of it may stay once it is done. */
export async function restoreLeftovers(host: TestHost): Promise<string[]> {
  const dataDir = `${HOME}/${NODE_HOME_LAYOUT.dataDir}`;
  const out = await rootSh(host, `ls -d ${HOME}/.restore-* ${dataDir}${BEFORE_RESTORE_SUFFIX} 2>/dev/null || true`);
  return out.split('\n').filter(Boolean);
}

/** The node's backups as its backup command lists them: each one's time and tags. */
export async function backupsOnMachine(host: TestHost): Promise<Array<{ time: string; tags: string[] }>> {
  return JSON.parse(await rootSh(host, `${HOME}/${MACHINE_BACKUP_FILES.command} list`)) as Array<{
    time: string;
    tags: string[];
  }>;
}

/** The backup environment of the node (the catalog's, for the default service). */
const backupEnvironment = MACHINE_BACKUP_FILES.environment(DEFAULT_NODE_SERVICE);

/**
 * Temporary files a step wrote beside a file and never renamed into place: the fixed name the steps use
 * (`<file>.lacchain-new~`, scripts/remote/lib.sh), or a random one beside an existing file (`<file>.XXXXXX`, as
 * mktemp names them). After a recovery none may remain: left in the data folder, a copy of the node key would go into
 * every backup; in /etc/logrotate.d, a second copy of a rotation makes logrotate refuse it.
 */
export async function leftoverTemporaryFiles(host: TestHost): Promise<string[]> {
  const out = await rootSh(
    host,
    `find ${HOME} /etc/systemd/system /etc/logrotate.d /etc/nginx /etc/lacchain -xdev ` +
      `\\( -path '${HOME}/${NODE_HOME_LAYOUT.releasesDir}' -o -path '${HOME}/${NODE_HOME_LAYOUT.logsDir}' ` +
      `-o -path '${HOME}/${NODE_HOME_LAYOUT.companionsDir}/*/releases' \\) -prune -o -type f -print 2>/dev/null | ` +
      `python3 -c 'import os, re, sys
for name in sys.stdin.read().split("\\n"):
    if name.endswith("${SIBLING_TEMP_SUFFIX}") or (re.fullmatch(r".+\\.[A-Za-z0-9]{6}", name) and os.path.exists(name[:-7])):
        print(name)'`,
  );
  return out.split('\n').filter(Boolean);
}

/** The name the steps give a file they write beside its place before renaming it, as scripts/remote/lib.sh sets it. */
export const SIBLING_TEMP_SUFFIX = /export SIBLING_TEMP_SUFFIX='([^']+)'/.exec(readScript(REMOTE_LIBRARY_SCRIPT))![1];

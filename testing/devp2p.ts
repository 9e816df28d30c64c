/**
 * go-ethereum's `devp2p` tool (built by tools/devp2p/build.sh, tests/setup.sh): another implementation of the devp2p
 * layer the tests check the stack's enodes with, run on this machine, outside the nodes' machines.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { PROJECT_DIR } from './run';

/** The tool's path, or why it is not there (tools/devp2p/build.sh --check). */
export function devp2pTool(): { path?: string; missing?: string } {
  const built = spawnSync('bash', [path.join(PROJECT_DIR, 'tools/devp2p/build.sh'), '--check'], { encoding: 'utf8' });
  return built.status === 0 ? { path: built.stdout.trim() } : { missing: built.stderr.trim() };
}

/** What one run of the tool said: its exit code and its output. */
export interface Devp2pResult {
  code: number | null;
  said: string;
}

/** Runs `devp2p <args>` (20 s at most); throws when the tool is not built. */
export function devp2p(...args: string[]): Devp2pResult {
  return devp2pIn(undefined, ...args);
}

/**
 * Runs `devp2p <args>` in the network namespace `namespace` (a test host's, `lct-<name>`: from that machine's address),
 * or in this machine's when undefined (20 s at most); throws when the tool is not built.
 */
function devp2pIn(namespace: string | undefined, ...args: string[]): Devp2pResult {
  const tool = devp2pTool();
  if (tool.path === undefined) throw new Error(tool.missing);
  const [command, ...rest] =
    namespace === undefined ? [tool.path, ...args] : ['/usr/sbin/ip', 'netns', 'exec', namespace, tool.path, ...args];
  const result = spawnSync(command, rest, { encoding: 'utf8', timeout: 20_000 });
  return { code: result.status, said: `${result.stdout}${result.stderr}`.trim() };
}

/**
 * `devp2p rlpx ping <enode>`: the RLPx handshake over TCP, encrypted to the enode's key, and the node's Hello; from the
 * network namespace `namespace` when given (a test host's), else from this machine.
 */
export function rlpxPing(enode: string, namespace?: string): Devp2pResult {
  return devp2pIn(namespace, 'rlpx', 'ping', enode);
}

/** `devp2p discv4 ping <enode>`: a discovery v4 ping over UDP to the enode's address, answered by the node's pong. */
export function discv4Ping(enode: string): Devp2pResult {
  return devp2p('discv4', 'ping', enode);
}

/**
 * The tools cache the test harness keeps outside the work tree, between runs (the Go programs tools/lib/cache.sh
 * builds, the packed images and releases): LACCHAIN_TOOLS_CACHE, else XDG_CACHE_HOME's (or ~/.cache's)
 * lacchain-besu-node.
 */
import * as os from 'os';
import * as path from 'path';

/** The tools cache's folder. */
export function toolsCache(): string {
  const xdgCache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return process.env.LACCHAIN_TOOLS_CACHE || path.join(xdgCache, 'lacchain-besu-node');
}

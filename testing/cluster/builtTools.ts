/**
 * The folders of the tools tests/setup.sh builds into the cache outside the work tree (each build script's `--check`:
 * the folder when built, else why not), for the kubelet tier (kubeletSuite.ts, kubelet.ts).
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { PROJECT_DIR } from '../run';

/** The build scripts of the real worker's tools, by what they build. */
export const WORKER_TOOL_SCRIPTS = {
  kubelet: 'tools/kubernetes/build-kubelet.sh',
  kubeProxy: 'tools/kubernetes/build-kube-proxy.sh',
  metallb: 'tools/metallb/build.sh',
} as const;

/** The folder `script` (relative to the project) built, or why it is not there. */
export function builtTool(script: string): { dir: string } | { unavailable: string } {
  const result = spawnSync('bash', [path.join(PROJECT_DIR, script), '--check'], { encoding: 'utf8' });
  if (result.status !== 0) return { unavailable: result.stderr.trim().split('\n').pop() ?? `${script}: not built` };
  return { dir: result.stdout.trim() };
}

/** The folder `script` built; throws why it is not there. */
export function builtToolDir(script: string): string {
  const found = builtTool(script);
  if ('unavailable' in found) throw new Error(found.unavailable);
  return found.dir;
}

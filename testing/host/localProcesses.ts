import { execFileSync } from 'child_process';

/**
 * The pids of this machine's processes whose command line ends with `commandLine` (the test hosts' processes are this
 * machine's too): for a witness process a test starts, e.g. `sleep 99999.<test pid>`.
 */
export function processesRunning(commandLine: string): string[] {
  const pattern = `${commandLine.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

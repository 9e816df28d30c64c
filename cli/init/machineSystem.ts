/**
 * The machine's system, read over SSH before anything is deployed: `cat /etc/os-release` (read-only), only when init
 * knows where the machine is and its pinned host key (never trusting another key). A system the preflight step would
 * refuse is then refused by init, not at the first step of `pulumi up`; written as the inventory's `os`.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { knownHostsLine, sshArguments } from '../../core/operations/clients';
import { withoutControlSequences } from '../../core/operations/terminalText';
import { runClient } from '../operations/process';

/** How long init waits for the machine's answer. */
const READ_TIMEOUT_MS = 10_000;
/** How much of the answer init reads at most: an os-release file is well under 4 KiB. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Where the machine is, as the inventory answers say. */
export interface MachineAddress {
  host: string;
  port: number;
  user: string;
  /** The pinned host key (inventory host_key): without one, nothing is read. */
  hostKey: string;
  /** The private key to log in with (default: ssh's own). */
  keyFile?: string;
}

/** `<ID> <VERSION_ID>` of an os-release file's text (its values unquoted), as an inventory's `os` names a system. */
export function systemOfOsRelease(text: string): string | undefined {
  const field = (name: string) => {
    const match = new RegExp(`^${name}=(.*)$`, 'm').exec(text);
    return match?.[1].trim().replace(/^(["'])(.*)\1$/, '$2');
  };
  const [id, version] = [field('ID'), field('VERSION_ID')];
  return id && version && /^[a-z0-9._-]+$/.test(id) && /^[0-9][0-9.]*$/.test(version) ? `${id} ${version}` : undefined;
}

/** The machine's system, or why it could not be read (one line). */
export async function readMachineSystem(machine: MachineAddress): Promise<{ system: string } | { reason: string }> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-init-ssh-'));
  try {
    const knownHosts = path.join(folder, 'known_hosts');
    fs.writeFileSync(knownHosts, knownHostsLine(machine.host, machine.port, machine.hostKey));
    const args = [
      ...sshArguments({ keyFile: machine.keyFile, knownHostsFile: knownHosts, options: [] }),
      ...['-p', String(machine.port), `${machine.user}@${machine.host}`, 'cat /etc/os-release'],
    ];
    const result = await runClient('ssh', args, undefined, READ_TIMEOUT_MS, MAX_ANSWER_BYTES);
    const system = result.code === 0 ? systemOfOsRelease(result.stdout) : undefined;
    if (system) return { system };
    // The machine is not trusted yet: what it (or ssh for it) said must not drive the operator's terminal.
    const said = withoutControlSequences(result.stderr).trim().split('\n').pop();
    return {
      reason: result.code === 0 ? 'its /etc/os-release names no ID and VERSION_ID' : said || `ssh exit ${result.code}`,
    };
  } catch (error) {
    return { reason: (error as Error).message };
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

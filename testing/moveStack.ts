/**
 * The stacks of the move's tests (machine to machine, into a pod and out of one, and their cuts): one writer on a
 * test host, its release served by the old host's own server, logged in by agent, companions off, and the same stack
 * file with the node on another host, read as the move reads it.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DEFAULT_NODE_HOME, DEFAULT_NODE_SERVICE } from '../core/catalog/defaults';
import type { StackName } from '../core/catalog/networks';
import { MIN_START_TIMEOUT_SECONDS } from '../core/catalog/remote';
import type { KubernetesNodeSettings, SshNodeSettings } from '../core/settings/model';
import { movedStackFile, movedToClusterStackFile } from '../cli/operations/moveStackFile';
import { loadOperatorStack } from '../cli/operatorStack';
import { COMPANIONS_OFF } from './fixtures';
import { packagesInstalledDisk } from './host/packagesDisk';
import { startTestHost, TestHost } from './host/testHost';
import { startReleaseHost, stopReleaseHost, ReleaseHost } from './releaseHost';
import { sshWriterStack } from './sshStacks';
import { asRoot } from './hostNode';

/** The Besu release the machine-to-machine move tests install (the stand-in's). */
export const MOVE_RELEASE = '24.1.0';

/** The moved node of the move tests: its stack, its name, and its service and data folder on a machine. */
export const MOVED_WRITER = {
  stack: 'testnet',
  node: 'writer',
  service: DEFAULT_NODE_SERVICE,
  data: `${DEFAULT_NODE_HOME}/data`,
} as const;

/** The stack of one writer named `nodeName` on `host`, release `version` from `served`'s server. */
export function moveWriterStack(
  host: TestHost,
  served: ReleaseHost,
  version: string,
  names: { nodeName: string; dnsName: string },
): Record<string, unknown> {
  const config = sshWriterStack(host, {
    version,
    releaseBaseUrl: served.files.url,
    releaseDir: served.work,
    ...names,
    sshLogin: 'agent',
  });
  const [node] = config['lacchain:nodes'] as Record<string, unknown>[];
  Object.assign(node.inventory as Record<string, unknown>, { start_timeout_seconds: MIN_START_TIMEOUT_SECONDS });
  config['lacchain:companions'] = COMPANIONS_OFF;
  return config;
}

/**
 * Stack file `configFile`'s only node, where it is (`from`) and on `there` (`to`), and the file's text with it moved
 * there (`movedText`), read from `check` as `npm run node -- move` reads it.
 */
export function movedTo(
  stack: StackName,
  configFile: string,
  node: string,
  there: TestHost,
  check: string,
): { movedText: string; from: SshNodeSettings; to: SshNodeSettings } {
  const movedText = movedStackFile(fs.readFileSync(configFile, 'utf8'), node, {
    host: there.ip,
    host_key: there.hostPublicKey,
    node_ip: there.ip,
  });
  fs.mkdirSync(path.dirname(check), { recursive: true });
  fs.writeFileSync(check, movedText);
  const from = loadOperatorStack(stack, configFile).settings.nodes[0] as SshNodeSettings;
  const to = loadOperatorStack(stack, check).settings.nodes[0] as SshNodeSettings;
  return { movedText, from, to };
}

/**
 * Stack file `configFile`'s only node, on its machine (`from`) and as a cluster node (`to`, its values file beside the
 * stack file), and the file's text with it in the cluster (`movedText`), read from `check` as `move --to-kubernetes`
 * reads it.
 */
export function movedIntoCluster(
  stack: StackName,
  configFile: string,
  node: string,
  check: string,
): { movedText: string; from: SshNodeSettings; to: KubernetesNodeSettings } {
  const movedText = movedToClusterStackFile(fs.readFileSync(configFile, 'utf8'), node);
  fs.writeFileSync(check, movedText);
  const from = loadOperatorStack(stack, configFile).settings.nodes[0] as SshNodeSettings;
  const to = loadOperatorStack(stack, check).settings.nodes[0] as KubernetesNodeSettings;
  fs.rmSync(check);
  return { movedText, from, to };
}

/**
 * Makes `target`, a move's new host, reach `served`'s release server (a test host has no default route: only this
 * machine's address of the old host's link, routed through its own) and trust it, and lets the operator's key (the old
 * host's) log in to it, as root and as its sudo user.
 */
export async function joinMoveHosts(target: TestHost, served: ReleaseHost): Promise<void> {
  await asRoot(target, `ip route replace ${served.host.gateway}/32 via ${target.gateway}`);
  const tls = fs.readdirSync(served.work).find((f) => f.startsWith('.tls-'));
  const certificate = fs.readFileSync(path.join(served.work, tls!, 'cert.pem'), 'utf8');
  await target.ssh('cat >> /etc/ssl/certs/ca-certificates.crt', { input: certificate });
  const publicKey = execFileSync('ssh-keygen', ['-y', '-f', served.host.privateKeyFile], { encoding: 'utf8' }).trim();
  await asRoot(
    target,
    `for home in /root /home/${target.sudoUser}; do printf '%s\\n' '${publicKey}' >> "$home/.ssh/authorized_keys"; done`,
  );
}

/** The two hosts of a machine-to-machine move test and its temporary folder, started before its tests. */
export interface MoveHosts {
  /** The node's first machine, which also serves its release. */
  old: ReleaseHost;
  /** The machine the node moves to. */
  target: TestHost;
  /** The test's temporary folder (its stack files). */
  dir: string;
}

/**
 * Starts a move test's two hosts before its tests (`names` and `slots`: the old host's then the new one's) joined as
 * joinMoveHosts does, with a temporary folder named after `folder`, and stops them after: read the hosts in tests.
 */
export function moveHostsForSuite(names: [string, string], slots: [number, number], folder: string): MoveHosts {
  const hosts = {} as MoveHosts;
  beforeAll(async () => {
    hosts.dir = fs.mkdtempSync(path.join(os.tmpdir(), `lacchain-${folder}-`));
    hosts.old = await startReleaseHost(names[0], slots[0], [MOVE_RELEASE], { packagesInstalled: true });
    hosts.target = await startTestHost(names[1], slots[1], { base: await packagesInstalledDisk() });
    await joinMoveHosts(hosts.target, hosts.old);
  });
  afterAll(async () => {
    await hosts.target?.stop();
    if (hosts.old) await stopReleaseHost(hosts.old);
    if (hosts.dir) fs.rmSync(hosts.dir, { recursive: true, force: true });
  });
  return hosts;
}

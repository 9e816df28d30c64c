/**
 * The stacks of the move's tests (machine to machine, into a pod and out of one, and their cuts): one writer on a
 * test host, its release served by the old host's own server, logged in by agent, companions off, and the same stack
 * file with the node on another host, read as the move reads it.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { StackName } from '../core/catalog/networks';
import { MIN_START_TIMEOUT_SECONDS } from '../core/catalog/remote';
import type { KubernetesNodeSettings, SshNodeSettings } from '../core/settings/model';
import { movedStackFile, movedToClusterStackFile } from '../cli/operations/moveStackFile';
import { loadOperatorStack } from '../cli/operatorStack';
import { COMPANIONS_OFF } from './fixtures';
import type { TestHost } from './host/testHost';
import type { ReleaseHost } from './releaseHost';
import { sshWriterStack } from './sshStacks';
import { asRoot } from './hostNode';

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

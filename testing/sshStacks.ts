/**
 * The stacks of one SSH node on a test host that the end-to-end tests and the SSH benchmark deploy: its release and
 * its companions' stand-ins served from the test's HTTPS server, each pinned by its own digest.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { RELAY_SIGNER } from '../core/catalog/companions';
import { NETWORKS, type NetworkName } from '../core/catalog/networks';
import type { NodeType } from '../core/catalog/nodeTypes';
import { testPublicIp } from './fixtures';
import type { TestHost } from './host/testHost';
import { companionFile, releaseDigest, ROTATION_STANDIN_FILE } from './standinReleases';

/**
 * A testnet stack with one SSH writer on the test host, its release served from `releaseBaseUrl` (https) and pinned
 * by the digest of the archive packed in `releaseDir`.
 */
export function sshWriterStack(host: TestHost, options: SshNodeStackOptions): Record<string, unknown> {
  return sshNodeStack(host, { ...options, typenode: 'writer', network: 'open-protestnet' });
}

/** What a test stack of one SSH node is made of. */
export interface SshNodeStackOptions {
  version: string;
  releaseBaseUrl: string;
  releaseDir: string;
  nodeName: string;
  dnsName: string;
  node?: string;
  /** The monitoring client's image and server (a stand-in registry and server); off when not given. */
  ethstats?: { image: string; imageDigest: string; serverUrl: string };
  /** The bearer token of the machine's metrics endpoint (`lacchain:metricsToken`); no endpoint when not given. */
  metricsToken?: string;
  /** The node's own Java runtime archive (inventory java_runtime_url and java_runtime_sha256). */
  javaRuntime?: { url: string; sha256: string };
  /**
   * How `pulumi up` would log in: `agent` stores no `lacchain:sshPrivateKey` (the operator's ssh agent, the default);
   * otherwise the host's key is stored, as a runner without an agent does.
   */
  sshLogin?: 'agent';
}

/**
 * A stack with one SSH node of `typenode` on `network`, on the test host: its release served from `releaseBaseUrl`
 * (https) and pinned by the digest of the archive packed in `releaseDir`, and its companions' stand-ins served beside
 * it, each pinned by its own digest.
 */
export function sshNodeStack(
  host: TestHost,
  options: SshNodeStackOptions & { typenode: NodeType; network: NetworkName },
): Record<string, unknown> {
  const standin = (file: string) => ({
    releaseUrl: `${options.releaseBaseUrl}/${file}`,
    sha256: createHash('sha256')
      .update(fs.readFileSync(path.join(options.releaseDir, file.replace('{version}', RELAY_SIGNER.defaultVersion))))
      .digest('hex'),
  });
  return {
    'lacchain:network': options.network,
    'lacchain:nodes': [
      {
        name: options.node ?? options.typenode,
        typenode: options.typenode,
        target: 'ssh',
        inventory: {
          host: host.ip,
          user: host.sudoUser,
          host_key: host.hostPublicKey,
          // The address in the enode: the test host's own, but on mainnet, which refuses a private one, a public
          // stand-in (Besu listens on every address of the host, so peers and the tests still reach it at host.ip).
          node_ip: NETWORKS[options.network].allowsNonPublicAddresses
            ? host.ip
            : testPublicIp(Number(host.ip.split('.')[2])),
          node_name: options.nodeName,
          node_email: 'ops@example.org',
          node_release_version: options.version,
          dns_name: options.dnsName,
          release_url: `${options.releaseBaseUrl}/besu-{version}.tar.gz`,
          release_sha256: releaseDigest(options.releaseDir, options.version),
          ...(options.javaRuntime
            ? { java_runtime_url: options.javaRuntime.url, java_runtime_sha256: options.javaRuntime.sha256 }
            : {}),
          // The test host is smaller than a production network asks for.
          ...(options.network === 'mainnet-omega' ? { allow_below_minimum_hardware: true } : {}),
        },
      },
    ],
    // The companions' stand-ins, served beside the releases and pinned by their own digests; the monitoring client as
    // given.
    'lacchain:companions': {
      relaySigner: standin(companionFile('{version}')),
      rotationValidator: standin(ROTATION_STANDIN_FILE),
      ethstats: options.ethstats ?? { enabled: false },
    },
    ...(options.sshLogin === 'agent' ? {} : { 'lacchain:sshPrivateKey': host.privateKey }),
    ...(options.metricsToken ? { 'lacchain:metricsToken': options.metricsToken } : {}),
  };
}

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Running a declared program's remote commands on a real test host, as the command provider would: in order, one SSH
 * session each, with the Command's `create` text and its standard input. Shared by the end-to-end tests and the SSH
 * benchmark, with the stand-in release archives and the SSH writer stack they all deploy.
 */
import { spawn } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { FileServer, startFileServer } from './host/fileServer';
import { RELAY_SIGNER } from '../core/catalog/companions';
import type { NetworkName } from '../core/catalog/networks';
import type { NodeType } from '../core/catalog/nodeTypes';
import { RecordedResource, unwrapSecrets } from '../tools/recording/engine';
import type { Declared } from './program';
import { PROJECT_DIR } from './run';
import type { TestHost } from './host/testHost';

/** One remote.Command as the provider receives it. */
export interface RemoteStep {
  name: string;
  create: string;
  stdin: string;
  user: string;
  /** Every input (secrets unwrapped), to tell which commands `pulumi up` would run again. */
  inputs: Record<string, any>;
}

/** Whether this machine can build test hosts (root on Linux, not switched off by LACCHAIN_E2E_HOSTS=0). */
export function hostsPossible(): boolean {
  return process.platform === 'linux' && process.getuid?.() === 0 && process.env.LACCHAIN_E2E_HOSTS !== '0';
}

/**
 * `describe`, or `describe.skip` with a printed reason where test hosts cannot be built. In CI (CI=true) the tests
 * must run: there the reason is an error.
 */
export function hostSuite(what: string): jest.Describe {
  if (hostsPossible()) return describe;
  const reason = process.env.CI === 'true' ? 'CI must run them: run as root on Linux' : 'needs root on Linux';
  console.warn(`${what} skipped: ${reason}`);
  if (process.env.CI === 'true') throw new Error(`${what} cannot run: ${reason}`);
  return describe.skip;
}

/** Progress lines on stderr (LACCHAIN_TEST_VERBOSE=1), to follow a long run. */
export function progress(line: string): void {
  if (process.env.LACCHAIN_TEST_VERBOSE === '1') {
    process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  }
}

/** The remote commands a declaration recorded, in declaration (= execution) order. */
export function remoteCommands(declared: Declared): RemoteStep[] {
  return declared.resources
    .filter((r: RecordedResource) => r.type === 'command:remote:Command')
    .map((r) => {
      const inputs = unwrapSecrets(r.inputs) as Record<string, any>;
      return { name: r.name, create: inputs.create, stdin: inputs.stdin, user: inputs.connection.user, inputs };
    });
}

/** The commands of `next` whose inputs differ from `before`'s: the ones `pulumi up` would run again. */
export function changedCommands(before: RemoteStep[], next: RemoteStep[]): RemoteStep[] {
  return next.filter((step, i) => JSON.stringify(step.inputs) !== JSON.stringify(before[i]?.inputs));
}

/** Runs one command over SSH as the provider would. */
export function runRemoteStep(host: TestHost, step: RemoteStep) {
  return host.ssh(step.create, { user: step.user, input: step.stdin });
}

/** Runs commands in order; the first failure throws with its output. */
export async function runRemoteSteps(host: TestHost, steps: RemoteStep[]): Promise<void> {
  for (const step of steps) {
    progress(`running ${step.name}`);
    const result = await runRemoteStep(host, step);
    progress(`${step.name} exited ${result.code}`);
    if (result.code !== 0) {
      throw new Error(`step ${step.name} failed (${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
  }
}

/** Packs the Besu stand-in (a test fixture) as the release archive of each version into `dir`. */
export async function packStandinReleases(versions: string[], dir: string): Promise<void> {
  for (const version of versions) {
    const args = [
      path.join(PROJECT_DIR, 'tests/fixtures/besu-standin/pack.sh'),
      version,
      dir,
      path.join(PROJECT_DIR, 'core/catalog/besu-options', `${version}.txt`),
    ];
    const code = await new Promise<number>((resolve) => {
      const child = spawn('sh', args, { stdio: ['ignore', 'ignore', 'inherit'] });
      child.on('close', (status) => resolve(status ?? 1));
    });
    if (code !== 0) throw new Error(`pack.sh ${version} failed (${code})`);
  }
  // The relay signer's stand-in, served as the executable of the default release, and the rotation client's.
  fs.copyFileSync(
    path.join(PROJECT_DIR, COMPANION_STANDIN),
    path.join(dir, companionFile(RELAY_SIGNER.defaultVersion)),
  );
  fs.copyFileSync(path.join(PROJECT_DIR, ROTATION_STANDIN), path.join(dir, ROTATION_STANDIN_FILE));
}

/** The relay signer's stand-in (a test fixture), and its file name among the served releases. */
const COMPANION_STANDIN = 'tests/fixtures/companion-standins/relay-signer';
const companionFile = (version: string) => `relay-signer-${version}`;
/** The rotation client's stand-in (a test fixture), and its file name among the served releases. */
const ROTATION_STANDIN = 'tests/fixtures/companion-standins/rotation-validator';
const ROTATION_STANDIN_FILE = 'rotation-validator-client';

/** The SHA-256 of a packed stand-in release in `dir` (what the inventory's release_sha256 pins). */
export function releaseDigest(dir: string, version: string): string {
  return createHash('sha256')
    .update(fs.readFileSync(path.join(dir, `besu-${version}.tar.gz`)))
    .digest('hex');
}

/**
 * A self-signed certificate for the host's gateway address, made in a new folder under `dir`, that the test host is
 * made to trust: now (the bundle curl and podman read) and after the packages step installs ca-certificates, which
 * rebuilds the bundle from /usr/local/share/ca-certificates.
 */
export async function trustedCertificate(host: TestHost, dir: string): Promise<{ key: string; cert: string }> {
  const tlsDir = fs.mkdtempSync(path.join(dir, '.tls-'));
  const [key, cert] = [path.join(tlsDir, 'key.pem'), path.join(tlsDir, 'cert.pem')];
  const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${host.gateway}`];
  let said = '';
  const code = await new Promise<number>((resolve) => {
    const child = spawn(
      'openssl',
      [...args, '-addext', `subjectAltName=IP:${host.gateway}`, '-keyout', key, '-out', cert],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
    child.on('close', (status) => resolve(status ?? 1));
  });
  if (code !== 0) throw new Error(`openssl could not make a certificate for the test host (${code}): ${said}`);
  const certificate = fs.readFileSync(cert, 'utf8');
  const name = path.basename(tlsDir).replace(/[^A-Za-z0-9-]/g, '');
  const trusted = await host.ssh(
    'mkdir -p /etc/ssl/certs /usr/local/share/ca-certificates && ' +
      `tee /usr/local/share/ca-certificates/lacchain-test${name}.crt >> /etc/ssl/certs/ca-certificates.crt`,
    { input: certificate },
  );
  if (trusted.code !== 0) throw new Error(`the test host does not trust the certificate: ${trusted.stderr}`);
  return { key: fs.readFileSync(key, 'utf8'), cert: certificate };
}

/**
 * Serves the release archives in `dir` to a test host over HTTPS (releases come over https only), with a
 * certificate the host trusts. `redirects` as in fileServer.
 */
export async function startReleaseServer(
  host: TestHost,
  dir: string,
  redirects: Record<string, string> = {},
): Promise<FileServer> {
  const tls = await trustedCertificate(host, dir);
  return startFileServer({
    host: host.gateway,
    port: 0,
    root: dir,
    tls,
    redirects,
  });
}

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
          node_ip: host.ip,
          node_name: options.nodeName,
          node_email: 'ops@example.org',
          node_release_version: options.version,
          dns_name: options.dnsName,
          release_url: `${options.releaseBaseUrl}/besu-{version}.tar.gz`,
          release_sha256: releaseDigest(options.releaseDir, options.version),
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
    'lacchain:sshPrivateKey': host.privateKey,
  };
}

/**
 * The stand-in release archives the test hosts install (the Besu stand-in packed per version, the companions'
 * stand-ins beside them) and the HTTPS server that serves them with a certificate the host trusts.
 */
import { spawn } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { FileServer, startFileServer } from './host/fileServer';
import { RELAY_SIGNER } from '../core/catalog/companions';
import { PROJECT_DIR } from './run';
import { NEW_KEY } from './testKeys';
import { toolsCache } from './toolsCache';
import type { TestHost } from './host/testHost';

/**
 * The releases the end-to-end suites install and update through, in order: the first (Java 17), a 24.x, and the newest
 * the networks run (Java 21, which Debian 12 lacks: the node gets the pinned runtime there).
 */
export const UPGRADE_PATH = ['23.4.1', '24.1.0', '25.5.0'] as const;

/**
 * The options each release accepts, as the stand-in is told them: the developers' guide facts (a copy, see its
 * README.md), not the product's catalog, so that a wrong catalog entry is refused as Besu would refuse it.
 */
const BESU_OPTIONS_DIR = 'tests/fixtures/besu-options';

/** The stand-in's folder, and its packing script. */
const STANDIN_DIR = path.join(PROJECT_DIR, 'tests/fixtures/besu-standin');
const PACK = path.join(STANDIN_DIR, 'pack.sh');
/** What goes into a packed release beside its version and options (pack.sh), and the script itself. */
const PACKED_FILES = ['pack.sh', 'bin/besu', 'lib/besu_standin.py', 'README.md'];

/** Runs `command` with `args`; its standard output, or an error naming `what` and its exit code. */
function runFor(what: string, command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('close', (status) => (status === 0 ? resolve(out) : reject(new Error(`${what} failed (${status})`))));
  });
}

/**
 * The archive of `version` packed by pack.sh (with the options file `options`, when there is one), from the tools cache: packed once per
 * content (pack.sh's archive is reproducible: the same inputs give the same bytes), keyed by the digest of every input
 * (the packed files, the options, the version and the p2p program's path, which names its sources' digest). Each suite
 * packed its own before: about 1 s of the two cores each, some 35 times a run.
 */
export async function cachedRelease(
  version: string,
  options = path.join(PROJECT_DIR, BESU_OPTIONS_DIR, `${version}.txt`),
): Promise<string> {
  const p2p = (await runFor("the stand-in's p2p program", 'bash', [path.join(STANDIN_DIR, 'p2p/build.sh')])).trim();
  // A version without an options file is packed without one (the stand-in then takes any option).
  const withOptions = fs.existsSync(options);
  const digest = createHash('sha256');
  for (const file of PACKED_FILES) digest.update(fs.readFileSync(path.join(STANDIN_DIR, file)));
  digest.update(withOptions ? fs.readFileSync(options) : 'no options file\n').update(`${version}\n${p2p}\n`);
  const dir = path.join(toolsCache(), 'standin-releases', digest.digest('hex').slice(0, 16));
  const archive = path.join(dir, `besu-${version}.tar.gz`);
  if (!fs.existsSync(archive)) {
    // Packed beside, then renamed: a suite packing the same release meanwhile never reads half an archive.
    fs.mkdirSync(dir, { recursive: true });
    const staging = fs.mkdtempSync(path.join(dir, '.pack-'));
    try {
      await runFor(`pack.sh ${version}`, 'sh', [PACK, version, staging, ...(withOptions ? [options] : [])]);
      fs.renameSync(path.join(staging, `besu-${version}.tar.gz`), archive);
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
  return archive;
}

/** Packs the Besu stand-in (a test fixture) as the release archive of each version into `dir`. */
export async function packStandinReleases(versions: string[], dir: string): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  for (const version of versions) {
    fs.copyFileSync(await cachedRelease(version), path.join(dir, `besu-${version}.tar.gz`));
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
export const companionFile = (version: string) => `relay-signer-${version}`;
/** The rotation client's stand-in (a test fixture), and its file name among the served releases. */
const ROTATION_STANDIN = 'tests/fixtures/companion-standins/rotation-validator';
export const ROTATION_STANDIN_FILE = 'rotation-validator-client';

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
  const args = ['req', '-x509', ...NEW_KEY, '-nodes', '-days', '2', '-subj', `/CN=${host.gateway}`];
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
  // Written whole to the host's own file first, then added to the bundle once: a retried session (an SSH connection
  // lost while a freshly booted host is busy) never leaves half a certificate or one twice.
  const file = `/usr/local/share/ca-certificates/lacchain-test${name}.crt`;
  let trusted = { code: -1, stdout: '', stderr: '' };
  for (let attempt = 1; attempt <= 3 && trusted.code !== 0; attempt++) {
    trusted = await host.ssh(
      `mkdir -p /etc/ssl/certs /usr/local/share/ca-certificates && cat >${file}.new && mv -f ${file}.new ${file} && ` +
        `{ grep -qxF "$(sed -n 2p ${file})" /etc/ssl/certs/ca-certificates.crt 2>/dev/null || cat ${file} >> /etc/ssl/certs/ca-certificates.crt; }`,
      { input: certificate },
    );
  }
  if (trusted.code !== 0) {
    throw new Error(`the test host does not trust the certificate (exit ${trusted.code}): ${trusted.stderr}`);
  }
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

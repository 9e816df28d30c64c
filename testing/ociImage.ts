/**
 * The ethstats-cli stand-in (tests/fixtures/companion-standins/ethstats-cli) built from its Go source, and packed as an
 * OCI image archive that `podman load -i` takes on a test host (which reaches no registry). Same files, same mtimes and
 * same toolchain give the same bytes, hence the same digest.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import { PROJECT_DIR } from './run';
import { sha256, writeBlob, writeImage } from './ociLayout';
import { toolsCache } from './toolsCache';

const STANDIN_SOURCE = path.join(PROJECT_DIR, 'tests', 'fixtures', 'companion-standins', 'ethstats-cli');
const STANDIN_REFERENCE = 'localhost/ethstats-cli-standin';
const STANDIN_TAG = 'test';
// The real image's working folder, entry point and program path (alethio/ethstats-cli).
const WORKDIR = 'ethstats-cli';
const PROGRAM = 'bin/ethstats-cli.js';
const ENTRYPOINT = [`./${PROGRAM}`, '-vd'];
// Fixed tar options: numeric root owner, one mtime, sorted names, modes without umask leftovers.
const TAR_FIXED = ['--format=ustar', '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0'];
const TAR_MODES = '--mode=a+rX,u+w,go-w';

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return new Promise<void>((resolve, reject) => {
    execFile(command, args, { ...options, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve();
    });
  });
}

/** Builds the stand-in as a static linux/amd64 binary, offline, into `dir`; returns its path. */
export async function buildEthstatsStandin(dir: string): Promise<string> {
  const binary = path.join(dir, 'ethstats-cli');
  const env = {
    ...process.env,
    CGO_ENABLED: '0',
    GOOS: 'linux',
    GOARCH: 'amd64',
    GOFLAGS: '-mod=mod',
    GOSUMDB: 'off',
    GOPROXY: 'off',
    GOTOOLCHAIN: 'local',
    GOWORK: 'off',
    GOCACHE: path.join(toolsCache(), 'go-build'),
  };
  const args = ['build', '-trimpath', '-buildvcs=false', '-ldflags=-s -w', '-o', binary, '.'];
  await run('go', args, { cwd: STANDIN_SOURCE, env });
  return binary;
}

/** Packs the binary as /ethstats-cli/bin/ethstats-cli.js; returns the uncompressed layer tar. */
async function packLayer(binary: string, work: string): Promise<Buffer> {
  const rootfs = path.join(work, 'rootfs');
  fs.mkdirSync(path.join(rootfs, WORKDIR, path.dirname(PROGRAM)), { recursive: true });
  fs.copyFileSync(binary, path.join(rootfs, WORKDIR, PROGRAM));
  fs.chmodSync(path.join(rootfs, WORKDIR, PROGRAM), 0o755);
  const layer = path.join(work, 'layer.tar');
  await run('tar', ['--create', '--file', layer, ...TAR_FIXED, TAR_MODES, '--directory', rootfs, WORKDIR]);
  return fs.readFileSync(layer);
}

/**
 * Builds the ethstats-cli stand-in and writes it into `dir` as an OCI image archive (an OCI image layout in a tar)
 * named localhost/ethstats-cli-standin:test, with the real image's working folder and entry point.
 */
export async function buildEthstatsStandinImage(
  dir: string,
): Promise<{ archive: string; digest: string; reference: string }> {
  const work = fs.mkdtempSync(path.join(dir, 'ethstats-cli-image-'));
  try {
    const binary = await buildEthstatsStandin(work);
    const layerTar = await packLayer(binary, work);
    const layout = path.join(work, 'layout');
    fs.mkdirSync(path.join(layout, 'blobs', 'sha256'), { recursive: true });

    const layer = writeBlob(
      layout,
      'application/vnd.oci.image.layer.v1.tar+gzip',
      zlib.gzipSync(layerTar, { level: 9 }),
    );
    const manifest = writeImage(layout, {
      layers: [layer],
      diffIds: [`sha256:${sha256(layerTar)}`],
      config: {
        Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
        Entrypoint: ENTRYPOINT,
        WorkingDir: `/${WORKDIR}`,
      },
      createdBy: 'lacchain-besu-node tests: the ethstats-cli stand-in',
      indexEntry: { annotations: { 'org.opencontainers.image.ref.name': `${STANDIN_REFERENCE}:${STANDIN_TAG}` } },
    });

    const archive = path.join(dir, 'ethstats-cli-standin.oci.tar');
    const entries = ['oci-layout', 'index.json', 'blobs'];
    await run('tar', ['--create', '--file', archive, ...TAR_FIXED, TAR_MODES, '--directory', layout, ...entries]);
    return { archive, digest: manifest.digest, reference: STANDIN_REFERENCE };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

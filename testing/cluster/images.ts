/**
 * The images the kubelet tests' pods run, built here as OCI image archives (no registry is reachable) for
 * `ctr images import` on the real worker (testing/cluster/kubelet.ts), each named with the exact reference the
 * program's manifests use:
 * - the pod sandbox's pause image, from the pause program built from Kubernetes' own source
 *   (tools/kubernetes/build-kubelet.sh);
 * - the Besu stand-in (tests/fixtures/besu-standin, a TEST STAND-IN, not Besu) with the official Besu image's layout:
 *   the release under /opt/besu (owned by the image user, uid 1000), `besu` its entry point on PATH, Besu's image
 *   environment (RPC hosts, pid file);
 * - the companions' stand-ins (tests/fixtures/companion-standins: the validator's rotation client, the writer's relay
 *   signer) where the reference's images have their executables;
 * - the writer's proxy stand-in: Debian's nginx with its Lua module and cjson, where the official openresty/openresty
 *   image has OpenResty (image-openresty.sh);
 * - restic's image: its shell (and Debian's restic when this machine has it) for the backup init container;
 * - the Kubernetes client's image (registry.k8s.io/kubectl's layout) of the control plane build's kubectl, for the
 *   backup schedule's steps.
 * All but the pause and kubectl images share one layer: a shell, Python and a Java runtime from this machine's own
 * Debian files (testing/cluster/image-runtime.sh), cached outside the work tree.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { PROJECT_DIR } from '../run';
import { sha256, writeBlob, writeImage } from '../ociLayout';
import { cachedRelease } from '../standinReleases';
import { toolsCache } from '../toolsCache';

/** One image archive, and the references it is imported under. */
export interface TestImage {
  archive: string;
  /** The manifest's digest (`sha256:…`), which a pinned reference names. */
  digest: string;
  /** The normalized name it is imported as (`docker.io/hyperledger/besu:23.4.1`). */
  reference: string;
}

/** A layer: the folder whose contents are the layer, and the owner its files get. */
interface LayerSource {
  dir: string;
  owner?: number;
}

/** What an image runs: the OCI image config's `config`. */
interface RunConfig {
  User?: string;
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  WorkingDir?: string;
}

const TAR_FIXED = ['--format=gnu', '--sort=name', '--numeric-owner', '--mtime=@0'];
const SYSTEM_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function run(command: string, args: string[], options: { cwd?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { ...options, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/** `docker.io/library/x` for `x`, `docker.io/a/b` for `a/b`: the name containerd and the kubelet look an image up by. */
export function normalizedReference(reference: string): string {
  const first = reference.split('/')[0];
  const hasRegistry = reference.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasRegistry) return reference;
  return reference.includes('/') ? `docker.io/${reference}` : `docker.io/library/${reference}`;
}

/** The uncompressed tar of a layer's folder, its files owned by `owner` (root by default). */
async function layerTar(source: LayerSource, file: string): Promise<Buffer> {
  if (!fs.existsSync(file)) {
    const owner = String(source.owner ?? 0);
    await run('tar', [
      '--create',
      `--file=${file}.partial`,
      ...TAR_FIXED,
      `--owner=${owner}`,
      `--group=${owner}`,
      '--directory',
      source.dir,
      '.',
    ]);
    fs.renameSync(`${file}.partial`, file);
  }
  return fs.readFileSync(file);
}

/**
 * Writes an OCI image archive of `layers` (bottom first) and `config` into `dir` as `<name>.oci.tar`, named
 * `reference` (normalized) for `ctr images import`.
 */
async function imageArchive(
  dir: string,
  name: string,
  reference: string,
  layerTars: Buffer[],
  config: RunConfig,
): Promise<TestImage> {
  const layout = fs.mkdtempSync(path.join(dir, `${name}-layout-`));
  fs.mkdirSync(path.join(layout, 'blobs', 'sha256'), { recursive: true });
  const layers = layerTars.map((tar) => writeBlob(layout, 'application/vnd.oci.image.layer.v1.tar', tar));
  const full = normalizedReference(reference);
  const manifest = writeImage(layout, {
    layers,
    diffIds: layers.map((layer) => layer.digest),
    config,
    createdBy: `lacchain-besu-node tests: ${name} (a test image, testing/cluster/images.ts)`,
    indexEntry: {
      platform: { architecture: 'amd64', os: 'linux' },
      annotations: { 'io.containerd.image.name': full, 'org.opencontainers.image.ref.name': full.split(':').pop() },
    },
  });
  const archive = path.join(dir, `${name}.oci.tar`);
  await run('tar', [
    '--create',
    `--file=${archive}`,
    ...TAR_FIXED,
    '--directory',
    layout,
    'oci-layout',
    'index.json',
    'blobs',
  ]);
  fs.rmSync(layout, { recursive: true, force: true });
  return { archive, digest: manifest.digest, reference: full };
}

/**
 * The shared layer (testing/cluster/image-runtime.sh's root file system as a tar), made once and kept in the tools
 * cache, keyed by the script, the host's Python and its JDK.
 */
async function runtimeLayer(): Promise<Buffer> {
  const script = path.join(__dirname, 'image-runtime.sh');
  const key = sha256(
    Buffer.concat([
      fs.readFileSync(script),
      Buffer.from(fs.realpathSync('/usr/bin/python3')),
      Buffer.from(fs.realpathSync('/usr/bin/javac')),
    ]),
  ).slice(0, 16);
  const dir = path.join(toolsCache(), 'kubelet-images', `runtime-${key}`);
  const tar = path.join(dir, 'layer.tar');
  if (!fs.existsSync(tar)) {
    fs.mkdirSync(dir, { recursive: true });
    await run('bash', [script, path.join(dir, 'rootfs')]);
    await layerTar({ dir: path.join(dir, 'rootfs') }, tar);
    fs.rmSync(path.join(dir, 'rootfs'), { recursive: true, force: true });
  }
  return fs.readFileSync(tar);
}

/** The pause image, from the pause program built from Kubernetes' source (build/pause/linux/pause.c). */
export async function pauseImage(dir: string, pauseBinary: string, reference: string): Promise<TestImage> {
  const root = fs.mkdtempSync(path.join(dir, 'pause-root-'));
  fs.copyFileSync(pauseBinary, path.join(root, 'pause'));
  fs.chmodSync(path.join(root, 'pause'), 0o755);
  const tar = await layerTar({ dir: root }, path.join(dir, 'pause-layer.tar'));
  return imageArchive(dir, 'pause', reference, [tar], { User: '65535:65535', Entrypoint: ['/pause'] });
}

/**
 * The Besu stand-in as `hyperledger/besu:<version>` with the official image's layout: the release packed by
 * tests/fixtures/besu-standin/pack.sh (with the options `version` accepts, as the stand-in refuses others; packed once
 * per content, in the tools cache: testing/standinReleases.ts) unpacked as /opt/besu, owned by uid 1000, `besu` on PATH
 * as the entry point, and the official image's environment.
 */
export async function besuStandinImage(dir: string, version: string, reference: string): Promise<TestImage> {
  const archive = await cachedRelease(version);
  const root = fs.mkdtempSync(path.join(dir, 'besu-root-'));
  fs.mkdirSync(path.join(root, 'opt'));
  await run('tar', ['-xzf', archive, '-C', path.join(root, 'opt')]);
  fs.renameSync(path.join(root, 'opt', `besu-${version}`), path.join(root, 'opt', 'besu'));
  const app = await layerTar({ dir: root, owner: 1000 }, path.join(dir, 'besu-layer.tar'));
  return imageArchive(dir, 'besu', reference, [await runtimeLayer(), app], {
    User: 'besu',
    Entrypoint: ['besu'],
    WorkingDir: '/opt/besu',
    // The official image's environment (hyperledger/besu's docker/Dockerfile).
    Env: [
      'PATH=/opt/besu/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'BESU_RPC_HTTP_HOST=0.0.0.0',
      'BESU_RPC_WS_HOST=0.0.0.0',
      'BESU_GRAPHQL_HTTP_HOST=0.0.0.0',
      'BESU_PID_PATH=/tmp/pid',
    ],
  });
}

/**
 * A companion's stand-in (tests/fixtures/companion-standins/`standin`: the rotation client's, the relay signer's) at
 * `executable` (the reference image's path), as `reference`.
 */
export async function companionStandinImage(
  dir: string,
  standin: string,
  executable: string,
  reference: string,
): Promise<TestImage> {
  const root = fs.mkdtempSync(path.join(dir, `${standin}-root-`));
  fs.mkdirSync(path.join(root, path.dirname(executable)), { recursive: true });
  const target = path.join(root, executable);
  fs.copyFileSync(path.join(PROJECT_DIR, 'tests', 'fixtures', 'companion-standins', standin), target);
  fs.chmodSync(target, 0o755);
  const app = await layerTar({ dir: root }, path.join(dir, `${standin}-layer.tar`));
  return imageArchive(dir, standin, reference, [await runtimeLayer(), app], {
    Entrypoint: [executable],
    Env: [SYSTEM_PATH],
  });
}

/**
 * The writer's proxy stand-in as `reference` (openresty/openresty): Debian's nginx with its Lua module and cjson
 * where the official image has OpenResty (testing/cluster/image-openresty.sh), its command the official image's.
 */
export async function openrestyStandinImage(dir: string, reference: string): Promise<TestImage> {
  const root = path.join(dir, 'openresty-root');
  await run('bash', [path.join(__dirname, 'image-openresty.sh'), root]);
  const app = await layerTar({ dir: root }, path.join(dir, 'openresty-layer.tar'));
  return imageArchive(dir, 'openresty', reference, [await runtimeLayer(), app], {
    Cmd: ['/usr/local/openresty/bin/openresty', '-g', 'daemon off;'],
    Env: [SYSTEM_PATH],
  });
}

/** restic's image: the shared layer's shell, with Debian's restic at /usr/bin/restic when this machine has it. */
export async function resticImage(dir: string, reference: string): Promise<TestImage> {
  const layers = [await runtimeLayer()];
  if (fs.existsSync('/usr/bin/restic')) {
    const root = fs.mkdtempSync(path.join(dir, 'restic-root-'));
    fs.mkdirSync(path.join(root, 'usr', 'bin'), { recursive: true });
    fs.copyFileSync('/usr/bin/restic', path.join(root, 'usr', 'bin', 'restic'));
    fs.chmodSync(path.join(root, 'usr', 'bin', 'restic'), 0o755);
    layers.push(await layerTar({ dir: root }, path.join(dir, 'restic-layer.tar')));
  }
  return imageArchive(dir, 'restic', reference, layers, { Entrypoint: ['/usr/bin/restic'], Env: [SYSTEM_PATH] });
}

/**
 * The Kubernetes client's image as `reference` (registry.k8s.io/kubectl) with the official image's layout (Kubernetes'
 * build/server-image/kubectl/Dockerfile: the binary at /bin/kubectl, its entry point, on a base of static files only):
 * `kubectlBinary`, the statically linked kubectl of the control plane's build (tools/kubernetes/build.sh). It runs as
 * the pod's user.
 */
export async function kubectlImage(dir: string, kubectlBinary: string, reference: string): Promise<TestImage> {
  const root = fs.mkdtempSync(path.join(dir, 'kubectl-root-'));
  const executable = path.join(root, 'bin', 'kubectl');
  fs.mkdirSync(path.dirname(executable));
  fs.copyFileSync(kubectlBinary, executable);
  fs.chmodSync(executable, 0o755);
  const tar = await layerTar({ dir: root }, path.join(dir, 'kubectl-layer.tar'));
  fs.rmSync(root, { recursive: true, force: true });
  return imageArchive(dir, 'kubectl', reference, [tar], { Entrypoint: ['/bin/kubectl'], Env: [SYSTEM_PATH] });
}

/**
 * A saved test-host disk with a writer's packages already installed: the packages step of a real deployment (Java,
 * nginx, restic, podman, nftables, the gas model's Lua modules) run once on a bare Debian 12 host and the disk kept
 * (testing/host/buildPackagesDisk.ts), cached beside the root file system and keyed by what makes it: the root file
 * system's recipe and build, the packages step's scripts, the Java catalog and the builder. The suites that test what
 * comes after a first install boot a copy of it instead of a bare host, and their own packages step then finds
 * everything installed (a disk older than a change of what the step installs costs time only: the step installs the
 * rest); the suites that test the first install itself (sshNode, debian13, the cut lab's cuts, packagesRecovery) keep
 * booting bare hosts (the cut sample's uncut first install, which no cut of it is timed by, boots this disk).
 */
import { spawn, spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { PROJECT_DIR } from '../run';
import { progress } from '../hostSuite';

/** The files whose content the disk depends on (besides the root file system), from the project folder. */
const MADE_FROM = [
  'scripts/remote/packages.sh',
  'scripts/remote/lib.sh',
  'core/catalog/besu.ts',
  'testing/host/buildPackagesDisk.ts',
];
/** How long a build may hold the lock before another process takes it over. */
const STALE_LOCK_MS = 10 * 60_000;

/** The test hosts' cache folder and the bare root file system's marker, as testing/host/common.sh names them. */
function cacheLayout(): { cache: string; rootfsMarker: string } {
  const common = JSON.stringify(path.join(__dirname, 'common.sh'));
  const script = `. ${common}; lct_use_system bookworm; printf '%s\\n%s' "$LCT_CACHE" "$LCT_ROOTFS.done"`;
  const result = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`testing/host/common.sh: ${result.stderr}`);
  const [cache, rootfsMarker] = result.stdout.split('\n');
  return { cache, rootfsMarker };
}

/** Takes the lock folder `lockDir` once free (a build elsewhere holds it), or once its holder is gone or stale. */
async function lock(lockDir: string): Promise<() => void> {
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
      return () => fs.rmSync(lockDir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(fs.readFileSync(path.join(lockDir, 'pid'), { encoding: 'utf8', flag: 'a+' }) || 0);
    const age = Date.now() - fs.statSync(lockDir).mtimeMs;
    let alive = holder > 0;
    try {
      if (alive) process.kill(holder, 0);
    } catch {
      alive = false;
    }
    if ((!alive && age > 2000) || age > STALE_LOCK_MS) fs.rmSync(lockDir, { recursive: true, force: true });
    else await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Runs the builder in a process of its own (its program's recording apart from the suite's). */
function build(dir: string): Promise<void> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', path.join(__dirname, 'buildPackagesDisk.ts'), dir],
    { cwd: PROJECT_DIR, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) =>
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`buildPackagesDisk.ts failed (${code}):\n${stderr.slice(-4000)}`)),
    ),
  );
}

/** The folder of the saved disk (for startTestHost's `base`), made first when the cache has none for its inputs. */
export async function packagesInstalledDisk(): Promise<string> {
  const { cache, rootfsMarker } = cacheLayout();
  // The bare root file system first (its marker is part of the key): build-rootfs.sh builds it when missing.
  const rootfs = spawnSync('bash', [path.join(__dirname, 'build-rootfs.sh')], { encoding: 'utf8' });
  if (rootfs.status !== 0) throw new Error(`build-rootfs.sh failed: ${rootfs.stderr.slice(-2000)}`);
  const key = createHash('sha256')
    .update(fs.readFileSync(rootfsMarker))
    .update(String(fs.statSync(rootfsMarker).mtimeMs));
  for (const file of MADE_FROM) key.update(fs.readFileSync(path.join(PROJECT_DIR, file)));
  const dir = path.join(cache, `packages-bookworm-${key.digest('hex').slice(0, 16)}`);
  if (fs.existsSync(path.join(dir, '.complete'))) return dir;
  const unlock = await lock(`${dir}.lock`);
  try {
    if (fs.existsSync(path.join(dir, '.complete'))) return dir;
    progress(`making the packages-installed disk ${dir}`);
    await build(dir);
    fs.writeFileSync(path.join(dir, '.complete'), `${new Date().toISOString()}\n`);
    // The disks made from other inputs before are of no more use.
    for (const other of fs.readdirSync(cache).filter((name) => /^packages-bookworm-[0-9a-f]+$/.test(name))) {
      if (path.join(cache, other) !== dir) fs.rmSync(path.join(cache, other), { recursive: true, force: true });
    }
    return dir;
  } finally {
    unlock();
  }
}

// `node -r ts-node/register/transpile-only testing/host/packagesDisk.ts` (tests/setup.sh): makes the disk when the
// cache has none for its inputs, and prints its folder.
if (require.main === module) {
  packagesInstalledDisk().then(
    (dir) => process.stdout.write(`${dir}\n`),
    (error: Error) => {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 1;
    },
  );
}

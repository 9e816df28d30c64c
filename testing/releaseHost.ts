/**
 * The start of most end-to-end suites: a real test host with the stand-in releases packed in a work folder of the
 * suite's own and served to it over HTTPS, as a release site serves Besu's archives.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { canBuildHosts, startTestHost, type TestHost, type TestHostSystem } from './host/testHost';
import type { FileServer } from './host/fileServer';
import { packagesInstalledDisk } from './host/packagesDisk';
import { packStandinReleases, startReleaseServer } from './standinReleases';

/** A booted host, the folder its releases were packed in and the server that serves them. */
export interface ReleaseHost {
  host: TestHost;
  files: FileServer;
  work: string;
}

/** How the host is booted. */
export interface ReleaseHostOptions {
  /** Boot a copy of the disk with a writer's packages installed (testing/host/packagesDisk.ts), not a bare host. */
  packagesInstalled?: boolean;
  /** The Debian release of a bare host (default: bookworm). */
  system?: TestHostSystem;
  /** The work folder's name before its random part (default `lacchain-e2e-`). */
  workPrefix?: string;
}

/** Throws, saying why, when this machine cannot build and boot test hosts. */
export async function requireTestHosts(): Promise<void> {
  const check = await canBuildHosts();
  if (!check.ok) throw new Error(`cannot build a test host: ${check.reason}`);
}

/** Packs `releases`, boots the test host `name` at address index `index` and serves the releases to it. */
export async function startReleaseHost(
  name: string,
  index: number,
  releases: string[],
  options: ReleaseHostOptions = {},
): Promise<ReleaseHost> {
  await requireTestHosts();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), options.workPrefix ?? 'lacchain-e2e-'));
  await packStandinReleases(releases, work);
  const base = options.packagesInstalled ? await packagesInstalledDisk() : undefined;
  const host = await startTestHost(name, index, { system: options.system, base });
  const files = await startReleaseServer(host, work);
  return { host, files, work };
}

/** Stops what startReleaseHost started (whatever of it did start): the server, the host, the work folder. */
export async function stopReleaseHost(started: Partial<ReleaseHost>): Promise<void> {
  await started.files?.close();
  await started.host?.stop();
  if (started.work) fs.rmSync(started.work, { recursive: true, force: true });
}

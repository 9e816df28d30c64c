/**
 * Makes the packages-installed disk (testing/host/packagesDisk.ts) in DIR: a bare Debian 12 test host, podman's
 * configuration as the suites write it, then a writer deployment's real packages step (its program declared in this
 * process of its own, so no suite's recording of the program is touched), and the disk saved.
 * Usage: node -r ts-node/register/transpile-only testing/host/buildPackagesDisk.ts DIR
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { TEST_COMPANIONS } from '../fixtures';
import { recordProgram } from '../pulumi';
import { declareProgram } from '../program';
import { remoteCommands, runRemoteSteps } from '../replay';
import { sshWriterStack } from '../sshStacks';
import { packStandinReleases } from '../standinReleases';
import { letPodmanRunInTestHost } from './podman';
import { startTestHost } from './testHost';

/** The host that installs the packages (a name and index no suite uses). */
const BUILDER = { name: 'pkgdisk', index: 60 };
/** The release whose Java the disk holds (the releases the suites start from run on Java 17). */
const RELEASE = '24.1.0';

async function main(dir: string): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-packages-disk-'));
  const host = await startTestHost(BUILDER.name, BUILDER.index);
  try {
    await packStandinReleases([RELEASE], work);
    const declared = await declareProgram(
      recordProgram(),
      'testnet',
      sshWriterStack(host, {
        version: RELEASE,
        releaseBaseUrl: `https://${host.gateway}`,
        releaseDir: work,
        nodeName: 'packages-disk',
        dnsName: 'writer.e2e.test',
        // The monitoring client on, so its container runtime is among the packages (nothing is pulled).
        ethstats: {
          image: `${host.gateway}:5000/ethstats`,
          imageDigest: TEST_COMPANIONS.ethstats.imageDigest,
          serverUrl: `http://${host.gateway}:3000`,
        },
      }),
      {},
    );
    await letPodmanRunInTestHost(host);
    await runRemoteSteps(
      host,
      remoteCommands(declared).filter((step) => step.name.endsWith('-packages')),
    );
    await host.stopAndSave(dir);
  } catch (error) {
    await host.stop();
    throw error;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main(process.argv[2]).then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);

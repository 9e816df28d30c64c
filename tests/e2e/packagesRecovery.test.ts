/**
 * The packages step after a run cut while dpkg worked, on a real Debian host (scripts/remote/packages.sh): the two
 * states such a cut leaves, made on purpose rather than caught by timing (tests/e2e/cuts.test.ts cuts dpkg at work,
 * and which of the two it leaves depends on the moment). A package unpacked but not configured is configured; a package
 * cut while being unpacked (`reinstreq half-installed`, which `dpkg --configure -a` cannot finish) is installed again.
 * Either way the step succeeds and dpkg is left with nothing to audit. apt and dpkg are the real ones.
 */
import { COMPANIONS_OFF } from '../../testing/fixtures';
import { TestHost } from '../../testing/host/testHost';
import type { FileServer } from '../../testing/host/fileServer';
import { hostSuite, progress } from '../../testing/hostSuite';
import { declareProgram } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { remoteCommands, RemoteStep, runRemoteStep } from '../../testing/replay';
import { sshWriterStack } from '../../testing/sshStacks';
import { startReleaseHost, stopReleaseHost } from '../../testing/releaseHost';

const suite = hostSuite('the packages step after a cut dpkg');
jest.setTimeout(10 * 60 * 1000);

const RELEASE = '24.1.0';
const NODE = 'writer';
/** A package the step installs, and nothing else on the machine needs while the test breaks it. */
const PACKAGE = 'logrotate';

const recorded = recordProgram();

suite('the packages step finishes what a cut dpkg left', () => {
  let host: TestHost;
  let files: FileServer;
  let work: string;
  let packages: RemoteStep;

  /** Runs a root shell script on the host, failing with its output when it fails. */
  const root = async (script: string) => {
    const result = await host.ssh('bash -s', { input: `set -euo pipefail\n${script}`, timeoutMs: 300_000 });
    if (result.code !== 0) throw new Error(`exit ${result.code}:\n${result.stdout}\n${result.stderr}`);
    return result.stdout.trim();
  };
  /** The package's state as dpkg records it: want, error flag and status ("install ok installed" when whole). */
  const status = () => root(`dpkg-query -W -f='\${Status}' ${PACKAGE}`);
  /** Sets the package's recorded state in dpkg's database, as a cut at that moment leaves it. */
  const leave = (state: string) =>
    root(
      `sed -i '/^Package: ${PACKAGE}$/,/^$/ s/^Status: .*/Status: ${state}/' /var/lib/dpkg/status\n` +
        `[ "$(dpkg-query -W -f='\${Status}' ${PACKAGE})" = '${state}' ]`,
    );

  beforeAll(async () => {
    ({ host, files, work } = await startReleaseHost('dpkgcut', 52, [RELEASE], { workPrefix: 'lacchain-dpkgcut-' }));
    const config = sshWriterStack(host, {
      version: RELEASE,
      releaseBaseUrl: files.url,
      releaseDir: work,
      nodeName: 'e2e-dpkgcut',
      dnsName: 'dpkgcut.e2e.test',
    });
    config['lacchain:companions'] = COMPANIONS_OFF;
    const steps = remoteCommands(await declareProgram(recorded, 'testnet', config, {}));
    const upTo = steps.findIndex((s) => s.name === `${NODE}-packages`);
    packages = steps[upTo];
    for (const step of steps.slice(0, upTo + 1)) {
      const result = await runRemoteStep(host, step);
      progress(`${step.name} exited ${result.code}`);
      if (result.code !== 0) throw new Error(`${step.name} failed (${result.code}):\n${result.stderr}`);
    }
    expect(await status()).toBe('install ok installed');
  });

  afterAll(() => stopReleaseHost({ files, host, work }));

  it.each([
    ['unpacked, not configured', 'install ok unpacked', 'finishing the package changes'],
    [
      'cut while being unpacked',
      'install reinstreq half-installed',
      `installing again what a cut left half unpacked: ${PACKAGE}\n`,
    ],
  ])('a package left %s: the step finishes it, and dpkg has nothing left to audit', async (_what, state, said) => {
    await leave(state);
    expect(await root('dpkg --audit || true')).toContain(PACKAGE);
    const result = await runRemoteStep(host, packages);
    progress(`${packages.name} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
    expect([result.code, result.stdout]).toEqual([0, expect.stringContaining(said)]);
    expect(await status()).toBe('install ok installed');
    expect(await root('dpkg --audit')).toBe('');
    expect(await root(`command -v ${PACKAGE}`)).not.toBe('');
  });
});

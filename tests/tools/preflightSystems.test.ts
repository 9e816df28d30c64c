/**
 * The systems a machine may run (core/catalog/systems.ts), as the preflight step decides from /etc/os-release: the
 * step's script run here, as root runs it on the machine, on the os-release of each system (their ID, VERSION_ID and
 * PRETTY_NAME as those releases ship them), before anything changes. The ones that cannot be had here as real hosts
 * are tested this way (docs/ssh.md, "Systems").
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import {
  SUPPORTED_SYSTEMS,
  supportedSystem,
  supportedSystemsParameter,
  supportedSystemsText,
} from '../../core/catalog/systems';
import { operatingSystem } from '../../core/settings/fields';
import { remoteStepInput } from '../../testing/remoteStep';
import { workFolder } from '../../testing/workFolder';

const work = workFolder('lacchain-preflight-');

/** The preflight on a machine whose os-release holds `fields`: its exit code and messages. */
function preflight(fields: Record<string, string>) {
  const file = path.join(work, 'os-release');
  fs.writeFileSync(
    file,
    Object.entries(fields)
      .map(([key, value]) => `${key}="${value}"\n`)
      .join(''),
  );
  const input = remoteStepInput('preflight', {
    NETWORK: 'open-protestnet',
    NODE_HOME: work,
    MIN_CPU: '1',
    MIN_MEMORY_MIB: '1',
    MIN_DISK_GIB: '0',
    RECOMMENDED_CPU: '1',
    RECOMMENDED_MEMORY_MIB: '1',
    RECOMMENDED_DISK_GIB: '0',
    ENFORCE_MINIMUM: 'true',
    BESU_VERSION: '25.5.0',
    JAVA_MAJOR: '21',
    // A pinned runtime for every architecture: the Java decision is not this test's.
    JAVA_RUNTIME_ARCHIVES: '* https://example.org/jre.tar.gz 0',
    SUPPORTED_SYSTEMS: supportedSystemsParameter(),
    SUPPORTED_SYSTEMS_TEXT: supportedSystemsText(),
    OS_RELEASE: file,
  });
  const result = spawnSync('bash', ['-s'], { input, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.trim() };
}

/** Each system by its os-release (ID, VERSION_ID, PRETTY_NAME as the release ships them), and whether it is taken. */
const SYSTEMS: Array<[id: string, version: string, name: string, accepted: boolean]> = [
  ['ubuntu', '22.04', 'Ubuntu 22.04.5 LTS', true],
  ['ubuntu', '24.04', 'Ubuntu 24.04.3 LTS', true],
  ['ubuntu', '26.04', 'Ubuntu 26.04 LTS', true],
  ['debian', '12', 'Debian GNU/Linux 12 (bookworm)', true],
  ['debian', '13', 'Debian GNU/Linux 13 (trixie)', true],
  ['rhel', '9.6', 'Red Hat Enterprise Linux 9.6 (Plow)', true],
  ['rocky', '9.6', 'Rocky Linux 9.6 (Blue Onyx)', true],
  ['almalinux', '10.0', 'AlmaLinux 10.0 (Purple Lion)', true],
  ['rhel', '10.0', 'Red Hat Enterprise Linux 10.0 (Coughlan)', true],
  ['ubuntu', '14.04', 'Ubuntu 14.04.6 LTS', false],
  ['ubuntu', '25.10', 'Ubuntu 25.10', false],
  ['debian', '9', 'Debian GNU/Linux 9 (stretch)', false],
  ['centos', '6', 'CentOS release 6.10 (Final)', false],
  ['fedora', '42', 'Fedora Linux 42 (Server Edition)', false],
  ['rocky', '8.10', 'Rocky Linux 8.10 (Green Obsidian)', false],
];

describe('the preflight step on the systems operators run in 2026', () => {
  it.each(SYSTEMS)('%s %s (%s): accepted %s, before any change', (ID, VERSION_ID, PRETTY_NAME, accepted) => {
    const result = preflight({ ID, VERSION_ID, PRETTY_NAME });
    if (accepted) {
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain(`preflight: ${PRETTY_NAME} is supported`);
      expect(result.code).toBe(0);
    } else {
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`preflight: ${PRETTY_NAME} is not supported (supported: ${supportedSystemsText()})`);
    }
  });

  it.each(SYSTEMS)(
    "%s %s: the inventory's os is judged as the step judges the machine (npm run init and plan, before any pulumi up)",
    (ID, VERSION_ID, PRETTY_NAME, accepted) => {
      expect([PRETTY_NAME, supportedSystem(ID, VERSION_ID) !== undefined]).toEqual([PRETTY_NAME, accepted]);
      expect([PRETTY_NAME, operatingSystem.safeParse(`${ID} ${VERSION_ID}`).success]).toEqual([PRETTY_NAME, accepted]);
    },
  );

  it('says every supported family and version in its refusal, from the one catalog', () => {
    for (const system of SUPPORTED_SYSTEMS) expect(supportedSystemsText()).toContain(system.name);
    expect(supportedSystemsText()).toContain('Ubuntu 16.04, 18.04, 20.04, 22.04, 24.04, 26.04');
  });
});

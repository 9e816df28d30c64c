/**
 * Where a machine downloads a Besu release (issue 65 item 3): Besu's changelog links each release's archive on JFrog
 * up to 24.1.2 and on GitHub from 24.3.0 (facts: besu-release-digests.md), so without a mirror the release step tries
 * the published JFrog URL first, then GitHub's asset, and from 24.3.0 GitHub's alone; the pinned digest decides
 * (scripts/remote/release.sh, tests/tools/remoteScripts.test.ts). A mirror (`release_url`) is tried alone.
 */
import { LAST_JFROG_RELEASE, RELEASE_ARCHIVE_SHA256, releaseSources } from '../../core/catalog/besu';
import { describeNode } from '../../core/node/description';
import { remoteSteps } from '../../core/remote/steps';
import type { SshNodeSettings } from '../../core/settings/model';
import { loadTestnet, sshValidatorEntry, validTestnetConfig } from '../../testing/fixtures';

const GITHUB = (v: string) => `https://github.com/hyperledger/besu/releases/download/${v}/besu-${v}.tar.gz`;

describe('a release’s published sources', () => {
  it('up to 24.1.2: the JFrog URL the changelog gives, then GitHub', () => {
    expect(releaseSources('23.4.1')).toEqual([
      'https://hyperledger.jfrog.io/hyperledger/besu-binaries/besu/23.4.1/besu-23.4.1.tar.gz',
      GITHUB('23.4.1'),
    ]);
    expect(releaseSources(LAST_JFROG_RELEASE)).toEqual([
      'https://hyperledger.jfrog.io/artifactory/besu-binaries/besu/24.1.2/besu-24.1.2.tar.gz',
      GITHUB('24.1.2'),
    ]);
    expect(releaseSources('1.3.6')[0]).toBe(
      'https://hyperledger.jfrog.io/artifactory/besu-binaries/besu/1.3.6/besu-1.3.6.tar.gz',
    );
  });

  it('from 24.3.0: GitHub’s release asset alone', () => {
    for (const version of ['24.3.0', '24.7.1', '25.5.0']) expect(releaseSources(version)).toEqual([GITHUB(version)]);
  });

  it('every pinned release: its archive by name, over https, GitHub last', () => {
    for (const version of Object.keys(RELEASE_ARCHIVE_SHA256)) {
      const sources = releaseSources(version);
      expect(sources.at(-1)).toBe(GITHUB(version));
      for (const url of sources)
        expect(url).toMatch(new RegExp(`^https://.*/besu-${version.replace(/\./g, '\\.')}\\.tar\\.gz$`));
    }
  });
});

describe('the release step’s parameters', () => {
  const releaseStep = (inventory: Record<string, unknown>) => {
    const config = validTestnetConfig();
    (config['lacchain:nodes'] as unknown[])[1] = sshValidatorEntry({ user: 'ubuntu', ...inventory });
    const node = loadTestnet(config).nodes.find((n) => n.target === 'ssh') as SshNodeSettings;
    const values = { genesis: '{}', genesisSha256: 'x', enode: 'enode://x', address: '0x' };
    return remoteSteps(describeNode(node), values).find((s) => s.name === 'release')!.env;
  };

  it('without a mirror: the sources in order', () => {
    const env = releaseStep({ node_release_version: '23.4.1' });
    expect(env.RELEASE_URL).toBe(releaseSources('23.4.1')[0]);
    expect(env.RELEASE_FALLBACK_URLS).toBe(GITHUB('23.4.1'));
    expect(env.RELEASE_SHA256).toBe(RELEASE_ARCHIVE_SHA256['23.4.1']);
  });

  it('from 24.3.0, or with a mirror: one source, the parameters as before', () => {
    expect(Object.keys(releaseStep({ node_release_version: '24.7.1' }))).toEqual([
      'STEP_NAME',
      'BESU_VERSION',
      'RELEASE_URL',
      'RELEASE_SHA256',
      'RELEASES_DIR',
    ]);
    const mirrored = releaseStep({
      node_release_version: '23.4.1',
      release_url: 'https://mirror.example.org/besu-{version}.tar.gz',
      release_sha256: RELEASE_ARCHIVE_SHA256['23.4.1'],
    });
    expect(mirrored.RELEASE_URL).toBe('https://mirror.example.org/besu-23.4.1.tar.gz');
    expect(mirrored.RELEASE_FALLBACK_URLS).toBeUndefined();
  });
});

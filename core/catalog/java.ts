/**
 * The Java runtimes Besu needs, and the pinned runtime a machine gets when its own package sources lack the one a
 * release needs (Debian 11 and 12 have no Java 21, which Besu 24.6.0 on needs): Eclipse Temurin's JRE, downloaded by
 * https and checked against its SHA-256 like a Besu release, unpacked under JAVA_RUNTIMES_DIR and used by the node's
 * launcher only (JAVA_HOME), never installed as the system's Java.
 */
import { javaMajorFor } from './besu';

/** One JRE archive for one machine architecture (`uname -m`). */
export interface JavaArchive {
  url: string;
  sha256: string;
}

/** A pinned Java runtime: its version and its archive per architecture. */
export interface JavaRuntime {
  /** Java's major version. */
  major: number;
  /** Temurin's version (the folder the archive unpacks to is `jdk-<version>-jre`). */
  version: string;
  archives: Readonly<Record<'x86_64' | 'aarch64', JavaArchive>>;
}

/** Temurin's name for a machine architecture in its archive names. */
const TEMURIN_ARCH = { x86_64: 'x64', aarch64: 'aarch64' } as const;

/** Eclipse Temurin's JRE `version` (`<major>.<minor>.<patch>+<build>`), with the SHA-256 of its archive per architecture. */
function temurin(major: number, version: string, sha256: Record<keyof typeof TEMURIN_ARCH, string>): JavaRuntime {
  const archive = (arch: keyof typeof TEMURIN_ARCH): JavaArchive => ({
    url:
      `https://github.com/adoptium/temurin${major}-binaries/releases/download/jdk-${version.replace('+', '%2B')}/` +
      `OpenJDK${major}U-jre_${TEMURIN_ARCH[arch]}_linux_hotspot_${version.replace('+', '_')}.tar.gz`,
    sha256: sha256[arch],
  });
  return { major, version, archives: { x86_64: archive('x86_64'), aarch64: archive('aarch64') } };
}

/** The pinned runtimes, by Java major (digests as Adoptium publishes them beside each archive, `<url>.sha256.txt`). */
export const JAVA_RUNTIMES: Readonly<Record<17 | 21, JavaRuntime>> = {
  17: temurin(17, '17.0.18+8', {
    x86_64: '8b418e38cca87945858ae911988401720095eb671357d47437b4adb49c28dcab',
    aarch64: '88727c16610d118c0e739f62e6c99dc1cb5a7b4a93a27054fe2a3aa7150e7b5d',
  }),
  21: temurin(21, '21.0.11+10', {
    x86_64: 'e5038aae3ca9ff670bc696496b0728dbd23d280026bad30291cb919221ecfdcb',
    aarch64: 'fa23d9d9945053e67bcc7638410eabf1e17a7672c7c95a24f70cd08b8407d36e',
  }),
};

/** Where pinned runtimes are unpacked on a machine (shared by its nodes): `<dir>/java-<major>` is the one in use. */
export const JAVA_RUNTIMES_DIR = '/opt/lacchain-java';

/** The JAVA_HOME a node's launcher uses when the machine holds the pinned runtime of the release's Java major. */
export function pinnedJavaHome(major: number): string {
  return `${JAVA_RUNTIMES_DIR}/java-${major}`;
}

/** The pinned runtime for a release, if its Java is one of the pinned ones (11 is in every supported system). */
export function pinnedRuntimeFor(release: string): JavaRuntime | undefined {
  const major = javaMajorFor(release);
  return major === 17 || major === 21 ? JAVA_RUNTIMES[major] : undefined;
}

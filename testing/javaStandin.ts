/**
 * A fake Java 21 runtime archive (tests/fixtures/java-standin, a test stand-in, not Java), packed as Temurin's JRE
 * archives are (one top folder holding bin/java), for the packages step's pinned runtime on a test host whose system
 * has no Java 21 (Debian 12).
 */
import { execFileSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PROJECT_DIR } from './run';

/** The archive's file name among the served files. */
export const JAVA_STANDIN_ARCHIVE = 'OpenJDK21U-jre-standin.tar.gz';

/** Packs the stand-in runtime into `dir` and returns its SHA-256. */
export function packJavaStandin(dir: string): string {
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-java-standin-'));
  const top = path.join(staging, 'jdk-21.0.11+10-jre');
  fs.mkdirSync(path.join(top, 'bin'), { recursive: true });
  fs.copyFileSync(path.join(PROJECT_DIR, 'tests/fixtures/java-standin/bin/java'), path.join(top, 'bin', 'java'));
  fs.chmodSync(path.join(top, 'bin', 'java'), 0o755);
  const archive = path.join(dir, JAVA_STANDIN_ARCHIVE);
  execFileSync('tar', ['-czf', archive, '-C', staging, 'jdk-21.0.11+10-jre']);
  fs.rmSync(staging, { recursive: true, force: true });
  return createHash('sha256').update(fs.readFileSync(archive)).digest('hex');
}

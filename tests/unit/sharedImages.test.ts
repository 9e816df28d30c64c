/**
 * The kubelet tier's images built once per run of the tier (testing/cluster/sharedImages.ts): with the run's folder
 * named, a second file asking for the same image gets the archive the first built, and another image is built anew;
 * without it, each call builds into the file's own work folder.
 */
import * as fs from 'fs';
import * as path from 'path';
import { SHARED_IMAGES_VARIABLE, sharedImage } from '../../testing/cluster/sharedImages';
import { workFolder } from '../../testing/workFolder';

const work = workFolder('lacchain-shared-images-');
const builds: string[] = [];

/** A stand-in build: writes an archive into `dir` and counts itself. */
const build = (name: string) => async (dir: string) => {
  builds.push(name);
  const archive = path.join(dir, `${name}.tar`);
  fs.writeFileSync(archive, `the ${name} image`);
  return { archive, digest: `sha256:${name}`, reference: `docker.io/library/${name}:1` };
};

afterEach(() => {
  delete process.env[SHARED_IMAGES_VARIABLE];
  builds.length = 0;
});

test("with the run's folder: built once, the same archive for every file; another image built anew", async () => {
  const run = fs.mkdtempSync(path.join(work, 'run-'));
  process.env[SHARED_IMAGES_VARIABLE] = run;
  const first = await sharedImage('besu 25.1.0', fs.mkdtempSync(path.join(work, 'file1-')), build('besu'));
  const second = await sharedImage('besu 25.1.0', fs.mkdtempSync(path.join(work, 'file2-')), build('besu'));
  expect(second).toEqual(first);
  expect(builds).toEqual(['besu']);
  expect(first.archive.startsWith(`${run}/`)).toBe(true);
  expect(fs.readFileSync(first.archive, 'utf8')).toBe('the besu image');
  const other = await sharedImage('besu 24.12.2', work, build('besu-older'));
  expect(other.archive).not.toBe(first.archive);
  expect(builds).toEqual(['besu', 'besu-older']);
  // Nothing half made left beside them.
  expect(fs.readdirSync(run).filter((name) => name.includes('.building-'))).toEqual([]);
});

test('without it: each call builds into its own work folder', async () => {
  const file = fs.mkdtempSync(path.join(work, 'alone-'));
  const first = await sharedImage('besu 25.1.0', file, build('besu'));
  const second = await sharedImage('besu 25.1.0', file, build('besu'));
  expect(builds).toEqual(['besu', 'besu']);
  expect(second.archive).not.toBe(first.archive);
  expect(first.archive.startsWith(`${file}/`)).toBe(true);
});

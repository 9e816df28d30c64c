/**
 * The stand-in's release archives the suites serve (testing/standinReleases.ts): packed once per content into the
 * tools cache and copied from there, byte for byte what pack.sh packs; another input, another archive.
 */
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PROJECT_DIR } from '../../testing/run';
import { cachedRelease, packStandinReleases, releaseDigest, UPGRADE_PATH } from '../../testing/standinReleases';

jest.setTimeout(60_000);

const VERSION = UPGRADE_PATH[0];
let cache: string;
let work: string;
const saved = process.env.LACCHAIN_TOOLS_CACHE;

beforeEach(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'standin-releases-'));
  // A cache of the test's own, but the p2p program where tests/setup.sh built it (p2p/build.sh reads the same variable).
  cache = path.join(work, 'cache');
  const built = spawnSync('bash', [path.join(PROJECT_DIR, 'tests/fixtures/besu-standin/p2p/build.sh'), '--check'], {
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`the stand-in's p2p program is not built: ${built.stderr}`);
  const p2pDir = path.dirname(built.stdout.trim());
  fs.mkdirSync(path.join(cache, 'besu-standin-p2p'), { recursive: true });
  fs.symlinkSync(p2pDir, path.join(cache, 'besu-standin-p2p', path.basename(p2pDir)));
  process.env.LACCHAIN_TOOLS_CACHE = cache;
});

afterEach(() => {
  if (saved === undefined) delete process.env.LACCHAIN_TOOLS_CACHE;
  else process.env.LACCHAIN_TOOLS_CACHE = saved;
  fs.rmSync(work, { recursive: true, force: true });
});

const packedByScript = (dir: string, options: string) => {
  const result = spawnSync(
    'sh',
    [path.join(PROJECT_DIR, 'tests/fixtures/besu-standin/pack.sh'), VERSION, dir, options],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`pack.sh failed: ${result.stderr}`);
  return releaseDigest(dir, VERSION);
};
const options = path.join(PROJECT_DIR, 'tests/fixtures/besu-options', `${VERSION}.txt`);

it('serves what pack.sh packs, packed once into the cache and copied from there', async () => {
  const [first, second] = [path.join(work, 'first'), path.join(work, 'second')];
  await packStandinReleases([VERSION], first);
  const cached = fs.readdirSync(path.join(cache, 'standin-releases'));
  expect(cached).toHaveLength(1);
  const archive = path.join(cache, 'standin-releases', cached[0], `besu-${VERSION}.tar.gz`);
  const packedAt = fs.statSync(archive).mtimeMs;
  await packStandinReleases([VERSION], second);
  expect(fs.statSync(archive).mtimeMs).toBe(packedAt);
  expect(releaseDigest(second, VERSION)).toBe(releaseDigest(first, VERSION));
  expect(releaseDigest(first, VERSION)).toBe(packedByScript(path.join(work, 'script'), options));
  // No staging folder left beside it.
  expect(fs.readdirSync(path.dirname(archive))).toEqual([`besu-${VERSION}.tar.gz`]);
});

it('packs again when an input changed: the archive follows its inputs, never an older packing', async () => {
  const first = await cachedRelease(VERSION, options);
  // Another options file (one more option the release accepts): another cached archive, what pack.sh packs with it.
  const changed = path.join(work, 'options.txt');
  fs.writeFileSync(changed, `${fs.readFileSync(options, 'utf8')}--an-option-of-the-test\n`);
  const second = await cachedRelease(VERSION, changed);
  expect(path.dirname(second)).not.toBe(path.dirname(first));
  const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  expect(digest(second)).toBe(packedByScript(path.join(work, 'script'), changed));
  expect(digest(second)).not.toBe(digest(first));
  expect(await cachedRelease(VERSION, options)).toBe(first);
});

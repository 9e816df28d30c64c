/**
 * The package (issue 65 item 4): `npm pack --dry-run` (which builds the public API into dist/ first, prepack) lists
 * the API's JavaScript with its type declarations, the files it reads at run time (scripts/, Besu's option lists),
 * and no tests, test harness or benchmarks; package.json's `exports` and `types` name files of that listing; and a
 * program outside the project that requires the package by its name (as an operator's does, through node_modules)
 * gets the node components from that build.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PROJECT_DIR } from '../../testing/run';

jest.setTimeout(180_000);

const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_DIR, 'package.json'), 'utf8'));
let files: string[] = [];

beforeAll(() => {
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json'], {
    cwd: PROJECT_DIR,
    encoding: 'utf8',
    timeout: 170_000,
  });
  if (pack.status !== 0) throw new Error(`npm pack --dry-run failed: ${pack.stderr}`);
  // prepack's own output comes first on standard output; the listing is the JSON after it.
  const json = pack.stdout.slice(pack.stdout.indexOf('[\n'));
  files = (JSON.parse(json) as { files: { path: string }[] }[])[0].files.map((file) => file.path);
});

it('lists the public API with its type declarations, and what it reads at run time', () => {
  for (const file of [
    'library/index',
    'library/clusterNode',
    'library/machineNode',
    'program',
    'components/kubernetesNode',
  ]) {
    expect(files).toContain(`dist/${file}.js`);
    expect(files).toContain(`dist/${file}.d.ts`);
  }
  expect(files).toContain('scripts/remote/lib.sh');
  expect(
    files.filter((file) => file.startsWith('core/catalog/besu-options/') && file.endsWith('.txt')).length,
  ).toBeGreaterThan(5);
  expect(files).toContain('package.json');
});

it('names files of the listing in exports and types', () => {
  const strip = (file: string) => file.replace(/^\.\//, '');
  expect(files).toContain(strip(manifest.types));
  expect(files).toContain(strip(manifest.exports['.'].types));
  expect(files).toContain(strip(manifest.exports['.'].default));
});

it('holds no tests, test harness, benchmarks or TypeScript sources', () => {
  const unwanted = files.filter(
    (file) =>
      /^(tests|testing|bench|tools|cli)\//.test(file) ||
      /\.test\.(ts|js)$/.test(file) ||
      (file.endsWith('.ts') && !file.endsWith('.d.ts')),
  );
  expect(unwanted).toEqual([]);
});

it("gives a program outside the project the node components by the package's name", () => {
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-package-user-'));
  try {
    fs.mkdirSync(path.join(outside, 'node_modules'));
    fs.symlinkSync(PROJECT_DIR, path.join(outside, 'node_modules', manifest.name), 'dir');
    const script = `const api = require(${JSON.stringify(manifest.name)});
      console.log(JSON.stringify({ keys: Object.keys(api).sort(), from: require.resolve(${JSON.stringify(manifest.name)}) }));`;
    const run = spawnSync(process.execPath, ['-e', script], { cwd: outside, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const { keys, from } = JSON.parse(run.stdout);
    expect(keys).toEqual(['ClusterNode', 'MachineNode', 'deployStackFile']);
    expect(fs.realpathSync(from)).toBe(path.join(PROJECT_DIR, 'dist', 'library', 'index.js'));
  } finally {
    fs.rmSync(outside, { recursive: true, force: true });
  }
});

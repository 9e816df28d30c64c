/**
 * `prettier --check .` for `npm run lint`, remembering what it found formatted: a file whose path, content and Prettier
 * options (Prettier's version among them) a run already found formatted is not formatted again.
 *
 * Prettier's own `--cache` names each file by its full path, and in a fresh clone (CI) every path is new: the check took
 * 11-20 s of a core there. The digests it keeps (node_modules/.cache/lacchain-lint/formatted, carried from one CI run to
 * the next by tools/lint-cache.sh) hold no folder. The files are Prettier's for `.`: those git does not ignore, less
 * .prettierignore's and those no Prettier parser takes. Prints what `prettier --check` prints for a file not formatted,
 * and exits 1 when there is one.
 */
const { execFileSync } = require('child_process');
const { createHash } = require('crypto');
const fs = require('fs');
const path = require('path');
const prettier = require('prettier');

const PROJECT_DIR = path.join(__dirname, '..');
/** The digests of the files found formatted, one per line. */
const FORMATTED = path.join(PROJECT_DIR, 'node_modules', '.cache', 'lacchain-lint', 'formatted');
const IGNORE_FILES = ['.gitignore', '.prettierignore'].map((name) => path.join(PROJECT_DIR, name));

/** The project's files that git does not ignore, tracked or not, relative to the project folder. */
function projectFiles() {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: PROJECT_DIR,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...new Set(listed.split('\0').filter(Boolean))].filter((file) => fs.existsSync(path.join(PROJECT_DIR, file)));
}

/**
 * The files not formatted as Prettier would, relative to the project folder, and the digests of the formatted ones (those
 * in `known` not checked again).
 */
async function checkFiles(known) {
  const unformatted = [];
  const formatted = new Set();
  for (const file of projectFiles()) {
    const filepath = path.join(PROJECT_DIR, file);
    const info = await prettier.getFileInfo(filepath, { ignorePath: IGNORE_FILES });
    if (info.ignored || !info.inferredParser) continue;
    const options = { ...(await prettier.resolveConfig(filepath, { editorconfig: true })), filepath };
    const source = fs.readFileSync(filepath, 'utf8');
    const digest = createHash('sha256')
      .update(JSON.stringify([prettier.version, { ...options, filepath: file }, source]))
      .digest('hex');
    if (known.has(digest) || (await prettier.check(source, options))) formatted.add(digest);
    else unformatted.push(file);
  }
  return { unformatted, formatted };
}

async function main() {
  const known = new Set(fs.existsSync(FORMATTED) ? fs.readFileSync(FORMATTED, 'utf8').split('\n').filter(Boolean) : []);
  process.stdout.write('Checking formatting...\n');
  const { unformatted, formatted } = await checkFiles(known);
  fs.mkdirSync(path.dirname(FORMATTED), { recursive: true });
  fs.writeFileSync(FORMATTED, [...formatted].join('\n'));
  for (const file of unformatted) process.stdout.write(`[warn] ${file}\n`);
  if (unformatted.length === 0) {
    process.stdout.write('All matched files use Prettier code style!\n');
    return;
  }
  const which = unformatted.length === 1 ? 'the above file' : `${unformatted.length} files`;
  process.stdout.write(`[warn] Code style issues found in ${which}. Run Prettier with --write to fix.\n`);
  process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`formatCheck: ${error.message}\n`);
  process.exitCode = 2;
});

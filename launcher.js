/**
 * Loads a program entry (the program, or a command-line tool of cli/) the fast way when it can: its build in bin/ (tsconfig.build.json, made by `npm install` or
 * `npm run build:program`), which spares ts-node's compile on each of the two runs of `pulumi up`; or, when a source
 * file is newer than that build (or there is none), the TypeScript sources through ts-node, saying so on stderr.
 */
'use strict';
const fs = require('fs');
const path = require('path');

/** The build's folder and the file whose time marks a finished build, under the project folder. */
const BUILD_DIR = 'bin';
const BUILD_STAMP = path.join(BUILD_DIR, '.built');
/** What the program is compiled from (tsconfig.build.json's files and everything they import). */
const SOURCES = [
  'index.ts',
  'program.ts',
  'library',
  'components',
  'core',
  'policy',
  'cli',
  'tools/programRun',
  'tools/recording',
  'bench/run.ts',
  'bench/parts.ts',
];

/**
 * Ends the process quietly when the reader of its output goes away (`npm run node -- --help | head`), as `cat` ends:
 * without it, the next write after the pipe closed throws an EPIPE stack trace. Installed once, before any output.
 */
function endQuietlyOnBrokenPipe() {
  if (process.lacchainBrokenPipe) return;
  process.lacchainBrokenPipe = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(process.exitCode ?? 0);
    });
  }
}

/** The newest modification time of the TypeScript sources under `entry`, a file or a folder. */
function newestSource(entry) {
  const stat = fs.statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return entry.endsWith('.ts') ? stat.mtimeMs : 0;
  return Math.max(0, ...fs.readdirSync(entry).map((name) => newestSource(path.join(entry, name))));
}

/** Why the build of `entry` in the project folder `dir` cannot be run, or undefined when it is current. */
function staleBuild(dir, entry) {
  const stamp = fs.statSync(path.join(dir, BUILD_STAMP), { throwIfNoEntry: false });
  if (!stamp || !fs.existsSync(path.join(dir, BUILD_DIR, `${entry}.js`))) return 'the program is not built';
  const newest = Math.max(...SOURCES.map((source) => newestSource(path.join(dir, source))));
  return newest > stamp.mtimeMs ? 'the build in bin/ is older than the sources' : undefined;
}

/** The project's packages are not installed (`npm install` was not run in the project folder). */
class NotInstalledError extends Error {}

/** Refuses to go on, in one line, when a package the program or the tools need (`name`) is not installed in `dir`. */
function requireInstalled(dir, name) {
  try {
    require.resolve(name, { paths: [dir] });
  } catch {
    throw new NotInstalledError(
      `the project's packages are not installed in ${dir} (no ${name}): run npm install first, there`,
    );
  }
}

/** The module of a program entry (a path without extension, relative to the project folder). */
function load(entry) {
  requireInstalled(__dirname, '@pulumi/pulumi');
  const stale = staleBuild(__dirname, entry);
  if (!stale) return require(path.join(__dirname, BUILD_DIR, `${entry}.js`));
  requireInstalled(__dirname, 'ts-node');
  process.stderr.write(`${stale}: running the TypeScript sources through ts-node (npm run build:program builds it)\n`);
  return loadSource(entry);
}

/**
 * The module of a TypeScript source (a path without extension, relative to the project folder), through ts-node
 * (registered once, transpiling only), quietly: the benchmarks' parts (bench/measure.ts), which the build leaves out,
 * as it leaves out the test harness they use; and an entry whose build is not current.
 */
function loadSource(entry) {
  requireInstalled(__dirname, 'ts-node');
  if (!process[Symbol.for('ts-node.register.instance')]) {
    require('ts-node').register({ transpileOnly: true, project: path.join(__dirname, 'tsconfig.json') });
  }
  return require(path.join(__dirname, `${entry}.ts`));
}

module.exports = { load, loadSource, staleBuild, endQuietlyOnBrokenPipe, SOURCES };

// `node launcher.js cli/<tool> ARGS...` (package.json's scripts): runs a command-line tool (or the benchmarks'
// command line, bench/run) the same way, with ARGS as its own arguments.
if (require.main === module) {
  endQuietlyOnBrokenPipe();
  const [entry] = process.argv.splice(2, 1);
  if (!entry) {
    process.stderr.write('usage: node launcher.js <entry, e.g. cli/node> [arguments]\n');
    process.exitCode = 2;
  } else {
    try {
      load(entry);
    } catch (error) {
      if (!(error instanceof NotInstalledError)) throw error;
      process.stderr.write(`error: ${error.message}\n`);
      process.exitCode = 2;
    }
  }
}

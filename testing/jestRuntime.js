/**
 * The test files' module runtime: jest's own, compiling each module with V8's code cache of the same module in an
 * earlier file of this worker process.
 *
 * Jest runs every test file in a context of its own and compiles every module that file loads anew (the Pulumi SDK,
 * zod, the program's core): a worker running thirty files compiled the same sources thirty times. The cache is what V8
 * made of the first compile; it is used only for the very same code (the transformed source compared in full), and V8
 * itself refuses a cache that does not fit (then the module is compiled as before). Measured on the unit tier run in one
 * process (tests/README.md, "CPU, not waiting"): 8.9 s of a core without, 7.5 s with.
 *
 * Everything else is jest's: when its runtime no longer compiles through the part this wraps (another jest version),
 * its own compile runs unchanged.
 */
const vm = require('vm');
const Runtime = require('jest-runtime').default;

/** A module's transformed source and V8's cache of its compiled code, by file name, for this worker's life. */
const codeCaches = new Map();

class CodeCachingRuntime extends Runtime {
  constructor(...args) {
    super(...args);
    const executor = this.executor;
    if (!wrappable(executor)) return;
    const jestCompile = executor.compile.bind(executor);
    executor.compile = (source, filename) => compileCached(executor, jestCompile, source, filename);
  }
}

/** True when jest's runtime compiles through the parts this wraps (jest 30's module executor). */
function wrappable(executor) {
  const parts = [executor?.compile, executor?.dynamicImport, executor?.resolution?.isCoreModule];
  return parts.every((part) => typeof part === 'function') && Array.isArray(executor.injectedModuleParameters);
}

/**
 * Compiles a module's source as jest does (its parameters, its context, its dynamic import), with the cache of an
 * earlier compile of the same source; keeps the cache V8 makes of a first compile. A failing compile is left to jest's,
 * which words the error.
 */
function compileCached(executor, jestCompile, source, filename) {
  const context = executor.environment.getVmContext();
  if (context == null || executor.resolution.isCoreModule(filename)) return jestCompile(source, filename);
  const known = codeCaches.get(filename);
  const cached = known !== undefined && known.source === source;
  let compiled;
  try {
    compiled = vm.compileFunction(source, executor.injectedModuleParameters, {
      filename,
      parsingContext: context,
      ...(cached ? { cachedData: known.data } : { produceCachedData: true }),
      importModuleDynamically: (specifier, _function, attributes, ...rest) =>
        executor.dynamicImport(specifier, filename, context, attributes, rest[0]),
    });
  } catch {
    return jestCompile(source, filename);
  }
  if (!cached && compiled.cachedData) codeCaches.set(filename, { source, data: compiled.cachedData });
  return compiled;
}

module.exports = CodeCachingRuntime;

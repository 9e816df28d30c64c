/**
 * Jest: TypeScript tests under tests/, compiled by ts-jest (CommonJS).
 *
 * Workers: most of a full run's time is the end-to-end and cluster suites waiting on their test hosts and API servers
 * (SSH round trips, systemd, apt), not on the cores, so four suites run side by side on the 2 cores of this kind of
 * machine (jest's default there is one), in CI too, beside the real-worker tier's own jest (tests/run.sh); the slowest
 * files start first (tests/sequencer.js). Measured in tests/README.md: with two the cores were a third idle and a warm
 * run took 14 minutes, with three 10; on a later, larger suite (2026-12-07) three took 956-997 s for the files beside
 * the real-worker tier, four 878 s. LACCHAIN_TEST_WORKERS sets another number.
 *
 * Time per test: 30 s unless a file sets its own (the end-to-end suites do). Jest's 5 s default is less than a
 * program-tier test takes on a busy machine: rpcAccess's exposure test (three declarations of the program under the
 * mocks) takes 2.4 s alone and went past 5 s in a fresh clone's full run (acf5028), and the next test read its leftover
 * declarations.
 */
module.exports = {
  preset: 'ts-jest',
  // Node's, with the kubelet tier's shared cluster handed to the files and stopped after the last
  // (testing/cluster/sharedKubelet.ts).
  testEnvironment: '<rootDir>/testing/jestEnvironment.js',
  // Jest's, compiling a module a worker already compiled for an earlier file from V8's cache of it.
  runtime: '<rootDir>/testing/jestRuntime.js',
  globalSetup: '<rootDir>/testing/jestGlobalSetup.js',
  globalTeardown: '<rootDir>/testing/jestGlobalTeardown.js',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  // The package's own name, as an operator's program imports it: its public API's sources (tsconfig.json's paths).
  moduleNameMapper: { '^lacchain-besu-node$': '<rootDir>/library/index.ts' },
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: { warnOnly: false } }] },
  maxWorkers: Number(process.env.LACCHAIN_TEST_WORKERS || 4),
  testSequencer: '<rootDir>/tests/sequencer.js',
  testTimeout: 30_000,
};

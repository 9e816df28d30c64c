/**
 * The test files' environment: jest's node environment, with the kubelet tier's shared cluster
 * (testing/cluster/sharedKubelet.ts) given by the global `lacchainSharedKubelet()`. Loaded here, in jest's own context, the
 * module is one for every file a process runs (a file's own imports are made anew for each file), and the global
 * teardown (testing/jestGlobalTeardown.js) finds it to stop the cluster.
 */
const { TestEnvironment } = require('jest-environment-node');
const sharedKubelet = require('./cluster/sharedKubelet');

class LacchainEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    // A function returning the module: jest clears what a file's global holds at its end (the module's own exports
    // would be emptied for the next file), and a function has nothing of the module's own to clear.
    this.global.lacchainSharedKubelet = () => sharedKubelet;
    // Node's 10 frames for an error's stack, not jest's 100, each frame mapped through the source maps when the stack is
    // read: the Pulumi runtime reads a new Error's stack for every promise it makes (debuggablePromise), and with 100
    // frames that was a sixth of the program tier's time (tests/program/rpcAccess and companions: 17.1 s of a core, 14.3
    // with 10). A failed expectation's trace still reaches the test's line.
    this.global.Error.stackTraceLimit = 10;
  }
}

module.exports = LacchainEnvironment;

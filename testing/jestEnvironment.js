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
  }
}

module.exports = LacchainEnvironment;

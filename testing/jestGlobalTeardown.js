/**
 * Jest's global teardown: stops the kubelet tier's shared cluster (testing/cluster/sharedKubelet.ts), when this process
 * loaded it (through testing/jestEnvironment.js) and one runs.
 */
const path = require('path');

module.exports = async () => {
  const loaded = require.cache[path.join(__dirname, 'cluster', 'sharedKubelet.ts')];
  if (loaded) await loaded.exports.stopSharedCluster();
};

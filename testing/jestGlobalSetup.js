/**
 * Jest's global set-up: names jest's own process (LACCHAIN_JEST_MAIN_PROCESS), the one that runs the global teardown,
 * where the kubelet tier's files may share one cluster (testing/cluster/sharedKubelet.ts).
 */
module.exports = () => {
  process.env.LACCHAIN_JEST_MAIN_PROCESS = String(process.pid);
};

// The order jest starts the test files in, when it has no timings of its own (a fresh clone: CI): the slowest first,
// so that with several workers the long end-to-end suites run beside the many short ones instead of after them.
// The slowest files (tests/README.md's time table) lead, then the tiers from the slowest to the quickest, each tier's
// files by size. With timings of an earlier run on this checkout, jest's own order (slowest and failed first) stands.
const Sequencer = require('@jest/test-sequencer').default;
const fs = require('fs');
const path = require('path');

/** The slowest files, slowest first (tests/README.md, "How long CI takes"). */
const SLOWEST = [
  'e2e/moveCuts',
  'e2e/sshNode',
  'e2e/rollout',
  'e2e/cuts',
  'e2e/sshNodeDay2',
  'cli/newcomerWalk',
  'engine/clusterPath',
  'e2e/moveNode',
  'cluster/operations',
  'e2e/companionNodes',
  'tools/lint',
  'e2e/debian13',
];
/** The tiers, slowest first. */
const TIERS = ['e2e', 'kubelet', 'engine', 'cluster', 'cli', 'tools', 'program', 'unit'];

class SlowestFirst extends Sequencer {
  sort(tests) {
    const timed = tests.some((test) => this.time(test) !== undefined);
    if (timed) return super.sort(tests);
    const rank = (test) => {
      const relative = path
        .relative(path.join(test.context.config.rootDir, 'tests'), test.path)
        .replace(/\.test\.ts$/, '');
      const slow = SLOWEST.indexOf(relative);
      if (slow >= 0) return [0, slow, 0];
      const tier = TIERS.indexOf(relative.split(path.sep)[0]);
      return [1, tier < 0 ? TIERS.length : tier, -fs.statSync(test.path).size];
    };
    return [...tests].sort((a, b) => {
      const [x, y] = [rank(a), rank(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
  }
}

module.exports = SlowestFirst;

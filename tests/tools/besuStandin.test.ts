/**
 * The Besu stand-in (a test fixture served to the SSH test host) passes its own self-test: the crypto vectors and a
 * real run answering RPC as Besu does. The end-to-end test relies on it.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { PROJECT_DIR } from '../../testing/run';

jest.setTimeout(120_000);

it('passes its self-test', () => {
  const result = spawnSync('python3', [path.join(PROJECT_DIR, 'tests/fixtures/besu-standin/test_standin.py')], {
    encoding: 'utf8',
  });
  expect(result.stderr).toMatch(/^Ran \d+ tests .*\n\nOK$/m);
  expect(result.status).toBe(0);
});

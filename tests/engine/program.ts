/**
 * The program's own entry, index.ts, as the engine tier's Automation API inline program: index.ts as `pulumi up` runs
 * it (the engine's config, the mandatory rules, the genesis downloaded and checked against its pinned digest, then
 * declareStack and the outputs), in the project folder as `pulumi up` runs it (an inline program runs in the test's
 * process, whose folder is another), with one difference: the networks' real genesis files cannot be fetched here, so
 * the network's pinned genesis is the project's test genesis (tests/fixtures/genesis/), served by the test on the
 * loopback. Imported by the tests, and loaded by the process that hosts a run the test kills (engine.ts).
 */
import type { PulumiFn } from '@pulumi/pulumi/automation';
import { NETWORKS, NetworkName } from '../../core/catalog/networks';
import { TEST_GENESIS } from '../../testing/fixtures';
import program from '../../index';

/** index.ts's program for a stack of `network` in `projectDir`, whose genesis is the test genesis at `genesisUrl`. */
export function engineProgram(network: NetworkName, genesisUrl: string, projectDir: string): PulumiFn {
  NETWORKS[network].genesis = { ...TEST_GENESIS, url: genesisUrl };
  return async () => {
    const previous = process.cwd();
    process.chdir(projectDir);
    try {
      return await program();
    } finally {
      process.chdir(previous);
    }
  };
}

/**
 * The benchmark's program entry: index.ts's work, with the genesis read from the file in LACCHAIN_BENCH_GENESIS
 * (the networks' real genesis files cannot be fetched here, and index.ts refuses any other). It loads the same
 * modules as index.ts, in the same order, so its run costs what a `pulumi up` run of the program costs.
 */
import * as fs from 'fs';
import { loadPulumiStack, secretInputs } from '../../components/pulumiSettings';
import { declareStack } from '../../program';

export = async () => {
  const loaded = loadPulumiStack();
  const genesis = fs.readFileSync(process.env.LACCHAIN_BENCH_GENESIS ?? '', 'utf8');
  const outputs = declareStack(loaded.settings, secretInputs(loaded), { genesis: () => genesis });
  return { network: outputs.network, nodes: outputs.nodes };
};

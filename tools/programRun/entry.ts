/**
 * A program entry for runs under `@pulumi/pulumi/cmd/run` outside `pulumi up` (run.ts): index.ts's work, with the
 * genesis read from the file in LACCHAIN_RUN_GENESIS (the networks' real genesis files cannot be fetched here, and
 * index.ts refuses any other). It loads the same modules as index.ts, in the same order, so a run costs what a
 * `pulumi up` run of the program costs. Its extra output `runtime` tells how the program was run: from its build
 * (JavaScript) or its sources, which provider SDKs were loaded and whether ts-node type-checked.
 */
import * as fs from 'fs';
import { loadPulumiStack, secretInputs } from '../../components/pulumiSettings';
import { declareStack } from '../../program';

/** ts-node's registered service (ts-node 10 keeps it on the process under this symbol). */
const TS_NODE = Symbol.for('ts-node.register.instance');

export = async () => {
  const loaded = loadPulumiStack();
  const genesis = fs.readFileSync(process.env.LACCHAIN_RUN_GENESIS ?? '', 'utf8');
  const outputs = declareStack(loaded.settings, secretInputs(loaded), { genesis: () => genesis });
  const tsNode = (process as unknown as Record<symbol, { options?: { transpileOnly?: boolean } } | undefined>)[TS_NODE];
  const loadedSdks = Object.keys(require.cache)
    .map((file) => /node_modules\/@pulumi\/(kubernetes|command|random)\//.exec(file)?.[1])
    .filter((sdk): sdk is string => sdk !== undefined);
  return {
    network: outputs.network,
    nodes: outputs.nodes,
    runtime: {
      compiled: __filename.endsWith('.js'),
      loadedSdks: [...new Set(loadedSdks)].sort(),
      typeChecked: tsNode ? !tsNode.options?.transpileOnly : false,
    },
  };
};

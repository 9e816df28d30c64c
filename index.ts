/**
 * The Pulumi program: read and validate the stack's settings once, declare one component per node, export outputs.
 * See README.md for the settings and program.ts for what is declared.
 */
import * as pulumi from '@pulumi/pulumi';
import { loadPulumiStack, secretInputs } from './components/pulumiSettings';
import { loadGenesis } from './core/genesis';
import { declareStack } from './program';

const loaded = loadPulumiStack();
const { settings } = loaded;
const outputs = declareStack(settings, secretInputs(loaded), {
  genesis: () => pulumi.output(loadGenesis(settings.network.genesis, { file: settings.genesisFile })),
});

/** The network the stack deploys to. */
export const network = outputs.network;
/** Per node: enode, address, permissioning request and where it runs. */
export const nodes = outputs.nodes;

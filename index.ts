/**
 * The Pulumi program: read and validate the stack's settings, obtain the verified genesis, then declare one component
 * per node and export the outputs. Bad settings or a genesis that is not the pinned one end the run before anything
 * is declared. See docs/settings.md for the settings and program.ts for what is declared.
 */
import * as pulumi from '@pulumi/pulumi';
import { loadPulumiStack, secretInputs } from './components/pulumiSettings';
import { GenesisError, loadGenesis } from './core/genesis';
import { declareStack } from './program';
import { describeRollout, ROLLOUT_HEADING } from './core/node/rollout';
import { describeStackBootnodes } from './core/node/stackBootnodes';
import { sshLoginLine } from './core/catalog/sshLogin';
import { stopRun } from './components/runStop';
import { lastNodesOutput } from './components/lastPlaces';
import { movedNodes, moveRefusal } from './core/node/place';
import { MOVING_NODE_VARIABLE } from './core/catalog/move';

export = async () => {
  const loaded = loadPulumiStack();
  const { settings } = loaded;
  let genesis: string;
  try {
    genesis = await loadGenesis(settings.network.genesis, { file: settings.genesisFile });
  } catch (error) {
    if (error instanceof GenesisError) throw stopRun(error.message);
    throw error;
  }
  // A node moved in the stack file without `npm run node -- move` (docs/moving.md): refused before anything is declared.
  const moved = movedNodes(await lastNodesOutput(), settings.nodes, settings.kubeContext);
  const refusal = moveRefusal(settings.stack, moved, process.env[MOVING_NODE_VARIABLE]);
  if (refusal) throw stopRun(refusal);
  // How pulumi up logs in to the machines, and so whether the SSH key is in the state (docs/ssh.md#logging-in).
  if (settings.nodes.some((n) => n.target === 'ssh')) void pulumi.log.info(sshLoginLine(settings.sshAuthentication));
  // Said in every preview and update of a stack of several nodes (docs/upgrades.md#rolling-out-a-change).
  const rollout = [
    ...describeRollout(settings.nodes, settings.rollout),
    ...describeStackBootnodes(settings.nodes, loaded.secrets.nodeKeys),
  ];
  if (rollout.length > 0) void pulumi.log.info([ROLLOUT_HEADING, ...rollout].join('\n'));
  const outputs = declareStack(settings, secretInputs(loaded), { genesis: () => genesis });
  return {
    /** The network the stack deploys to. */
    network: outputs.network,
    /** Per node: enode, address, permissioning request and where it runs. */
    nodes: outputs.nodes,
  };
};

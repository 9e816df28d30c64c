/**
 * The nodes of a stack file, as `pulumi up` of this project declares them (index.ts): the stack's settings read from
 * the engine and checked (with the mandatory policy rules), the network's genesis checked against its pinned digest,
 * the rollout said, then every node declared by program.ts, the components' declareStack.
 */
import * as pulumi from '@pulumi/pulumi';
import { loadPulumiStack, secretInputs } from '../components/pulumiSettings';
import { stopRun } from '../components/runStop';
import { sshLoginLine } from '../core/catalog/sshLogin';
import { GenesisError, loadGenesis } from '../core/genesis';
import { describeRollout, ROLLOUT_HEADING } from '../core/node/rollout';
import { describeStackBootnodes } from '../core/node/stackBootnodes';
import { declareStack, StackOutputs } from '../program';
import { lastNodesOutput } from '../components/lastPlaces';
import { movedNodes, moveRefusal } from '../core/node/place';
import { MOVING_NODE_VARIABLE } from '../core/catalog/move';

/** Declares the nodes of the current stack's file; its outputs. */
export async function deployStackFile(): Promise<StackOutputs> {
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
  // Read back on every stack: a cluster-only stack's last run may have had the node on a machine (a pod's entry written
  // by hand instead of `move`), and a replacement would start a second node with the same key.
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
  return declareStack(settings, secretInputs(loaded), { genesis: () => genesis });
}

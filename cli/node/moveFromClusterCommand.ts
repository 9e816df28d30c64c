/**
 * `npm run node -- move --from-kubernetes`: the command line of a move of a cluster node onto a machine, once the
 * operator wrote its `target: ssh` entry and inventory in the stack file (cli/operations/moveFromCluster.ts does the
 * move). Where it runs now is read from the same file with the node a cluster node again (its values file, still
 * there, says the rest); both are read as `pulumi up` reads them before anything changes.
 */
import * as fs from 'fs';
import { UsageError } from '../cli';
import { pulumiUp } from '../operations/move';
import { moveNodeFromCluster } from '../operations/moveFromCluster';
import { movedToClusterStackFile } from '../operations/moveStackFile';
import type { MoveCommandInput } from './moveCommand';
import { stackAsIfMoved } from './stackAsIfMoved';

/** Moves cluster node `node` (an SSH node in the stack file now) onto its machine, through `pulumi up`. */
export async function moveFromClusterCommand(move: MoveCommandInput): Promise<void> {
  const { stack, settings, node, values, rpcUrl } = move;
  if (values['to-kubernetes']) throw new UsageError('move: give --from-kubernetes or --to-kubernetes, not both');
  if (node.target !== 'ssh') {
    throw new UsageError(
      `move --from-kubernetes: write node ${node.name}'s target: ssh and inventory in the stack file first (docs/moving.md)`,
    );
  }
  const { configFile } = settings;
  const clusterText = movedToClusterStackFile(fs.readFileSync(configFile, 'utf8'), node.name);
  const from = stackAsIfMoved(stack, configFile, clusterText).nodes.find((n) => n.name === node.name);
  if (from?.target !== 'kubernetes') throw new UsageError(`move: node ${node.name} was not a cluster node`);
  await moveNodeFromCluster(
    {
      stack,
      from,
      to: node,
      kubeContext: settings.kubeContext,
      configFile,
      clusterText,
      ssh: { keyFile: values['ssh-key'], options: values['ssh-option'] ?? [] },
      rpcUrl,
    },
    { bringUp: pulumiUp },
  );
}

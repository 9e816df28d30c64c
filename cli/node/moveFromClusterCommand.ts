/**
 * `npm run node -- move --from-kubernetes`: the command line of a move of a cluster node onto a machine, once the
 * operator wrote its `target: ssh` entry and inventory in the stack file (cli/operations/moveFromCluster.ts does the
 * move). Where it runs now is read from the same file with the node a cluster node again (its values file, still
 * there, says the rest); both are read as `pulumi up` reads them before anything changes.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { StackName } from '../../core/catalog/networks';
import type { NodeSettings, StackSettings } from '../../core/settings/model';
import { CommandLine, UsageError } from '../cli';
import { pulumiUp } from '../operations/move';
import { moveNodeFromCluster } from '../operations/moveFromCluster';
import { movedToClusterStackFile } from '../operations/moveStackFile';
import { loadOperatorStack } from '../operatorStack';
import type { NODE_OPTIONS } from './spec';

/** Moves cluster node `node` (an SSH node in the stack file now) onto its machine, through `pulumi up`. */
export async function moveFromClusterCommand(
  stack: StackName,
  settings: StackSettings,
  node: NodeSettings,
  values: CommandLine<typeof NODE_OPTIONS>['values'],
  rpcUrl: string | undefined,
): Promise<void> {
  if (values['to-kubernetes']) throw new UsageError('move: give --from-kubernetes or --to-kubernetes, not both');
  if (node.target !== 'ssh') {
    throw new UsageError(
      `move --from-kubernetes: write node ${node.name}'s target: ssh and inventory in the stack file first (docs/moving.md)`,
    );
  }
  const { configFile } = settings;
  const clusterText = movedToClusterStackFile(fs.readFileSync(configFile, 'utf8'), node.name);
  const checked = path.join(path.dirname(configFile), `.${path.basename(configFile)}.move-check`);
  fs.writeFileSync(checked, clusterText);
  let from: NodeSettings | undefined;
  try {
    from = loadOperatorStack(stack, checked).settings.nodes.find((n) => n.name === node.name);
  } finally {
    fs.rmSync(checked, { force: true });
  }
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

/**
 * `npm run node -- move --to-kubernetes`: the command line of a move of an SSH node into the stack's cluster
 * (cli/operations/moveToCluster.ts does the move). The moved stack file is read as `pulumi up` will read it before
 * anything changes; a move cut after it rewrote the stack file goes on from the file it kept beside it.
 */
import * as fs from 'fs';
import type { NodeSettings } from '../../core/settings/model';
import { UsageError } from '../cli';
import { movedToClusterStackFile } from '../operations/moveStackFile';
import { moveNodeToCluster, pulumiUpInCluster } from '../operations/moveToCluster';
import type { MoveCommandInput } from './moveCommand';
import { stackAsIfMoved } from './stackAsIfMoved';
import { loadOperatorStack } from '../operatorStack';

/** The flags of a move between machines, which a move into the cluster does not take. */
const MACHINE_FLAGS = ['to-host', 'to-host-key', 'to-user', 'to-ssh-port', 'to-node-ip'] as const;

/** Moves `node` into the stack's cluster (or finishes a move cut part-way), through `pulumi up`. */
export async function moveToClusterCommand(move: MoveCommandInput): Promise<void> {
  const { stack, settings, node, values, rpcUrl } = move;
  const given = MACHINE_FLAGS.filter((flag) => values[flag] !== undefined);
  if (given.length > 0) throw new UsageError(`move: --to-kubernetes takes no --${given.join(', --')}`);
  const { configFile } = settings;
  let from: NodeSettings | undefined = node;
  let movedText: string;
  if (node.target === 'kubernetes') {
    // A move cut after it rewrote the stack file: the old place is in the file it kept beside it.
    const before = `${configFile}.before-move`;
    from = fs.existsSync(before)
      ? loadOperatorStack(stack, before).settings.nodes.find((n) => n.name === node.name)
      : undefined;
    if (from?.target !== 'ssh') {
      throw new UsageError(
        `move: node ${node.name} is a cluster node already, and no move of it into the cluster was cut`,
      );
    }
    movedText = fs.readFileSync(configFile, 'utf8');
  } else {
    movedText = movedToClusterStackFile(fs.readFileSync(configFile, 'utf8'), node.name);
  }
  // The stack file with the node moved, read as pulumi up will read it (its values file beside it): every check first.
  const { nodes, kubeContext } = stackAsIfMoved(stack, configFile, movedText);
  const to = nodes.find((n) => n.name === node.name);
  if (to?.target !== 'kubernetes') throw new UsageError(`move: node ${node.name} is not a cluster node once moved`);
  if (from.target !== 'ssh') throw new UsageError(`move: node ${node.name} is not an SSH node`);
  await moveNodeToCluster(
    {
      stack,
      from,
      to,
      kubeContext,
      configFile,
      movedText,
      ssh: { keyFile: values['ssh-key'], options: values['ssh-option'] ?? [] },
      rpcUrl,
    },
    { bringUp: pulumiUpInCluster },
  );
}

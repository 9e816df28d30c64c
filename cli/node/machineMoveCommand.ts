/**
 * `npm run node -- move` between two machines: the flags read into the stack file as it will be after the move, then
 * the move itself (cli/operations/move.ts). Loaded by cli/node/run.ts for a move only.
 */
import * as fs from 'fs';
import type { StackName } from '../../core/catalog/networks';
import type { NodeSettings } from '../../core/settings/model';
import { CommandLine, UsageError } from '../cli';
import { loadOperatorStack } from '../operatorStack';
import { moveNode, newKeyRefusal, pulumiUp } from '../operations/move';
import { movedStackFile } from '../operations/moveStackFile';
import { NODE_OPTIONS } from './spec';
import { stackAsIfMoved } from './stackAsIfMoved';

/** `move`: the node on the new machine its flags name, through `pulumi up` (cli/operations/move.ts). */
export async function moveCommand(
  stack: StackName,
  configFile: string,
  node: NodeSettings,
  values: CommandLine<typeof NODE_OPTIONS>['values'],
): Promise<void> {
  if (node.target !== 'ssh') throw new UsageError(`move: node ${node.name} is not an SSH node`);
  const host = values['to-host'];
  const hostKey = values['to-host-key'];
  if (!host || !hostKey) throw new UsageError('move: --to-host and --to-host-key are required');
  const newKey = values['new-key'] ?? false;
  const refusal = newKey ? newKeyRefusal(node, loadOperatorStack(stack, configFile).secrets) : undefined;
  if (refusal) throw new UsageError(refusal);
  // A move cut after it rewrote the stack file: the old place is in the file it kept beside it.
  const before = `${configFile}.before-move`;
  if (node.host === host && fs.existsSync(before)) {
    const from = loadOperatorStack(stack, before).settings.nodes.find((n) => n.name === node.name);
    if (from?.target === 'ssh' && from.host !== host) {
      await moveNode(
        {
          stack,
          from,
          to: node,
          configFile,
          movedText: fs.readFileSync(configFile, 'utf8'),
          ssh: { keyFile: values['ssh-key'], options: values['ssh-option'] ?? [] },
          newKey,
        },
        { bringUp: pulumiUp },
      );
      return;
    }
  }
  const port = values['to-ssh-port'] === undefined ? undefined : Number(values['to-ssh-port']);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
    throw new UsageError(`--to-ssh-port: given ${JSON.stringify(values['to-ssh-port'])}; allowed: 1 to 65535`);
  }
  const nodeIp = values['to-node-ip'] ?? (node.p2pHost === node.host ? host : undefined);
  const movedText = movedStackFile(fs.readFileSync(configFile, 'utf8'), node.name, {
    host,
    host_key: hostKey,
    port,
    user: values['to-user'],
    node_ip: nodeIp,
  });
  // The stack file with the node moved, read as pulumi up will read it: every check of the settings before anything.
  const to = stackAsIfMoved(stack, configFile, movedText).nodes.find((n) => n.name === node.name);
  if (to?.target !== 'ssh') throw new UsageError(`move: node ${node.name} is not an SSH node on the new machine`);
  await moveNode(
    {
      stack,
      from: node,
      to,
      configFile,
      movedText,
      ssh: { keyFile: values['ssh-key'], options: values['ssh-option'] ?? [] },
      newKey,
    },
    { bringUp: pulumiUp },
  );
}

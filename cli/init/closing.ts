/**
 * How `npm run init` ends: the node, its enode and address (or why none yet), where its key lives, the stack's other
 * nodes, how pulumi up logs in, and the numbered list of what is still to do before pulumi up, each with its command,
 * then the permissioning request's how and where.
 */
import type { Network } from '../../core/catalog/networks';
import { permissioningHowAndWhere } from '../../core/permissioning';
import { shellQuote } from '../../core/remote/shell';
import type { InitValues } from './asker';
import type { KeyChoice, MadeKey } from './nodeKeyChoice';
import type { NodeChoice, StackFiles } from './nodeChoice';
import type { StackFileNode } from './settingsFiles';
import { agentLoginNote, formatToDo, stillToDo } from './stillToDo';

/** Prints the end of init's output for the node written. */
export function printClosing(
  values: InitValues,
  files: StackFiles,
  node: NodeChoice,
  answers: Record<string, unknown>,
  key: { choice: KeyChoice; made: MadeKey },
): void {
  const { stack, network, dir, stackFile, stackFileName, listed } = files;
  const { name, typenode, target, machineCustody } = node;
  const { identity, keyToDo } = key.made;
  const elsewhere = dir !== process.cwd();
  const rerun = [
    `npm run init -- --stack ${stack}`,
    ...(values.dir !== undefined ? [`--dir ${shellQuote(values.dir)}`] : []),
    ...(values['key-dir'] !== undefined ? [`--key-dir ${shellQuote(values['key-dir'])}`] : []),
    `--name ${name} --replace ${machineCustody ? '--key-custody machine' : `--keygen ${key.choice.useKey ? 'yes --store-secret no' : 'no'}`} --host-key`,
  ].join(' ');
  const items = stillToDo({
    stack,
    network,
    stackFile: stackFileName,
    dir,
    planConfig: elsewhere ? ` --config ${shellQuote(stackFile)}` : '',
    node: { name, host: answers.host as string, port: answers.port as number | undefined, rerun },
  });
  if (keyToDo) items.push(keyToDo);

  const onNetwork = (target === 'kubernetes' ? answers.nodeName : answers.node_name) as string;
  process.stdout.write(
    `\nnode ${name}: ${typenode} on ${network.name}, ${target}${onNetwork && onNetwork !== name ? ` (named ${onNetwork} on the network)` : ''}\n`,
  );
  if (identity) process.stdout.write(`enode:   ${identity.enode}\naddress: ${identity.address}\n`);
  else if (machineCustody) {
    process.stdout.write(
      'the node key is made on the machine by the first pulumi up and never leaves it: its enode and address are then in the stack outputs (pin its publicKey output in the node entry, and keep a copy of the key: docs/security.md#key-custody)\n',
    );
  } else
    process.stdout.write('no node key yet: pulumi up makes one (its enode and address are in the stack outputs)\n');
  if (!machineCustody) {
    // Key custody stack (init sets up no other for a cluster node): the state holds the key.
    process.stdout.write(
      'the node key lives in the stack state: back up ~/.pulumi-lacchain and PULUMI_CONFIG_PASSPHRASE together (docs/backups.md#losing-the-state-is-losing-the-key)\n',
    );
  }
  process.stdout.write(otherNodesNote(listed, name, stack));
  process.stdout.write(agentLoginNote(dir, stackFileName));
  const permissioning = permissioningStep(network, stack, name);
  if (items.length === 0) {
    process.stdout.write(`next: pulumi up --stack ${stack}\n${permissioning}`);
    return;
  }
  process.stdout.write(
    `\nStill to do before pulumi up --stack ${stack}${elsewhere ? ` (run the commands in ${dir})` : ''}:\n${formatToDo(items)}\n` +
      `then: pulumi up --stack ${stack}\n${permissioning}`,
  );
}

/** The last step, for the network to let the node in: its permissioning request, how and where it is sent. */
function permissioningStep(network: Network, stack: string, name: string): string {
  return (
    `and get node ${name} permissioned: send its request (pulumi stack output nodes --stack ${stack} --json: ` +
    `${name}.permissioningRequest, its enode and address). ${permissioningHowAndWhere(network)}\n`
  );
}

/** The other nodes of the stack, each with the command that removes it, after a node was added or changed. */
function otherNodesNote(listed: StackFileNode[], name: string, stack: string): string {
  const others = listed.filter((n) => n.name !== name);
  if (others.length === 0) return '';
  const rows = others.map(
    (n) =>
      `  ${n.name} (a ${String(n.typenode)} on ${String(n.target)}): npm run init -- --stack ${stack} --remove ${n.name}`,
  );
  return `the stack also holds nodes this run did not add, which pulumi up deploys too; to remove one:\n${rows.join('\n')}\n`;
}

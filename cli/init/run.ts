/**
 * The body of `npm run init` (cli/init/spec.ts holds its options and help): the guided setup. Asks what the
 * reference installer asks (the node type, by name or index; the network is the stack's), then the target, the
 * node's name (an existing node is replaced only when the operator says so) and its fields, pre-filled with the
 * node's current values on a re-run. Every answer is checked with the program's own rules: each field with its rule,
 * then the whole stack as written with the loader `pulumi up` runs, and a wrong answer is asked again (on a terminal)
 * or refused naming its flag (exit 2, nothing written). It writes `Pulumi.<stack>.yaml` and a Kubernetes node's own
 * values file, keeping what is already there, makes or reuses the node key, and ends with the enode, the address and
 * the numbered list of what is still to do, each with its command (stillToDo.ts).
 */
import { networkOfStack, type Network } from '../../core/catalog/networks';
import { checkNetworkAnswer } from '../../core/init/questions';
import { checkStackName } from '../../core/settings/load';
import { CommandLine, UsageError } from '../cli';
import { Asker, InitValues } from './asker';
import { checkedTexts, writeSettingsFiles } from './checkedFiles';
import { printClosing } from './closing';
import { NodeFields } from './fieldAnswers';
import { askImageDigest } from './imageDigest';
import { chooseNode, stackFiles } from './nodeChoice';
import { askNodeKey, makeNodeKey } from './nodeKeyChoice';
import { removeNode } from './removeNode';
import type { InitOptions } from './spec';

/** Runs the guided setup. */
export async function run({ values }: CommandLine<InitOptions>): Promise<void> {
  if (!values.stack) throw new UsageError('--stack is required: testnet or mainnet (npm run init -- --help)');
  const stack = checkStackName(values.stack, '--stack');
  const network = networkOfStack(stack);
  // The stack decides the network: --network is only checked against it (2, the deprecated one, says so).
  if (values.network !== undefined) {
    const checked = checkNetworkAnswer(values.network, network);
    if (!checked.ok) throw new UsageError(`--network: ${checked.problem}`);
  }
  const flags = Object.fromEntries(
    Object.entries(values).filter(([, v]) => typeof v === 'string') as Array<[string, string]>,
  );
  const asker = new Asker(flags, Boolean(process.stdin.isTTY));
  try {
    await setup(values, stack, network, flags, asker);
  } finally {
    asker.close();
  }
}

/** The setup's steps, in order: nothing is written before every answer is checked. */
async function setup(
  values: InitValues,
  stack: string,
  network: Network,
  flags: Record<string, string>,
  asker: Asker,
): Promise<void> {
  const files = stackFiles(values, stack, network);
  if (values.remove !== undefined) {
    return removeNode(values.remove, files.listed, files.oldStack, files.stackFile, files.stackFileName);
  }
  if (asker.interactive) process.stdout.write(`Stack ${stack}: nodes on ${network.name} (the stack's network).\n`);
  const node = await chooseNode(asker, values, flags, files);
  const fields = new NodeFields(asker, values, flags, files, node);
  await fields.askAll();
  const imageDigest = await askImageDigest(asker, node.target, network, files.oldStack, files.stackFileName, flags);
  const texts = await checkedTexts({ values, files, node, fields, imageDigest }, asker, flags);
  const key = await askNodeKey(asker, values, files, node);
  // Everything is checked: write.
  writeSettingsFiles(files, node, texts);
  const made = makeNodeKey(key, files, node, fields.answers);
  printClosing(values, files, node, fields.answers, { choice: key, made });
}

/** `npm run init -- --remove NAME`: takes a node out of the stack file, keeping its values file and key file. */
import { UsageError } from '../cli';
import { suggestion } from '../../core/didYouMean';
import { StackFileNode, stackFileWithout, valuesFileOf, writeIfChanged } from './settingsFiles';

/** --remove NAME: the node's entry out of the stack file, so pulumi up no longer deploys it; its files are kept. */
export function removeNode(
  name: string,
  listed: StackFileNode[],
  oldStack: string | undefined,
  stackFile: string,
  stackFileName: string,
): void {
  const node = listed.find((n) => n.name === name);
  if (oldStack === undefined || node === undefined) {
    const names = listed.map((n) => n.name);
    throw new UsageError(
      `--remove: given ${JSON.stringify(name)}${suggestion(name, names)}; allowed: a node of ${stackFileName} (${names.join(', ') || 'it has none'})`,
    );
  }
  writeIfChanged(stackFile, stackFileWithout(oldStack, stackFileName, name));
  const values = valuesFileOf(node);
  process.stdout.write(
    `removed node ${name} (a ${String(node.typenode)} on ${String(node.target)}) from ${stackFile}: pulumi up no longer deploys it${values ? `; ${values} is kept` : ''}\n` +
      `(a node already deployed leaves the stack at the next pulumi up: docs/kubernetes.md and docs/ssh.md say what is kept)\n`,
  );
}

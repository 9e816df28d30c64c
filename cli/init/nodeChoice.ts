/**
 * The node `npm run init` writes: its type and target (a re-run's node gives the defaults), the flags of the other
 * path refused, its name in the stack (an existing node replaced only when the operator says so), where its key lives
 * and, on Kubernetes, its own values file.
 */
import * as path from 'path';
import { stackConfigFileName } from '../../core/catalog/defaults';
import type { Network } from '../../core/catalog/networks';
import type { NodeType } from '../../core/catalog/nodeTypes';
import {
  checkField,
  checkNodeType,
  KUBERNETES_QUESTIONS,
  NODE_NAME_QUESTION,
  nodeTypeMenu,
  questionMeaning,
  SSH_QUESTIONS,
} from '../../core/init/questions';
import { UsageError } from '../cli';
import { Asker, InitValues, orDefault, switchOn, yesNo } from './asker';
import { readText, StackFileNode, stackFileNodes, valuesFileForNode } from './settingsFiles';

/** The stack file init edits: its folder, its name and path, its text before and the nodes it lists. */
export interface StackFiles {
  stack: string;
  network: Network;
  dir: string;
  stackFileName: string;
  stackFile: string;
  oldStack?: string;
  listed: StackFileNode[];
}

/** The node init writes: its type, target and name, the node it replaces, where its key lives, its values file. */
export interface NodeChoice {
  typenode: NodeType;
  target: 'kubernetes' | 'ssh';
  name: string;
  existing?: StackFileNode;
  /** Its key is made and kept on its machine (key custody machine). */
  machineCustody: boolean;
  /** A Kubernetes node's values file, relative to the folder. */
  valuesFile?: string;
}

/** The stack file of `stack` in the folder `--dir` names (default: here), as it is now. */
export function stackFiles(values: InitValues, stack: string, network: Network): StackFiles {
  const dir = path.resolve(values.dir ?? '.');
  const stackFileName = stackConfigFileName(stack);
  const stackFile = path.join(dir, stackFileName);
  const oldStack = readText(stackFile);
  return { stack, network, dir, stackFileName, stackFile, oldStack, listed: stackFileNodes(oldStack, stackFileName) };
}

/** The field questions of a path. */
export const questionsOf = (target: 'kubernetes' | 'ssh') =>
  target === 'kubernetes' ? KUBERNETES_QUESTIONS : SSH_QUESTIONS;

/** The flags only an SSH node takes, besides its fields'. */
const SSH_ONLY_FLAGS = ['accept-any-host-key', 'host-key-fingerprint', 'read-image-digest'] as const;

/** Asks the node's type, target, name and key custody (each from its flag without a terminal). */
export async function chooseNode(
  asker: Asker,
  values: InitValues,
  flags: Record<string, string>,
  files: StackFiles,
): Promise<NodeChoice> {
  const { listed, stackFileName } = files;
  // A re-run names the node: its type and target are the defaults.
  const named = flags.name === undefined ? undefined : listed.find((n) => n.name === flags.name);
  const typenode = await asker.ask(
    'typenode',
    `Node type ${nodeTypeMenu()}${named?.typenode ? ` [${named.typenode}]` : ''}:`,
    orDefault(checkNodeType, named?.typenode),
    `a name or the index of one of ${nodeTypeMenu()}`,
    named?.typenode !== undefined,
  );
  const target = await asker.ask<'kubernetes' | 'ssh'>(
    'target',
    `Target (kubernetes or ssh)${named?.target ? ` [${named.target}]` : ''}:`,
    orDefault(
      (a) =>
        a.trim() === 'kubernetes' || a.trim() === 'ssh'
          ? { ok: true, value: a.trim() as 'kubernetes' | 'ssh' }
          : { ok: false, problem: `given ${JSON.stringify(a)}; allowed: kubernetes or ssh` },
      named?.target,
    ),
    'kubernetes or ssh',
    named?.target !== undefined,
  );
  refuseOtherPathFlags(values, flags, target);
  const { name, existing } = await askName(asker, typenode, listed, stackFileName, {
    replace: switchOn(values, 'replace'),
    fromFlag: flags.name !== undefined,
  });
  const machineCustody = await askKeyCustody(asker, target, existing?.keyCustody, flags);
  const valuesFile =
    target === 'kubernetes' ? valuesFileForNode(files.dir, files.stack, files.stackFile, name, existing) : undefined;
  return { typenode, target, name, existing, machineCustody, valuesFile };
}

/** A flag of the other path would be ignored: refused instead. */
function refuseOtherPathFlags(values: InitValues, flags: Record<string, string>, target: 'kubernetes' | 'ssh'): void {
  const own = new Set(questionsOf(target).map((q) => q.flag));
  const other = target === 'ssh' ? 'kubernetes' : 'ssh';
  for (const q of questionsOf(other)) {
    if (!own.has(q.flag) && flags[q.flag] !== undefined) {
      throw new UsageError(`--${q.flag} is for ${other} nodes, not ${target} ones`);
    }
  }
  if (target !== 'kubernetes') return;
  for (const flag of SSH_ONLY_FLAGS) {
    if (
      (values as Record<string, unknown>)[flag] !== undefined &&
      (values as Record<string, unknown>)[flag] !== false
    ) {
      throw new UsageError(`--${flag} is for ssh nodes, not kubernetes ones`);
    }
  }
}

/**
 * Whether an SSH node's key is made and kept on its machine (key custody machine) rather than the stack's: asked for
 * SSH nodes only (a Kubernetes node's key stays out of the state in a Secret of the operator's, set by hand).
 */
async function askKeyCustody(
  asker: Asker,
  target: 'kubernetes' | 'ssh',
  current: unknown,
  flags: Record<string, string | undefined>,
): Promise<boolean> {
  const given = flags['key-custody'];
  if (target === 'kubernetes') {
    if (given !== undefined && given !== 'stack') {
      throw new UsageError(
        `--key-custody: given ${JSON.stringify(given)}; allowed: stack for a kubernetes node (to keep its key out of the state, name a Secret of yours: keyCustody secret, docs/security.md#key-custody)`,
      );
    }
    return false;
  }
  if (given === 'machine' && flags.keygen !== undefined) {
    throw new UsageError(
      '--keygen: a machine-custody node gets its key on the machine, not from here; leave --keygen out',
    );
  }
  const byDefault = current === 'machine' ? 'machine' : 'stack';
  const custody = await asker.ask(
    'key-custody',
    `Where the node key lives: stack (the stack's state; the enode known now) or machine (made on the machine, never leaving it; the enode known after the first pulumi up) [${byDefault}]:`,
    orDefault(
      (a) =>
        a.trim() === 'stack' || a.trim() === 'machine'
          ? { ok: true, value: a.trim() }
          : { ok: false, problem: `given ${JSON.stringify(a)}; allowed: stack or machine` },
      byDefault,
    ),
    'stack or machine',
    true,
  );
  return custody === 'machine';
}

/**
 * The node's name in the stack: a new one, or an existing node's when the operator says to replace it (asked on a
 * terminal; without one only with `--replace`).
 */
async function askName(
  asker: Asker,
  typenode: NodeType,
  listed: StackFileNode[],
  stackFileName: string,
  how: { replace: boolean; fromFlag: boolean },
): Promise<{ name: string; existing?: StackFileNode }> {
  for (;;) {
    const name = (await asker.ask(
      NODE_NAME_QUESTION.flag,
      `${NODE_NAME_QUESTION.key} — ${questionMeaning(NODE_NAME_QUESTION)} [${typenode}]:`,
      (a) => checkField(NODE_NAME_QUESTION, a, { value: typenode, implicit: false }),
      'lowercase letters, digits and hyphens',
      true,
    )) as string;
    const existing = listed.find((n) => n.name === name);
    if (!existing || how.replace) return { name, existing };
    const what = `a ${existing.typenode} on ${existing.target === 'ssh' ? 'a machine over SSH' : 'Kubernetes'}`;
    if (!asker.interactive) {
      throw new UsageError(
        `--name: node ${name} is already in ${stackFileName} (${what}); --replace replaces it (its current settings are the defaults), or give another --name`,
      );
    }
    const yes = await asker.typed(
      `Node ${name} is already in ${stackFileName} (${what}): replace it? [y/N]`,
      yesNo(false),
    );
    if (yes) return { name, existing };
    if (how.fromFlag) {
      throw new UsageError(`--name: node ${name} is already in ${stackFileName}; give another --name, or --replace`);
    }
  }
}

/**
 * The settings files init writes, made and checked before anything is written: the stack file with the node's entry
 * (and the monitoring client's image digest when init read it) and a Kubernetes node's values file, run through the
 * loader `pulumi up` runs. A problem with one of this node's answers is that answer's (asked again on a terminal, or
 * its flag refused); the rest is on the still-to-do list. Then written, each only when its text changes.
 */
import * as path from 'path';
import { CONFIG_NAMESPACE, configKey, defaultValuesFile } from '../../core/catalog/defaults';
import { ETHSTATS } from '../../core/catalog/companions';
import type { NodeType } from '../../core/catalog/nodeTypes';
import { FieldQuestion, KUBERNETES_QUESTIONS, SSH_QUESTIONS } from '../../core/init/questions';
import { ETHSTATS_KEY } from '../../core/settings/companions';
import type { Problem } from '../../core/settings/problems';
import { readFileFromDisk } from '../../core/settings/settingsFiles';
import { UsageError } from '../cli';
import { Asker, InitValues, switchOn } from './asker';
import type { NodeFields } from './fieldAnswers';
import { ETHSTATS_DIGEST_SETTING } from './imageDigest';
import type { NodeChoice, StackFiles } from './nodeChoice';
import {
  NodeEdit,
  readText,
  stackFileNodes,
  stackFileText,
  stackFileWithSetting,
  valuesFileOf,
  valuesFilesInUse,
  valuesFileText,
  writeIfChanged,
} from './settingsFiles';
import { rawStackConfig, stackProblems } from './stillToDo';

/** The new texts of the stack file and of the node's values file (Kubernetes). */
export interface SettingsTexts {
  stack: string;
  values?: string;
}

/** What the texts are made of: the stack file, the node, its answers, and the image digest read (if any). */
interface Written {
  values: InitValues;
  files: StackFiles;
  node: NodeChoice;
  fields: NodeFields;
  imageDigest?: string;
}

/** The node's entry and the files' new texts, from the answers so far. */
function settingsTexts({ values, files, node, fields, imageDigest }: Written): SettingsTexts {
  const { stack, network, dir, stackFileName, oldStack } = files;
  const { name, typenode, target, existing, valuesFile } = node;
  const answers = fields.answers;
  const entry: NodeEdit = {
    name,
    typenode,
    target,
    ...(node.machineCustody ? { keyCustody: 'machine' as const } : {}),
    comment: nodeComment(typenode, target, valuesFile),
  };
  let valuesText: string | undefined;
  if (target === 'kubernetes' && valuesFile !== undefined) {
    const file = path.join(dir, valuesFile);
    const header = ` Values of node ${name}, a ${typenode} on Kubernetes (the deploy section of the reference Helm chart's values).\n Every field is described in docs/settings.md.`;
    valuesText = valuesFileText(readText(file), valuesFile, header, {
      network: network.helmName,
      typenode,
      ...answers,
    });
    // Named in the entry unless it is the node type's default file (which the shipped stacks leave implicit).
    const spelled = existing?.values !== undefined && path.normalize(existing.values) === valuesFile;
    entry.values = spelled ? existing?.values : valuesFile === defaultValuesFile(typenode) ? undefined : valuesFile;
  } else {
    entry.inventory = {
      ...answers,
      host_key: fields.hostKey.key,
      accept_any_host_key: fields.hostKey.acceptAny ? true : undefined,
    };
  }
  const header = ` Stack ${stack}: nodes on ${network.name} (network id ${network.networkId}). Every setting is described in docs/settings.md.`;
  const context = target === 'kubernetes' ? values.context : undefined;
  const stackText = stackFileText(oldStack, stackFileName, header, network.name, entry, context);
  return {
    stack: imageDigest
      ? stackFileWithSetting(stackText, stackFileName, ETHSTATS_DIGEST_SETTING, imageDigest)
      : stackText,
    values: valuesText,
  };
}

/**
 * The texts once the loader takes every answer of this node: a wrong answer is asked again on a terminal, and refused
 * naming its flag without one (or when a flag gave it).
 */
export async function checkedTexts(
  written: Written,
  asker: Asker,
  flags: Record<string, string>,
): Promise<SettingsTexts> {
  const { files, node, fields, values } = written;
  const { stack, network, dir, stackFileName } = files;
  const { name, target, valuesFile } = node;
  const answers = fields.answers;
  let texts = settingsTexts(written);
  const networkName = () => (target === 'kubernetes' ? answers.nodeName : answers.node_name);
  const nodeOf = (index: number) => ({ name, index, target, stackFileName, valuesFile, onNetwork: networkName() });
  // The ethstats server's refusal of the node's name is said of the name given, as a field's rule says it.
  const asAnswered = (problem: Problem): Problem =>
    ethstatsNameProblem(problem, name, networkName())
      ? {
          ...problem,
          given: `given ${JSON.stringify(networkName())}, a name the network's ethstats server does not register`,
        }
      : problem;
  for (;;) {
    const index = stackFileNodes(texts.stack, stackFileName).find((n) => n.name === name)?.index ?? -1;
    const valuesPath = valuesFile === undefined ? undefined : path.resolve(dir, valuesFile);
    const raw = rawStackConfig(texts.stack, stackFileName, dir);
    const current = texts;
    const problems = stackProblems(stack, raw, (file) =>
      file === valuesPath ? current.values : readFileFromDisk(file),
    );
    const wrong = problems
      .map((problem) => ({ problem: asAnswered(problem), question: answerOf(problem, { ...nodeOf(index) }) }))
      .filter((w): w is { problem: Problem; question: FieldQuestion } => w.question !== undefined);
    if (wrong.length === 0) return texts;
    for (const { problem, question } of wrong) {
      if (question.key === 'os' && fields.systemFromMachine) {
        throw new UsageError(
          `the machine ${String(answers.host)} runs ${String(answers.os)} (its /etc/os-release): ${problem.given}; allowed: ${problem.allowed}`,
        );
      }
      const anyKey = question.key === 'host_key' && switchOn(values, 'accept-any-host-key');
      if (anyKey) {
        throw new UsageError(
          `--accept-any-host-key: given, on ${network.name}, which refuses it (test networks only); allowed: --host-key with ${problem.allowed}`,
        );
      }
      const fromFlag = flags[question.flag] !== undefined;
      // A value the operator did not give is its default (node_ip: the host), said so, or the flag looks ignored.
      const named = fromFlag ? `--${question.flag}` : `--${question.flag} (not given: its default)`;
      if (!asker.interactive || fromFlag)
        throw new UsageError(`${named}: ${problem.given}; allowed: ${problem.allowed}`);
    }
    const asked = new Set<FieldQuestion>();
    for (const { problem, question } of wrong) {
      process.stdout.write(`  ${problem.key}: ${problem.given}; allowed: ${problem.allowed}\n`);
      if (!asked.has(question)) await fields.ask(question);
      asked.add(question);
    }
    texts = settingsTexts(written);
  }
}

/** Writes the checked texts (each only when it changes) and says what a replaced node no longer uses. */
export function writeSettingsFiles(files: StackFiles, node: NodeChoice, texts: SettingsTexts): void {
  const { dir, stackFile } = files;
  const { valuesFile, existing } = node;
  report(stackFile, writeIfChanged(stackFile, texts.stack));
  if (valuesFile !== undefined && texts.values !== undefined) {
    report(path.join(dir, valuesFile), writeIfChanged(path.join(dir, valuesFile), texts.values));
  }
  const before = existing && valuesFileOf(existing);
  if (before !== undefined && before !== valuesFile && !valuesFilesInUse(dir).has(before)) {
    process.stdout.write(
      `${before} is no longer read by any node of this folder's stacks (kept: delete it when done)\n`,
    );
  }
}

/** A path as the operator reads it: relative to the folder they ran the command in when inside it. */
const shown = (file: string) => {
  const relative = path.relative(process.cwd(), file);
  return relative === '' || relative.startsWith('..') ? file : relative;
};

/** The comment above a node's entry: what it is and where its settings are. */
function nodeComment(typenode: NodeType, target: 'kubernetes' | 'ssh', valuesFile: string | undefined): string {
  return target === 'kubernetes'
    ? ` A ${typenode} on your Kubernetes cluster; its settings are in ${valuesFile} (deploy section).`
    : ` A ${typenode} on a remote machine over SSH; its settings are in its inventory.`;
}

/** The node name question's flag, on both paths (`nodeName` of a values file, `node_name` of an inventory). */
const NODE_NAME_FLAG = 'node-name';

/**
 * True when a loader problem is the network's ethstats server refusing this node's name on the network (`a.b`): the
 * settings refuse it beside the monitoring client, so the node name question refuses it too.
 */
function ethstatsNameProblem(problem: Problem, node: string, onNetwork: unknown): boolean {
  return (
    problem.key === `${configKey('companions')}.${ETHSTATS_KEY}.enabled` &&
    problem.given.includes(`${node} (${String(onNetwork)})`) &&
    !ETHSTATS.nodeNamePattern.test(String(onNetwork))
  );
}

/**
 * The question whose answer a loader problem is about, when it is one of this node's fields: on the SSH path its
 * inventory (`lacchain:nodes[i].inventory.node_ip`, or `node <name> inventory.node_ip` across nodes), on the
 * Kubernetes path its values file's `deploy` section. A host key still to give is not an answer's problem.
 */
function answerOf(
  problem: Problem,
  node: {
    name: string;
    index: number;
    target: 'kubernetes' | 'ssh';
    stackFileName: string;
    valuesFile?: string;
    /** Its name on the network, as answered. */
    onNetwork: unknown;
  },
): FieldQuestion | undefined {
  if (ethstatsNameProblem(problem, node.name, node.onNetwork)) {
    return (node.target === 'ssh' ? SSH_QUESTIONS : KUBERNETES_QUESTIONS).find((q) => q.flag === NODE_NAME_FLAG);
  }
  if (node.target === 'ssh' && problem.file === node.stackFileName) {
    const prefix = [`${CONFIG_NAMESPACE}:nodes[${node.index}].inventory.`, `node ${node.name} inventory.`].find((p) =>
      problem.key.startsWith(p),
    );
    if (prefix === undefined) return undefined;
    const field = problem.key.slice(prefix.length);
    if (field === 'host_key' && problem.given.startsWith('missing') && !problem.given.includes('accept_any')) {
      return undefined;
    }
    const key = field === 'accept_any_host_key' ? 'host_key' : field;
    return SSH_QUESTIONS.find((q) => q.key === key);
  }
  if (node.target === 'kubernetes' && node.valuesFile && path.normalize(problem.file) === node.valuesFile) {
    return KUBERNETES_QUESTIONS.find(
      (q) => problem.key === `deploy.${q.key}` || problem.key.startsWith(`deploy.${q.key}.`),
    );
  }
  return undefined;
}

/** Says whether a file was written. */
function report(file: string, written: boolean): void {
  process.stdout.write(written ? `wrote ${shown(file)}\n` : `${shown(file)}: no change\n`);
}

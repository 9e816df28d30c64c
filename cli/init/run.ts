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
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as readline from 'readline';
import {
  CONFIG_NAMESPACE,
  configKey,
  DEFAULT_KEY_FOLDER,
  DEFAULT_SSH_PORT,
  DEFAULT_SSH_USER,
  defaultValuesFile,
  stackConfigFileName,
} from '../../core/catalog/defaults';
import { Network, networkOfStack } from '../../core/catalog/networks';
import type { NodeType } from '../../core/catalog/nodeTypes';
import { PORTS } from '../../core/catalog/ports';
import { deriveIdentity, generatePrivateKey } from '../../core/identity/nodeKey';
import {
  Checked,
  checkField,
  checkNetworkAnswer,
  checkNodeType,
  currentAnswers,
  fieldDefault,
  isPlaceholder,
  FieldQuestion,
  isOptionalQuestion,
  KUBERNETES_QUESTIONS,
  NODE_NAME_QUESTION,
  nodeTypeMenu,
  parseWorkers,
  questionMeaning,
  SSH_QUESTIONS,
  Worker,
} from '../../core/init/questions';
import { checkStackName } from '../../core/settings/load';
import { ETHSTATS_KEY } from '../../core/settings/companions';
import { ETHSTATS } from '../../core/catalog/companions';
import { permissioningHowAndWhere } from '../../core/permissioning';
import type { Problem } from '../../core/settings/problems';
import { readFileFromDisk } from '../../core/settings/settingsFiles';
import { shellQuote } from '../../core/remote/shell';
import { CommandLine, UsageError } from '../cli';
import { suggestion } from '../../core/didYouMean';
import { expandHome, gitWorkTreeOf, readKeyFile, writeNewKeyFile } from '../keyFile';
import type { InitOptions } from './spec';
import { readMachineSystem } from './machineSystem';
import {
  deploySection,
  NodeEdit,
  readText,
  StackFileNode,
  stackFileNodes,
  stackFileText,
  stackFileWithout,
  valuesFileForNode,
  valuesFileOf,
  valuesFilesInUse,
  stackFileWithSetting,
  valuesFileText,
  writeIfChanged,
} from './settingsFiles';
import { containerToolAtHand, ETHSTATS_DIGEST_SETTING, imageWithoutDigest, readImageDigest } from './imageDigest';
import { agentLoginNote, formatToDo, rawStackConfig, stackProblems, stillToDo, ToDo } from './stillToDo';
import {
  FINGERPRINT_ALLOWED,
  FINGERPRINT_PATTERN,
  hostKeyFingerprint,
  keyscanCommand,
  scanHostKey,
} from './hostKeyScan';

/** Asks questions on the terminal, or takes the answers from flags when there is none. */
class Asker {
  private lines: AsyncIterableIterator<string> | undefined;
  private rl: readline.Interface | undefined;

  constructor(
    private readonly flags: Record<string, string | undefined>,
    readonly interactive: boolean,
  ) {
    if (interactive) {
      this.rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true });
      this.lines = this.rl[Symbol.asyncIterator]();
    }
  }

  /**
   * Asks until the answer passes `check`; a flag answers without asking (and must pass). Without a terminal, a
   * question with a default (`hasDefault`: an empty answer passes) takes it.
   */
  async ask<T>(
    flag: string,
    prompt: string,
    check: (answer: string) => Checked<T>,
    allowed: string,
    hasDefault = false,
  ): Promise<T> {
    const given = this.flags[flag];
    if (given !== undefined) {
      const checked = check(given);
      if (checked.ok) return checked.value;
      throw new UsageError(`--${flag}: ${checked.problem}`);
    }
    if (!this.interactive) {
      const byDefault = hasDefault ? check('') : undefined;
      if (byDefault?.ok) return byDefault.value;
      throw new UsageError(`--${flag}: not given, and without a terminal it cannot be asked; allowed: ${allowed}`);
    }
    return this.typed(prompt, check);
  }

  /** Asks on the terminal until the answer passes `check` (a question no flag answers). */
  async typed<T>(prompt: string, check: (answer: string) => Checked<T>): Promise<T> {
    if (!this.lines) throw new UsageError(`no terminal to ask: ${prompt}`);
    for (;;) {
      process.stdout.write(`${prompt} `);
      const next = await this.lines.next();
      if (next.done) throw new UsageError(`no answer to "${prompt}" (input closed)`);
      const checked = check(next.value);
      if (checked.ok) return checked.value;
      process.stdout.write(`  ${checked.problem}\n`);
    }
  }

  close(): void {
    this.rl?.close();
  }
}

const yesNo =
  (byDefault: boolean) =>
  (answer: string): Checked<boolean> => {
    const a = answer.trim().toLowerCase();
    if (a === '') return { ok: true, value: byDefault };
    if (['y', 'yes'].includes(a)) return { ok: true, value: true };
    if (['n', 'no'].includes(a)) return { ok: true, value: false };
    return { ok: false, problem: `given ${JSON.stringify(answer)}; allowed: yes or no` };
  };

/** A check that reads an empty answer as `fallback` (when there is one). */
const orDefault =
  <T>(check: (answer: string) => Checked<T>, fallback: string | undefined) =>
  (answer: string) =>
    check(answer.trim() === '' && fallback !== undefined ? fallback : answer);

/** What a required question takes, as its rule in the schema says it (what a missing answer is refused with). */
function allowedAnswers(question: FieldQuestion): string {
  const checked = question.schema.safeParse(undefined);
  return checked.success ? 'any value' : checked.error.issues[0].message;
}

/** A path as the operator reads it: relative to the folder they ran the command in when inside it. */
const shown = (file: string) => {
  const relative = path.relative(process.cwd(), file);
  return relative === '' || relative.startsWith('..') ? file : relative;
};

/** The field questions of a path. */
const questionsOf = (target: 'kubernetes' | 'ssh') => (target === 'kubernetes' ? KUBERNETES_QUESTIONS : SSH_QUESTIONS);

/** Whether a switch (a boolean option: --replace, --accept-any-host-key) was given. */
const switchOn = (values: CommandLine<InitOptions>['values'], name: string) =>
  (values as Record<string, unknown>)[name] === true;

/** The host key question's answer: a key, any key (a test network's opt-in), or later (on the still-to-do list). */
type HostKeyAnswer = { key?: string; acceptAny: boolean };

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

async function setup(
  values: CommandLine<InitOptions>['values'],
  stack: string,
  network: Network,
  flags: Record<string, string>,
  asker: Asker,
): Promise<void> {
  const dir = path.resolve(values.dir ?? '.');
  const stackFileName = stackConfigFileName(stack);
  const stackFile = path.join(dir, stackFileName);
  const oldStack = readText(stackFile);
  const listed = stackFileNodes(oldStack, stackFileName);
  if (values.remove !== undefined) return removeNode(values.remove, listed, oldStack, stackFile, stackFileName);
  if (asker.interactive) process.stdout.write(`Stack ${stack}: nodes on ${network.name} (the stack's network).\n`);

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
  // A field flag of the other path would be ignored: refused instead.
  const own = new Set(questionsOf(target).map((q) => q.flag));
  const other = target === 'ssh' ? 'kubernetes' : 'ssh';
  for (const q of questionsOf(other)) {
    if (!own.has(q.flag) && flags[q.flag] !== undefined) {
      throw new UsageError(`--${q.flag} is for ${other} nodes, not ${target} ones`);
    }
  }
  if (target === 'kubernetes' && switchOn(values, 'accept-any-host-key')) {
    throw new UsageError('--accept-any-host-key is for ssh nodes, not kubernetes ones');
  }
  if (target === 'kubernetes' && values['host-key-fingerprint'] !== undefined) {
    throw new UsageError('--host-key-fingerprint is for ssh nodes, not kubernetes ones');
  }
  if (target === 'kubernetes' && values['read-image-digest'] !== undefined) {
    throw new UsageError('--read-image-digest is for ssh nodes, not kubernetes ones');
  }
  const { name, existing } = await askName(asker, typenode, listed, stackFileName, {
    replace: switchOn(values, 'replace'),
    fromFlag: flags.name !== undefined,
  });

  const machineCustody = await askKeyCustody(asker, target, existing?.keyCustody, flags);

  // A replaced node's current values are the defaults, also when it moves to the other path (the fields both have).
  const existingDeploy = existing?.target === 'kubernetes' ? existingValues(dir, existing) : undefined;
  const current = existing
    ? currentAnswers(target, { target: existing.target ?? '', deploy: existingDeploy, inventory: existing.inventory })
    : {};
  const valuesFile = target === 'kubernetes' ? valuesFileForNode(dir, stack, stackFile, name, existing) : undefined;
  const answers: Record<string, unknown> = {};
  const known: Record<string, unknown> = {};

  const askField = async (question: FieldQuestion) => {
    // At the terminal, a placeholder of the files (the stock example's) is no default: the suggestion without it is.
    const fromFile = current[question.key];
    const placeholder = asker.interactive && fromFile != null && isPlaceholder(question.key, String(fromFile));
    const fallback = fieldDefault(question, { ...answers, ...known }, network, placeholder ? undefined : fromFile);
    const optional = isOptionalQuestion(question);
    const hint = fallback !== undefined ? ` [${fallback.value}]` : optional ? ' [none]' : '';
    answers[question.key] = await asker.ask(
      question.flag,
      `${question.key} — ${questionMeaning(question)}${hint}:`,
      (a) => checkField(question, a, fallback),
      optional ? 'optional' : `${allowedAnswers(question)} (${question.key}: ${questionMeaning(question)})`,
      fallback !== undefined || optional,
    );
  };

  let hostKey: HostKeyAnswer = { acceptAny: false };
  const askHostKey = async () => {
    hostKey = await askHostKeyQuestion(asker, values, network, answers, existing);
  };

  const workers = target === 'kubernetes' ? listWorkers(values.context) : [];
  const askWorker = async (question: FieldQuestion) => {
    const listedWorker = workers.find((w) => w.name === current.workerName);
    const fallback = listedWorker?.name;
    const worker = await asker.ask<Worker>(
      question.flag,
      `workerName — ${questionMeaning(question)} (index or name)${fallback ? ` [${fallback}]` : ''}:`,
      orDefault((a) => pickWorker(a, workers), fallback),
      workers.map((w) => w.name).join(', '),
      fallback !== undefined,
    );
    answers.workerName = worker.name;
    known.workerExternalIP = worker.externalIP;
  };

  // The machine's system, read over SSH when it is not given and the host key is pinned (never trusting another key).
  let systemFromMachine = false;
  const readSystem = async (): Promise<boolean> => {
    if (flags.os !== undefined || hostKey.key === undefined) return false;
    const machine = {
      host: String(answers.host),
      port: Number(answers.port ?? DEFAULT_SSH_PORT),
      user: String(answers.user ?? DEFAULT_SSH_USER),
      hostKey: hostKey.key,
      keyFile: values['ssh-key'] === undefined ? undefined : path.resolve(expandHome(values['ssh-key'])),
    };
    const read = await readMachineSystem(machine);
    if ('reason' in read) {
      process.stdout.write(
        `os: not read from ${machine.host} (${read.reason}): the preflight step checks the system at pulumi up (--os gives it now)\n`,
      );
      return false;
    }
    answers.os = read.system;
    systemFromMachine = true;
    process.stdout.write(`os: ${read.system} (read from ${machine.host}'s /etc/os-release over SSH)\n`);
    return true;
  };

  /** Asks one question of the node's fields (again, after the loader refused its answer). */
  const ask = async (question: FieldQuestion) => {
    if (question.key === 'host_key') return askHostKey();
    if (question.key === 'os' && !systemFromMachine && (await readSystem())) return;
    if (question.key === 'workerName' && workers.length > 0 && flags[question.flag] === undefined) {
      return askWorker(question);
    }
    return askField(question);
  };

  if (workers.length > 0) {
    process.stdout.write(
      `Workers of the cluster:\n${workers.map((w, i) => `  [${i}] ${w.name} (${w.externalIP ?? 'no external IP'})`).join('\n')}\n`,
    );
  }
  for (const question of questionsOf(target)) await ask(question);
  const imageDigest = await askImageDigest(asker, target, network, oldStack, stackFileName, flags);

  /** The node's entry and the files' new texts, from the answers so far. */
  const build = () => {
    const node: NodeEdit = {
      name,
      typenode,
      target,
      ...(machineCustody ? { keyCustody: 'machine' as const } : {}),
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
      node.values = spelled ? existing?.values : valuesFile === defaultValuesFile(typenode) ? undefined : valuesFile;
    } else {
      node.inventory = {
        ...answers,
        host_key: hostKey.key,
        accept_any_host_key: hostKey.acceptAny ? true : undefined,
      };
    }
    const header = ` Stack ${stack}: nodes on ${network.name} (network id ${network.networkId}). Every setting is described in docs/settings.md.`;
    const context = target === 'kubernetes' ? values.context : undefined;
    const stackText = stackFileText(oldStack, stackFileName, header, network.name, node, context);
    return {
      stack: imageDigest
        ? stackFileWithSetting(stackText, stackFileName, ETHSTATS_DIGEST_SETTING, imageDigest)
        : stackText,
      values: valuesText,
    };
  };

  // The loader, as pulumi up runs it, on the files as they would be written: a problem with one of this node's
  // answers is that answer's (asked again, or its flag refused); the rest is on the still-to-do list.
  let texts = build();
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
    const problems = stackProblems(stack, raw, (file) => (file === valuesPath ? texts.values : readFileFromDisk(file)));
    const wrong = problems
      .map((problem) => ({ problem: asAnswered(problem), question: answerOf(problem, { ...nodeOf(index) }) }))
      .filter((w): w is { problem: Problem; question: FieldQuestion } => w.question !== undefined);
    if (wrong.length === 0) break;
    for (const { problem, question } of wrong) {
      if (question.key === 'os' && systemFromMachine) {
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
      if (!asked.has(question)) await ask(question);
      asked.add(question);
    }
    texts = build();
  }

  // The key: reused when this node's key file exists (a re-run), else made now if the operator wants.
  const keyDir = path.resolve(expandHome(values['key-dir'] ?? DEFAULT_KEY_FOLDER));
  const keyFile = path.join(keyDir, `${stack}-${name}.key`);
  const keyExists = fs.existsSync(keyFile);
  // A machine that holds its own key gets none from here: the node-key step makes it there.
  const useKey = machineCustody
    ? false
    : await asker.ask(
        'keygen',
        keyExists ? `The node key ${keyFile} exists: use it? [Y/n]` : 'Create the node key now? [Y/n]',
        yesNo(true),
        'yes or no',
      );
  const existingKey = useKey && keyExists ? readKeyFile(keyFile) : undefined;
  if (useKey && !keyExists && gitWorkTreeOf(keyFile)) {
    throw new UsageError(
      `--key-dir: ${keyFile} would be inside the git work tree ${gitWorkTreeOf(keyFile)}: keep node keys outside any repository, e.g. ${DEFAULT_KEY_FOLDER}`,
    );
  }
  const store = useKey
    ? await asker.ask(
        'store-secret',
        'Store it as a secret of the stack now (needs pulumi)? [Y/n]',
        yesNo(true),
        'yes or no',
      )
    : false;

  // Everything is checked: write.
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

  let identity: { enode: string; address: string } | undefined;
  const keyPath = `${CONFIG_NAMESPACE}:nodeKeys.${name}`;
  const secretCommand = `pulumi config set --stack ${stack} --secret --path '${keyPath}' < ${shellQuote(keyFile)}`;
  let keyToDo: ToDo | undefined;
  if (useKey) {
    let privateKey = existingKey;
    if (privateKey === undefined) {
      privateKey = generatePrivateKey();
      writeNewKeyFile(keyFile, privateKey);
      process.stdout.write(`wrote ${keyFile} (mode 0600): keep a copy somewhere safe\n`);
    } else {
      process.stdout.write(`using the node key ${keyFile}\n`);
    }
    const p2pHost = (target === 'kubernetes' ? answers['p2p.host'] : answers.node_ip) as string;
    const p2pPort = target === 'kubernetes' ? Number(answers['p2p.port'] ?? PORTS.p2p) : PORTS.p2p;
    identity = deriveIdentity(privateKey, p2pHost, p2pPort);
    // The key goes to pulumi on standard input: never on a command line, and no shell runs with the path.
    const stored =
      store &&
      spawnSync('pulumi', ['config', 'set', '--stack', stack, '--secret', '--path', keyPath], {
        cwd: dir,
        input: privateKey,
        stdio: ['pipe', 'inherit', 'inherit'],
      }).status === 0;
    if (store && !stored) process.stdout.write('could not run pulumi: the key is on the list below\n');
    if (!stored) {
      keyToDo = {
        what: `${keyPath}: the node key, as a secret of the stack (else pulumi up makes another key, with another enode):`,
        lines: [{ command: secretCommand }],
      };
    }
  }

  const elsewhere = dir !== process.cwd();
  const rerun = [
    `npm run init -- --stack ${stack}`,
    ...(values.dir !== undefined ? [`--dir ${shellQuote(values.dir)}`] : []),
    ...(values['key-dir'] !== undefined ? [`--key-dir ${shellQuote(values['key-dir'])}`] : []),
    `--name ${name} --replace ${machineCustody ? '--key-custody machine' : `--keygen ${useKey ? 'yes --store-secret no' : 'no'}`} --host-key`,
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
      'the node key lives in the stack state: back up ~/.pulumi-lacchain and PULUMI_CONFIG_PASSPHRASE together (docs/operations.md#losing-the-state-is-losing-the-key)\n',
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

/** --remove NAME: the node's entry out of the stack file, so pulumi up no longer deploys it; its files are kept. */
function removeNode(
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

/** The host key: required, with the command that reads it; "later" puts it on the list, "any" opts out (test networks). */
async function askHostKeyQuestion(
  asker: Asker,
  values: CommandLine<InitOptions>['values'],
  network: Network,
  answers: Record<string, unknown>,
  existing: StackFileNode | undefined,
): Promise<HostKeyAnswer> {
  const question = SSH_QUESTIONS.find((q) => q.key === 'host_key') as FieldQuestion;
  const acceptAnyBefore = existing?.target === 'ssh' && existing.inventory?.accept_any_host_key === true;
  const currentKey = existing?.target === 'ssh' ? (existing.inventory?.host_key as string | undefined) : undefined;
  if (switchOn(values, 'accept-any-host-key')) {
    if (values['host-key'] !== undefined) {
      throw new UsageError(
        '--accept-any-host-key: not with --host-key: give the pinned key (recommended) or this, not both',
      );
    }
    return { acceptAny: true };
  }
  const host = String(answers.host);
  const sshPort = (answers.port as number | undefined) ?? DEFAULT_SSH_PORT;
  const known = values['host-key-fingerprint'];
  if (known !== undefined)
    return { key: scannedKeyMatching(known, host, sshPort, values['host-key']), acceptAny: false };
  if (values['host-key'] === undefined && asker.interactive && currentKey === undefined) {
    // Read by init itself, at this step of the operator's own setup: shown by its fingerprint, written once confirmed.
    const scanned = scanHostKey(host, sshPort);
    const confirmed =
      scanned !== undefined &&
      (await asker.typed(
        `host_key — ${host} answers (${keyscanCommand(host, sshPort)}) with the key ${hostKeyFingerprint(scanned)}: is it your machine's, as its console shows (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub)? [y/N]`,
        yesNo(false),
      ));
    if (confirmed) return { key: scanned, acceptAny: false };
  }
  const fallback = currentKey !== undefined ? { value: currentKey, implicit: false } : undefined;
  if (values['host-key'] !== undefined || !asker.interactive) {
    if (values['host-key'] === undefined && fallback === undefined) return { acceptAny: acceptAnyBefore };
    const key = await asker.ask(question.flag, '', (a) => checkField(question, a, fallback), '', true);
    return { key: key as string, acceptAny: false };
  }
  const port = answers.port === undefined ? '' : ` -p ${answers.port}`;
  const meaning = questionMeaning(question)
    .replace('ssh-keyscan', `ssh-keyscan${port}`)
    .replace('<host>', String(answers.host));
  const choices = `"later" to add it after init${network.allowsUnpinnedHostKey ? ', "any" to connect to whatever answers (test networks only)' : ''}`;
  const shownDefault = fallback ? ` [${fallback.value}]` : acceptAnyBefore ? ' [any]' : '';
  return asker.typed<HostKeyAnswer>(`${question.key} — ${meaning} (required; ${choices})${shownDefault}:`, (answer) => {
    const a = answer.trim() === '' ? (fallback?.value ?? (acceptAnyBefore ? 'any' : '')) : answer.trim();
    if (a === 'later') return { ok: true, value: { acceptAny: false } };
    if (a === 'any') return { ok: true, value: { acceptAny: true } };
    if (a === '') {
      return {
        ok: false,
        problem: `an answer is required: the key ssh-keyscan${port} -t ed25519 ${String(answers.host)} prints, or "later"`,
      };
    }
    const checked = checkField(question, a);
    return checked.ok ? { ok: true, value: { key: checked.value as string, acceptAny: false } } : checked;
  });
}

/**
 * The host key `host` answers with, when its fingerprint is the operator's `known` one (--host-key-fingerprint);
 * refused when it differs, when the machine gives none, or beside --host-key.
 */
function scannedKeyMatching(known: string, host: string, port: number, hostKey: string | undefined): string {
  const flag = '--host-key-fingerprint';
  if (hostKey !== undefined) {
    throw new UsageError(`${flag}: not with --host-key: give the key, or its fingerprint for init to read the key`);
  }
  if (!FINGERPRINT_PATTERN.test(known)) {
    throw new UsageError(`${flag}: given a value that is not a fingerprint; allowed: ${FINGERPRINT_ALLOWED}`);
  }
  const key = scanHostKey(host, port);
  if (key === undefined) {
    throw new UsageError(
      `${flag}: ${keyscanCommand(host, port)} read no host key; allowed: a machine that answers SSH at ${host}:${port}, or --host-key`,
    );
  }
  const actual = hostKeyFingerprint(key);
  if (actual !== known) {
    throw new UsageError(
      `${flag}: given ${known}, but ${host} answers with ${actual}: refused, nothing written (not the machine you know, or its key changed); allowed: the fingerprint of the key ${host} answers with, checked on a channel you trust`,
    );
  }
  return key;
}

/**
 * The monitoring client's image digest, read here with podman or docker when the operator wants it (asked on a
 * terminal when one runs here; --read-image-digest yes without one), for an SSH node of a stack that runs the client
 * without a digest; undefined when not read (mainnet's still-to-do list then asks for it).
 */
async function askImageDigest(
  asker: Asker,
  target: 'kubernetes' | 'ssh',
  network: Network,
  stackText: string | undefined,
  stackFileName: string,
  flags: Record<string, string | undefined>,
): Promise<string | undefined> {
  const flag = 'read-image-digest';
  const given = flags[flag];
  const checked = given === undefined ? undefined : yesNo(false)(given);
  if (checked && !checked.ok) throw new UsageError(`--${flag}: ${checked.problem}`);
  const fromFlag = checked?.ok ? checked.value : undefined;
  if (target === 'kubernetes') return undefined;
  const image = imageWithoutDigest(stackText, stackFileName);
  if (image === undefined || fromFlag === false || (fromFlag === undefined && !asker.interactive)) return undefined;
  const tool = containerToolAtHand();
  if (tool === undefined) {
    if (fromFlag === true) {
      throw new UsageError(
        `--${flag}: given yes, but neither podman nor docker runs here; allowed: no (the digest is then on the list), or a machine where one runs`,
      );
    }
    return undefined;
  }
  const why = network.allowsUnpinnedKeyImages
    ? `${network.name} runs the tag without it, flagged`
    : `${network.name} requires it`;
  const wanted =
    fromFlag ??
    (await asker.typed(
      `The monitoring client's image ${image} has no digest pinned (${why}): read it with ${tool} now (${tool} image inspect, pulled first when not here)? [Y/n]`,
      yesNo(true),
    ));
  if (!wanted) return undefined;
  const read = readImageDigest(tool, image, (line) => process.stdout.write(`${line}\n`));
  if ('reason' in read) {
    process.stdout.write(`imageDigest: not read (${read.reason})\n`);
    return undefined;
  }
  process.stdout.write(`imageDigest: ${read.digest} (${image}, read with ${tool})\n`);
  return read.digest;
}

/** The values a replaced Kubernetes node reads now (its values file's deploy section). */
function existingValues(dir: string, existing: StackFileNode): Record<string, unknown> | undefined {
  const file = valuesFileOf(existing);
  return file === undefined ? undefined : deploySection(path.join(dir, file));
}

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

function report(file: string, written: boolean): void {
  process.stdout.write(written ? `wrote ${shown(file)}\n` : `${shown(file)}: no change\n`);
}

/** The cluster's workers with their external IPs, or none when no cluster answers. */
function listWorkers(context: string | undefined): Worker[] {
  const args = [...(context ? ['--context', context] : []), 'get', 'nodes', '-o', 'wide'];
  const result = spawnSync('kubectl', args, { encoding: 'utf8', timeout: 20_000 });
  if (result.error || result.status !== 0) {
    const why = (result.error ? result.error.message : (result.stderr.trim().split('\n').pop() ?? '')).slice(0, 160);
    process.stdout.write(`No cluster reachable (${why}): enter the values by hand.\n`);
    return [];
  }
  return parseWorkers(result.stdout);
}

function pickWorker(answer: string, workers: Worker[]): Checked<Worker> {
  const a = answer.trim();
  const byIndex = /^\d+$/.test(a) ? workers[Number(a)] : undefined;
  const worker = byIndex ?? workers.find((w) => w.name === a);
  return worker
    ? { ok: true, value: worker }
    : {
        ok: false,
        problem: `given ${JSON.stringify(answer)}; allowed: an index or one of ${workers.map((w) => w.name).join(', ')}`,
      };
}

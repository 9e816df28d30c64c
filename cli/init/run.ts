/**
 * The body of `npm run init` (cli/init/spec.ts holds its options and help): the guided setup. Asks what the
 * reference installer asks (node type, network by index), then the target and its fields, checks every answer with
 * the program's own rules and asks again when one is wrong, and writes `Pulumi.<stack>.yaml` and (Kubernetes)
 * `values/<typenode>.yml` keeping what is already there. Every question has a flag; without a terminal, every
 * required answer must come from the flags.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import * as readline from 'readline';
import { NETWORKS, STACK_NETWORKS } from '../../core/catalog/networks';
import { NODE_TYPE_FACTS } from '../../core/catalog/nodeTypes';
import {
  CONFIG_NAMESPACE,
  DEFAULT_KEY_FOLDER,
  defaultValuesFile,
  stackConfigFileName,
} from '../../core/catalog/defaults';
import { deriveIdentity, generatePrivateKey } from '../../core/identity/nodeKey';
import {
  Checked,
  checkField,
  checkNetworkAnswer,
  checkNodeType,
  fieldDefault,
  FieldQuestion,
  isOptionalQuestion,
  KUBERNETES_QUESTIONS,
  networkMenu,
  NODE_NAME_QUESTION,
  nodeTypeMenu,
  parseWorkers,
  questionMeaning,
  SSH_QUESTIONS,
  Worker,
} from '../../core/init/questions';
import { checkStackName, loadStack } from '../../core/settings/load';
import { SettingsError } from '../../core/settings/problems';
import { readFileFromDisk, readStackConfigFile } from '../../core/settings/settingsFiles';
import { CommandLine, UsageError } from '../cli';
import type { InitOptions } from './spec';
import { expandHome, writeNewKeyFile } from '../keyFile';
import { shellQuote } from '../../core/remote/shell';
import { writeStackConfig, writeValuesFile } from './settingsFiles';

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
    if (!this.interactive || !this.rl || !this.lines) {
      const byDefault = hasDefault ? check('') : undefined;
      if (byDefault?.ok) return byDefault.value;
      throw new UsageError(`--${flag} is required without a terminal; allowed: ${allowed}`);
    }
    for (;;) {
      process.stdout.write(`${prompt} `);
      const next = await this.lines.next();
      if (next.done) throw new UsageError(`no answer for --${flag} (input closed)`);
      const checked = check(next.value);
      if (checked.ok) return checked.value;
      process.stdout.write(`  ${checked.problem}\n`);
    }
  }

  close(): void {
    this.rl?.close();
  }
}

const yesNo = (answer: string): Checked<boolean> => {
  const a = answer.trim().toLowerCase();
  if (['', 'y', 'yes'].includes(a)) return { ok: true, value: true };
  if (['n', 'no'].includes(a)) return { ok: true, value: false };
  return { ok: false, problem: `given ${JSON.stringify(answer)}; allowed: yes or no` };
};

/** Runs the guided setup. */
export async function run({ values }: CommandLine<InitOptions>): Promise<void> {
  if (!values.stack) throw new UsageError('--stack is required: testnet or mainnet (npm run init -- --help)');
  const stack = checkStackName(values.stack, '--stack');
  const network = NETWORKS[STACK_NETWORKS[stack]];
  const dir = path.resolve(values.dir ?? '.');
  const flags = values as Record<string, string | undefined>;
  const asker = new Asker(flags, Boolean(process.stdin.isTTY));
  try {
    const typenode = await asker.ask('typenode', `Node type ${nodeTypeMenu()}:`, checkNodeType, nodeTypeMenu());
    await asker.ask(
      'network',
      `Network ${networkMenu()}:`,
      (a) => checkNetworkAnswer(a, network),
      `${network.menuIndex} (${network.name})`,
    );
    const target = await asker.ask<'kubernetes' | 'ssh'>(
      'target',
      'Target (kubernetes or ssh):',
      (a) =>
        a.trim() === 'kubernetes' || a.trim() === 'ssh'
          ? { ok: true, value: a.trim() as 'kubernetes' | 'ssh' }
          : { ok: false, problem: `given ${JSON.stringify(a)}; allowed: kubernetes or ssh` },
      'kubernetes or ssh',
    );
    const askField = async (question: FieldQuestion, known: Record<string, unknown>) => {
      const fallback = fieldDefault(question, known, network);
      const optional = isOptionalQuestion(question);
      const hint = fallback !== undefined ? ` [${fallback}]` : optional ? ' [none]' : '';
      return asker.ask(
        question.flag,
        `${question.key} — ${questionMeaning(question)}${hint}:`,
        (a) => checkField(question, a, fallback),
        optional ? 'optional' : 'see docs/settings.md',
        fallback !== undefined || optional,
      );
    };
    const name = (await asker.ask(
      NODE_NAME_QUESTION.flag,
      `${NODE_NAME_QUESTION.key} — ${questionMeaning(NODE_NAME_QUESTION)} [${typenode}]:`,
      (a) => checkField(NODE_NAME_QUESTION, a, typenode),
      'lowercase letters, digits and hyphens',
      true,
    )) as string;

    const stackFile = path.join(dir, stackConfigFileName(stack));
    let p2pHost: string;
    if (target === 'kubernetes') {
      const known: Record<string, unknown> = {};
      const workers = listWorkers(values.context);
      if (workers.length > 0) {
        process.stdout.write(
          `Workers of the cluster:\n${workers.map((w, i) => `  [${i}] ${w.name} (${w.externalIP ?? 'no external IP'})`).join('\n')}\n`,
        );
      }
      const deploy: Record<string, unknown> = { network: network.helmName, typenode };
      for (const question of KUBERNETES_QUESTIONS) {
        if (question.key === 'workerName' && workers.length > 0 && flags[question.flag] === undefined) {
          const worker = await asker.ask<Worker>(
            question.flag,
            `workerName — ${questionMeaning(question)} (index or name):`,
            (a) => pickWorker(a, workers),
            workers.map((w) => w.name).join(', '),
          );
          deploy.workerName = worker.name;
          known.workerExternalIP = worker.externalIP;
          continue;
        }
        const answer = await askField(question, { ...deploy, ...known });
        deploy[question.key] = answer;
        if (question.key === 'publicIP') known.publicIP = answer;
      }
      const valuesFile = defaultValuesFile(typenode);
      writeValuesFile(path.join(dir, valuesFile), deploy);
      writeStackConfig(stackFile, network.name, { name, typenode, target });
      p2pHost = deploy['p2p.host'] as string;
      process.stdout.write(`wrote ${path.relative(process.cwd(), path.join(dir, valuesFile)) || valuesFile}\n`);
    } else {
      const inventory: Record<string, unknown> = {};
      for (const question of SSH_QUESTIONS) {
        const answer = await askField(question, inventory);
        if (answer !== undefined) inventory[question.key] = answer;
      }
      writeStackConfig(stackFile, network.name, { name, typenode, target, inventory });
      p2pHost = inventory.node_ip as string;
    }
    process.stdout.write(`wrote ${path.relative(process.cwd(), stackFile) || stackFile}\n`);

    const makeKey = await asker.ask('keygen', 'Create the node key now? [Y/n]', yesNo, 'yes or no');
    let identity: { enode: string; address: string } | undefined;
    if (makeKey) {
      // Outside the project (and any repository): the key must never be committed with the settings.
      const keyFile = path.join(
        path.resolve(expandHome(values['key-dir'] ?? DEFAULT_KEY_FOLDER)),
        `${stack}-${name}.key`,
      );
      const privateKey = generatePrivateKey();
      writeNewKeyFile(keyFile, privateKey);
      identity = deriveIdentity(privateKey, p2pHost, Number(flags['p2p-port'] ?? 0) || 60606);
      process.stdout.write(`wrote ${keyFile} (mode 0600): keep a copy somewhere safe\n`);
      const keyPath = `${CONFIG_NAMESPACE}:nodeKeys.${name}`;
      // The key goes to pulumi on standard input: never on a command line, and no shell runs with the path.
      const secretCommand = `pulumi config set --stack ${stack} --secret --path '${keyPath}' < ${shellQuote(keyFile)}`;
      const store = await asker.ask(
        'store-secret',
        'Store it as a secret of the stack now (needs pulumi)? [Y/n]',
        yesNo,
        'yes or no',
      );
      if (store) {
        const result = spawnSync('pulumi', ['config', 'set', '--stack', stack, '--secret', '--path', keyPath], {
          cwd: dir,
          input: privateKey,
          stdio: ['pipe', 'inherit', 'inherit'],
        });
        if (result.status !== 0) process.stdout.write(`could not run pulumi; store it yourself:\n  ${secretCommand}\n`);
      } else {
        process.stdout.write(`to store it as a secret:\n  ${secretCommand}\n`);
      }
    }

    // The same validation the program applies to the files just written; what only the operator can give (the SSH
    // key, the digests of the companions' executables and the monitoring client's image, which they must check
    // themselves) is left to do.
    const sshKey = `${CONFIG_NAMESPACE}:sshPrivateKey`;
    const companionDigest = new RegExp(`^${CONFIG_NAMESPACE}:companions\\.[A-Za-z]+\\.(sha256|imageDigest)$`);
    try {
      loadStack(stack, readStackConfigFile(stackFile), readFileFromDisk);
    } catch (error) {
      const leftToDo = (p: { key: string }) => p.key === sshKey || companionDigest.test(p.key);
      if (!(error instanceof SettingsError) || !error.problems.every(leftToDo)) throw error;
      for (const problem of error.problems) {
        process.stdout.write(
          problem.key === sshKey
            ? `still to do: pulumi config set --stack ${stack} --secret ${sshKey} < ~/.ssh/id_ed25519\n`
            : `still to do: pulumi config set --stack ${stack} --path '${problem.key}' <${problem.key.endsWith('imageDigest') ? 'sha256:digest' : 'sha256'}>: ${problem.allowed}\n`,
        );
      }
    }
    process.stdout.write(
      `\nnode ${name}: ${typenode} (${NODE_TYPE_FACTS[typenode].menuLabel}) on ${network.name}, ${target}\n`,
    );
    if (identity) process.stdout.write(`enode:   ${identity.enode}\naddress: ${identity.address}\n`);
    process.stdout.write(`next: pulumi up --stack ${stack}\n`);
  } finally {
    asker.close();
  }
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

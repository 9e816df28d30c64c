/**
 * The node's fields, asked in the order of its path's questions (cli/init/spec.ts has their flags): each with its
 * default (a re-run's node's current value, or the suggestion from the answers before), the host key by its own
 * question, a Kubernetes worker picked from the cluster's list, and an SSH machine's system read from it over SSH
 * when not given and its host key is pinned. A field may be asked again when the loader refuses its answer.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { DEFAULT_SSH_PORT, DEFAULT_SSH_USER } from '../../core/catalog/defaults';
import { cloudOfProviderId } from '../../core/catalog/loadBalancers';
import {
  appliesToCloud,
  Checked,
  checkField,
  currentAnswers,
  fieldDefault,
  FieldQuestion,
  isOptionalQuestion,
  isPlaceholder,
  parseWorkers,
  questionMeaning,
  Worker,
} from '../../core/init/questions';
import { expandHome } from '../keyFile';
import { allowedAnswers, Asker, InitValues, orDefault } from './asker';
import { askHostKeyQuestion, HostKeyAnswer } from './hostKeyQuestion';
import { readMachineSystem } from './machineSystem';
import { NodeChoice, questionsOf, StackFiles } from './nodeChoice';
import { deploySection, StackFileNode, valuesFileOf } from './settingsFiles';

/** The answers to a node's fields, and how to ask one of them (again). */
export class NodeFields {
  /** The answers, by the field's key (`node_ip`, `p2p.host`). */
  readonly answers: Record<string, unknown> = {};
  /** What the answers imply without being fields: the picked worker's external IP. */
  private readonly known: Record<string, unknown> = {};
  /** The host key question's answer (SSH). */
  hostKey: HostKeyAnswer = { acceptAny: false };
  /** Whether `os` was read from the machine (its refusal is then the machine's, not an answer's). */
  systemFromMachine = false;
  private readonly current: Record<string, unknown>;
  private readonly workers: Worker[];

  constructor(
    private readonly asker: Asker,
    private readonly values: InitValues,
    private readonly flags: Record<string, string>,
    private readonly files: StackFiles,
    private readonly node: NodeChoice,
  ) {
    const { existing } = node;
    // A replaced node's current values are the defaults, also when it moves to the other path (the fields both have).
    const existingDeploy = existing?.target === 'kubernetes' ? existingValues(files.dir, existing) : undefined;
    this.current = existing
      ? currentAnswers(node.target, {
          target: existing.target ?? '',
          deploy: existingDeploy,
          inventory: existing.inventory,
        })
      : {};
    this.workers = node.target === 'kubernetes' ? listWorkers(values.context) : [];
    // The cloud the workers run on, proposed for the load balancer (their spec.providerID: aws://, azure://, gce://).
    if (this.workers.length > 0) this.known.workersCloud = workersCloud(values.context);
  }

  /** Asks every field of the node's path, in order (a cluster's workers listed first). */
  async askAll(): Promise<void> {
    if (this.workers.length > 0) {
      process.stdout.write(
        `Workers of the cluster:\n${this.workers.map((w, i) => `  [${i}] ${w.name} (${w.externalIP ?? 'no external IP'})`).join('\n')}\n`,
      );
    }
    for (const question of questionsOf(this.node.target)) {
      // The load balancer's fields of the cloud answered, and no other cloud's.
      if (appliesToCloud(question, { ...this.current, ...this.answers })) await this.ask(question);
    }
  }

  /** Asks one question of the node's fields (again, after the loader refused its answer). */
  async ask(question: FieldQuestion): Promise<void> {
    if (question.key === 'host_key') {
      const { values, files, answers, node } = this;
      this.hostKey = await askHostKeyQuestion(this.asker, values, files.network, answers, node.existing);
      return;
    }
    if (question.key === 'os' && !this.systemFromMachine && (await this.readSystem())) return;
    if (question.key === 'workerName' && this.workers.length > 0 && this.flags[question.flag] === undefined) {
      return this.askWorker(question);
    }
    return this.askField(question);
  }

  /** A field by its rule, its default shown. */
  private async askField(question: FieldQuestion): Promise<void> {
    const { asker, answers } = this;
    // At the terminal, a placeholder of the files (the stock example's) is no default: the suggestion without it is.
    const fromFile = this.current[question.key];
    const placeholder = asker.interactive && fromFile != null && isPlaceholder(question.key, String(fromFile));
    const fallback = fieldDefault(
      question,
      { ...answers, ...this.known },
      this.files.network,
      placeholder ? undefined : fromFile,
    );
    const optional = isOptionalQuestion(question);
    const hint = fallback !== undefined ? ` [${fallback.value}]` : optional ? ' [none]' : '';
    answers[question.key] = await asker.ask(
      question.flag,
      `${question.key} — ${questionMeaning(question)}${hint}:`,
      (a) => checkField(question, a, fallback),
      optional ? 'optional' : `${allowedAnswers(question)} (${question.key}: ${questionMeaning(question)})`,
      fallback !== undefined || optional,
    );
  }

  /** The worker the pod is pinned to, from the cluster's list (index or name). */
  private async askWorker(question: FieldQuestion): Promise<void> {
    const { workers } = this;
    const listedWorker = workers.find((w) => w.name === this.current.workerName);
    const fallback = listedWorker?.name;
    const worker = await this.asker.ask<Worker>(
      question.flag,
      `workerName — ${questionMeaning(question)} (index or name)${fallback ? ` [${fallback}]` : ''}:`,
      orDefault((a) => pickWorker(a, workers), fallback),
      workers.map((w) => w.name).join(', '),
      fallback !== undefined,
    );
    this.answers.workerName = worker.name;
    this.known.workerExternalIP = worker.externalIP;
  }

  /** The machine's system, read over SSH when it is not given and the host key is pinned (never trusting another key). */
  private async readSystem(): Promise<boolean> {
    const { answers, values } = this;
    if (this.flags.os !== undefined || this.hostKey.key === undefined) return false;
    const machine = {
      host: String(answers.host),
      port: Number(answers.port ?? DEFAULT_SSH_PORT),
      user: String(answers.user ?? DEFAULT_SSH_USER),
      hostKey: this.hostKey.key,
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
    this.systemFromMachine = true;
    process.stdout.write(`os: ${read.system} (read from ${machine.host}'s /etc/os-release over SSH)\n`);
    return true;
  }
}

/** The values a replaced Kubernetes node reads now (its values file's deploy section). */
function existingValues(dir: string, existing: StackFileNode): Record<string, unknown> | undefined {
  const file = valuesFileOf(existing);
  return file === undefined ? undefined : deploySection(path.join(dir, file));
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

/** The one cloud every worker's `spec.providerID` names, if they name one. */
function workersCloud(context: string | undefined): string | undefined {
  const args = [
    ...(context ? ['--context', context] : []),
    'get',
    'nodes',
    '-o',
    'jsonpath={.items[*].spec.providerID}',
  ];
  const result = spawnSync('kubectl', args, { encoding: 'utf8', timeout: 20_000 });
  if (result.error || result.status !== 0) return undefined;
  const clouds = new Set(result.stdout.trim().split(/\s+/).map(cloudOfProviderId));
  const [cloud] = clouds;
  return clouds.size === 1 ? cloud : undefined;
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

/**
 * The difference between two offline plans (`npm run plan -- --diff BASE_DIR` or `--diff-ref REF`): which resources
 * `pulumi up` would create, change or delete, and which fields change. A pure function of two resources.json lists
 * (diffPlans), its text form (formatDiff), and the plan of the same stack at a git ref (planAtRef), which needs no
 * credentials either.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { PlannedResource } from './plannedResource';
import { readRemoteSteps, type RemoteSteps } from './remoteReruns';

export type { PlannedResource } from './plannedResource';

/** A resource's identity in the stack. */
export interface ResourceKey {
  type: string;
  name: string;
}

/** A changed multi-line text field: its changed lines, in order (`- old`, `+ new`). */
export interface LineChanges {
  added: number;
  removed: number;
  lines: string[];
}

/** One changed field. `before`/`after` are absent when the field is added/removed. */
export interface FieldChange {
  /** The field's path: `spec.template.spec.containers[0].image`, `data["config.toml"]`, `options.protect`. */
  path: string;
  before?: unknown;
  after?: unknown;
  /** For text with several lines (config.toml, a step's input): the lines that change. */
  lines?: LineChanges;
}

/** A resource that changes. */
export interface ResourceChange extends ResourceKey {
  fields: FieldChange[];
}

/** What `pulumi up` of the new plan would do, starting from the base plan. */
export interface PlanDiff {
  created: ResourceKey[];
  changed: ResourceChange[];
  deleted: ResourceKey[];
  unchanged: number;
}

const keyOf = (r: ResourceKey) => `${r.type}::${r.name}`;

/** Compares two plans' resources (the base, then the new one). */
export function diffPlans(base: readonly PlannedResource[], next: readonly PlannedResource[]): PlanDiff {
  const before = new Map(base.map((r) => [keyOf(r), r]));
  const after = new Map(next.map((r) => [keyOf(r), r]));
  const diff: PlanDiff = { created: [], changed: [], deleted: [], unchanged: 0 };
  for (const resource of next) {
    const old = before.get(keyOf(resource));
    if (!old) {
      diff.created.push({ type: resource.type, name: resource.name });
      continue;
    }
    const fields = [
      ...diffValues(old.inputs, resource.inputs, ''),
      ...diffValues(old.options, resource.options, 'options'),
    ];
    if (fields.length > 0) diff.changed.push({ type: resource.type, name: resource.name, fields });
    else diff.unchanged += 1;
  }
  for (const resource of base) {
    if (!after.has(keyOf(resource))) diff.deleted.push({ type: resource.type, name: resource.name });
  }
  return diff;
}

/** True when a diff has nothing to do. */
export function isEmptyDiff(diff: PlanDiff): boolean {
  return diff.created.length + diff.changed.length + diff.deleted.length === 0;
}

/** `a.b`, `a[0]`, `a["config.toml"]`. */
function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The changed leaves between two values, in the new value's key order, then keys only the old one has. */
export function diffValues(before: unknown, after: unknown, at: string): FieldChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...Object.keys(after), ...Object.keys(before).filter((k) => !(k in after))];
    return keys.flatMap((key) => diffValues(before[key], after[key], childPath(at, key)));
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    return Array.from({ length }, (_, i) => diffValues(before[i], after[i], childPath(at, i))).flat();
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const change: FieldChange = { path: at || '(inputs)' };
  if (before !== undefined) change.before = before;
  if (after !== undefined) change.after = after;
  if (typeof before === 'string' && typeof after === 'string' && (before.includes('\n') || after.includes('\n'))) {
    change.lines = lineChanges(before, after);
  }
  return [change];
}

/** The lines that change between two texts: a longest-common-subsequence diff of what lies between the common ends. */
export function lineChanges(before: string, after: string): LineChanges {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const x = a.slice(start, endA);
  const y = b.slice(start, endB);
  const lines: string[] = [];
  if (x.length * y.length > 4_000_000) {
    // Too large to align: every differing line as removed then added.
    lines.push(...x.map((l) => `- ${l}`), ...y.map((l) => `+ ${l}`));
  } else {
    // lcs[i][j]: the longest common subsequence of x[i..] and y[j..].
    const lcs = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
    for (let i = x.length - 1; i >= 0; i--) {
      for (let j = y.length - 1; j >= 0; j--) {
        lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        i++;
        j++;
      } else if (i < x.length && (j === y.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
        lines.push(`- ${x[i++]}`);
      } else {
        lines.push(`+ ${y[j++]}`);
      }
    }
  }
  return {
    added: lines.filter((l) => l.startsWith('+')).length,
    removed: lines.filter((l) => l.startsWith('-')).length,
    lines,
  };
}

/** A value on one line, cut to a readable length. */
function shown(value: unknown): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** How many changed lines of a text field are printed, and how much of each (all of them are in diff.json). */
const SHOWN_LINES = 40;
const SHOWN_LINE_LENGTH = 2000;

/** The diff as text: a summary line, then `+`/`~`/`-` per resource and one line per changed field. */
export function formatDiff(diff: PlanDiff, base: string): string {
  const out: string[] = [];
  const counts = `${diff.created.length} to create, ${diff.changed.length} to change, ${diff.deleted.length} to delete, ${diff.unchanged} unchanged`;
  out.push(`plan diff against ${base}: ${isEmptyDiff(diff) ? `no changes (${diff.unchanged} resources)` : counts}`);
  for (const r of diff.created) out.push(`+ ${r.type} ${r.name}`);
  for (const r of diff.changed) {
    for (const field of r.fields) {
      const head = `~ ${r.type} ${r.name}: ${field.path}`;
      if (!field.lines) {
        out.push(`${head}: ${shown(field.before)} -> ${shown(field.after)}`);
        continue;
      }
      const { added, removed, lines } = field.lines;
      const changed = Math.max(added, removed);
      out.push(`${head}: ${changed} line${changed === 1 ? '' : 's'} changed (+${added} -${removed})`);
      for (const line of lines.slice(0, SHOWN_LINES)) {
        out.push(`    ${line.length > SHOWN_LINE_LENGTH ? `${line.slice(0, SHOWN_LINE_LENGTH - 3)}...` : line}`);
      }
      if (lines.length > SHOWN_LINES) out.push(`    ... ${lines.length - SHOWN_LINES} more lines in diff.json`);
    }
  }
  for (const r of diff.deleted) out.push(`- ${r.type} ${r.name}`);
  return `${out.join('\n')}\n`;
}

/** Reads DIR/resources.json of a plan; undefined when there is none. */
export function readPlannedResources(dir: string): PlannedResource[] | undefined {
  const file = path.join(dir, 'resources.json');
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as PlannedResource[];
}

/** The base plan could not be made. */
export class BasePlanError extends Error {}

/** The arguments of the plan to make at the ref. */
export interface BasePlanArgs {
  stack: string;
  /** The stack config: a file of the project is read as it stood at the ref. */
  config?: string;
  /** Local files (node keys, a genesis copy) are the operator's, not the repository's: used as they are. */
  nodeKeyFiles?: string[];
  genesisFile?: string;
}

/** The settings files `--diff-ref` reads at the ref: the stack file (when it is the project's) and the values files. */
const SETTINGS_PATHS = (args: BasePlanArgs) => [args.config ?? `Pulumi.${args.stack}.yaml`, 'values'];

/**
 * When the stack's settings files differ from the ref's (not committed there), what to do instead: the plan at the ref
 * planned other settings (often the shipped stack file, which holds no node).
 */
function uncommittedAdvice(
  git: (gitArgs: string[]) => { status: number | null },
  ref: string,
  args: BasePlanArgs,
): string {
  const same = git(['diff', '--quiet', ref, '--', ...SETTINGS_PATHS(args)]).status === 0;
  if (same) return '';
  return (
    `\n${SETTINGS_PATHS(args).join(' and ')} at ${ref} are not as in your folder: --diff-ref plans the files as committed. ` +
    `Commit the stack and values files (or keep a copy of them), or plan before a change ` +
    `(npm run plan -- --stack ${args.stack} --out plan-before/) and compare with --diff plan-before/ (docs/operations.md)`
  );
}

/**
 * Plans the same stack as the project stood at a git ref: the ref's files (`git archive`, read-only on the
 * repository) in a temporary folder sharing the project's node_modules, planned there by the ref's own plan tool.
 * A base plan that finds policy violations (exit 1) still counts: only its resources are used.
 */
export function planAtRef(
  projectDir: string,
  ref: string,
  args: BasePlanArgs,
): { resources: PlannedResource[]; steps: RemoteSteps } {
  const git = (gitArgs: string[]) => spawnSync('git', ['-C', projectDir, ...gitArgs], { maxBuffer: 1 << 30 });
  const commit = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (commit.status !== 0) throw new BasePlanError(`--diff-ref ${ref}: not a commit of the repository`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-plan-base-'));
  try {
    const tree = path.join(work, 'tree');
    fs.mkdirSync(tree);
    const archive = git(['archive', '--format=tar', commit.stdout.toString().trim()]);
    if (archive.status !== 0) throw new BasePlanError(`git archive ${ref}: ${archive.stderr.toString().trim()}`);
    const unpack = spawnSync('tar', ['-x', '-C', tree], { input: archive.stdout, maxBuffer: 1 << 30 });
    if (unpack.status !== 0) throw new BasePlanError(`unpacking ${ref}: ${unpack.stderr.toString().trim()}`);
    const modules = path.join(tree, 'node_modules');
    fs.rmSync(modules, { recursive: true, force: true });
    fs.symlinkSync(path.join(projectDir, 'node_modules'), modules, 'dir');
    const out = path.join(work, 'plan');
    const planArgs = ['--stack', args.stack, '--out', out];
    if (args.config) {
      const config = path.resolve(args.config);
      const inProject = path.relative(projectDir, config);
      const inside = !inProject.startsWith('..') && !path.isAbsolute(inProject);
      planArgs.push('--config', inside ? path.join(tree, inProject) : config);
    }
    for (const keyFile of args.nodeKeyFiles ?? []) {
      const named = /^([a-z][-a-z0-9]*)=(.+)$/.exec(keyFile);
      planArgs.push('--node-key-file', named ? `${named[1]}=${path.resolve(named[2])}` : path.resolve(keyFile));
    }
    if (args.genesisFile) planArgs.push('--genesis-file', path.resolve(args.genesisFile));
    const run = spawnSync('npm', ['run', '--silent', 'plan', '--', ...planArgs], {
      cwd: tree,
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    const resources = readPlannedResources(out);
    if (!resources || (run.status !== 0 && run.status !== 1)) {
      const stderr = (run.stderr ?? '').split('\n').filter((l) => l && !l.startsWith('npm warn'));
      throw new BasePlanError(
        `the plan at ${ref} failed (exit ${run.status}):\n${stderr.join('\n')}${uncommittedAdvice(git, ref, args)}`,
      );
    }
    return { resources, steps: readRemoteSteps(out) };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

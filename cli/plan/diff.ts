/**
 * The difference between two offline plans (`npm run plan -- --diff BASE_DIR` or `--diff-ref REF`): which resources
 * `pulumi up` would create, change or delete, and which fields change. A pure function of two resources.json lists
 * (diffPlans) and its text form (formatDiff); the plan of the same stack at a git ref is planAtRef.ts.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { PlannedResource } from './plannedResource';

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

/**
 * kubectl's JSONPath templates (`-o jsonpath=...`), printed from an object read over HTTPS (apiReads.ts) the way
 * kubectl prints them: text as written, each `{path}`'s values joined by spaces, maps and lists as JSON, a missing
 * field as nothing, an index out of range as an error; `{range path}...{end}` once per value, `{"\n"}` a literal.
 * The paths are the ones the tests write: fields (`.a.b`, a dot in a name escaped as `\.`), `[n]`, `[*]` and
 * `[?(@.path=="value")]` (`==`, `!=`). Anything else throws UnsupportedTemplate, for the caller to ask kubectl.
 */

/** A template or path this reader does not know (kubectl's other JSONPath forms). */
export class UnsupportedTemplate extends Error {}

/** A template's index out of range, as kubectl fails on it. */
export class TemplateError extends Error {}

type Step =
  | { field: string }
  | { index: number }
  | { all: true }
  | { filter: { left: Step[]; operator: '==' | '!=' | 'exists'; right?: unknown } };

type Piece = { text: string } | { path: Step[] } | { range: Step[]; body: Piece[] };

/** The steps of a path (`.status.conditions[?(@.type=="Ready")].status`); `@` or nothing before the first dot. */
function parsePath(source: string): Step[] {
  const steps: Step[] = [];
  let i = source.startsWith('@') ? 1 : 0;
  while (i < source.length) {
    if (source[i] === '.') {
      let name = '';
      i++;
      while (i < source.length && source[i] !== '.' && source[i] !== '[') {
        if (source[i] === '\\' && source[i + 1] === '.') i++;
        name += source[i++];
      }
      if (name === '') throw new UnsupportedTemplate(`an empty field in ${source}`);
      steps.push(name === '*' ? { all: true } : { field: name });
    } else if (source[i] === '[') {
      const close = source.startsWith('[?(', i) ? source.indexOf(')]', i) + 1 : source.indexOf(']', i);
      if (close <= i) throw new UnsupportedTemplate(`an unclosed [ in ${source}`);
      steps.push(parseBracket(source.slice(i + 1, close)));
      i = close + 1;
    } else {
      throw new UnsupportedTemplate(`${source} at ${source.slice(i)}`);
    }
  }
  return steps;
}

/** What is inside `[...]`: `*`, an index, or a filter `?(@.path=="value")`. */
function parseBracket(inside: string): Step {
  if (inside === '*') return { all: true };
  if (/^-?\d+$/.test(inside)) return { index: Number(inside) };
  const filter = /^\?\((@[^=!<>]*?)\s*(?:(==|!=)\s*(.+?))?\s*\)$/.exec(inside);
  if (!filter) throw new UnsupportedTemplate(`[${inside}]`);
  const left = parsePath(filter[1]);
  if (!filter[2]) return { filter: { left, operator: 'exists' } };
  return { filter: { left, operator: filter[2] as '==' | '!=', right: literal(filter[3]) } };
}

/** A filter's value: a quoted string, a number, true or false. */
function literal(text: string): unknown {
  const quoted = /^"(.*)"$|^'(.*)'$/.exec(text);
  if (quoted) return quoted[1] ?? quoted[2];
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  throw new UnsupportedTemplate(`the value ${text}`);
}

/** The pieces of a template, each `{range}` holding the pieces up to its `{end}`. */
function parseTemplate(template: string): Piece[] {
  const root: Piece[] = [];
  const open: Piece[][] = [root];
  let i = 0;
  while (i < template.length) {
    const brace = template.indexOf('{', i);
    if (brace < 0) {
      open[open.length - 1].push({ text: template.slice(i) });
      break;
    }
    if (brace > i) open[open.length - 1].push({ text: template.slice(i, brace) });
    const close = closingBrace(template, brace);
    const inside = template.slice(brace + 1, close).trim();
    const current = open[open.length - 1];
    if (inside === 'end') {
      if (open.length === 1) throw new UnsupportedTemplate('an {end} outside a {range}');
      open.pop();
    } else if (inside.startsWith('range ')) {
      const range: Piece = { range: parsePath(inside.slice('range '.length).trim()), body: [] };
      current.push(range);
      open.push(range.body);
    } else if (/^".*"$/s.test(inside)) {
      current.push({ text: JSON.parse(inside) as string });
    } else {
      current.push({ path: parsePath(inside) });
    }
    i = close + 1;
  }
  if (open.length !== 1) throw new UnsupportedTemplate('a {range} without its {end}');
  return root;
}

/** The `}` that closes the `{` at `start` (one inside a quoted string does not). */
function closingBrace(template: string, start: number): number {
  let quoted = false;
  for (let i = start + 1; i < template.length; i++) {
    if (template[i] === '\\' && quoted) i++;
    else if (template[i] === '"') quoted = !quoted;
    else if (template[i] === '}' && !quoted) return i;
  }
  throw new UnsupportedTemplate(`an unclosed { in ${template}`);
}

/** The values a path reaches from each of `values` (a missing field reaches none). */
function walk(values: unknown[], steps: Step[]): unknown[] {
  let current = values;
  for (const step of steps) {
    const next: unknown[] = [];
    for (const value of current) {
      if (value === null || value === undefined) continue;
      if ('field' in step) {
        if (isMap(value) && step.field in value) next.push(value[step.field]);
      } else if ('all' in step) {
        if (Array.isArray(value)) next.push(...value);
        else if (isMap(value)) next.push(...Object.values(value));
      } else if ('index' in step) {
        next.push(...indexed(value, step.index));
      } else {
        if (!Array.isArray(value)) throw new TemplateError(`${JSON.stringify(value)} is not array or slice`);
        next.push(...value.filter((item) => passes(item, step.filter)));
      }
    }
    current = next;
  }
  return current;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `[n]` of a list (from its end when negative); out of range is kubectl's error. */
function indexed(value: unknown, index: number): unknown[] {
  if (!Array.isArray(value)) throw new TemplateError(`${JSON.stringify(value)} is not array or slice`);
  const at = index < 0 ? index + value.length : index;
  if (at < 0 || at >= value.length) {
    throw new TemplateError(`array index out of bounds: index ${at}, length ${value.length}`);
  }
  return [value[at]];
}

function passes(item: unknown, filter: Extract<Step, { filter: unknown }>['filter']): boolean {
  const lefts = walk([item], filter.left);
  if (filter.operator === 'exists') return lefts.length > 0;
  if (lefts.length !== 1) return false;
  return (lefts[0] === filter.right) === (filter.operator === '==');
}

/** A value as kubectl prints it: maps and lists as Go's JSON (keys sorted, <, > and & escaped), the rest as text. */
function printed(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  return goJson(value);
}

function goJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (isMap(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${goJson(key)}:${goJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
}

function render(pieces: Piece[], data: unknown): string {
  let out = '';
  for (const piece of pieces) {
    if ('text' in piece) out += piece.text;
    else if ('path' in piece) out += walk([data], piece.path).map(printed).join(' ');
    else for (const value of walk([data], piece.range)) out += render(piece.body, value);
  }
  return out;
}

/**
 * The text kubectl's `-o jsonpath=<template>` prints for `object`; throws TemplateError where kubectl fails
 * (an index out of range), UnsupportedTemplate for a form this reader does not know.
 */
export function jsonPathText(template: string, object: unknown): string {
  return render(parseTemplate(template), object);
}

/** Whether this reader knows every form `template` uses (else kubectl is asked). */
export function knownTemplate(template: string): boolean {
  try {
    parseTemplate(template);
    return true;
  } catch (error) {
    if (error instanceof UnsupportedTemplate) return false;
    throw error;
  }
}

/**
 * Settings problems: one clear line per problem, naming the file, the key, what was given and what is allowed.
 */
import type { z } from 'zod';

/** One thing wrong with an operator's settings. */
export interface Problem {
  /** The file the setting lives in, as the operator names it (e.g. `values/writer.yml`). */
  file: string;
  /** Where in the file, e.g. `deploy.p2p.port` or `lacchain:nodes[0].typenode`. */
  key: string;
  /** What was given: a JSON rendering, `missing`, `unknown field`, or a note for a secret. */
  given: string;
  /** What is allowed there. */
  allowed: string;
}

/** Settings that cannot be deployed. Its message lists every problem, one a line; nothing was declared. */
export class SettingsError extends Error {
  constructor(readonly problems: Problem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'SettingsError';
  }
}

/** `file: key: given …; allowed: …`. */
export function formatProblem(problem: Problem): string {
  return `${problem.file}: ${problem.key}: ${problem.given}; allowed: ${problem.allowed}`;
}

/** How a given value is shown: secrets are never echoed. */
export function describeGiven(value: unknown, secret = false): string {
  if (value === undefined) return 'missing';
  if (secret) return 'given a value (secret, not shown)';
  const text = JSON.stringify(value);
  return `given ${text === undefined ? String(value) : text.length > 120 ? `${text.slice(0, 117)}...` : text}`;
}

/** Joins a key prefix and a zod path into `a.b[0].c`. */
export function keyPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** What a field name of the settings looks like (`node_ip`, `p2p`, `lacchain:nodes`). */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,62}(:[A-Za-z][A-Za-z0-9_.-]{0,62})?$/;

/**
 * Turns zod's issues into problems. `prefix` is the key path of the validated object inside its file;
 * `secretKeys` are key paths whose values must never be echoed.
 */
export function problemsFromZod(
  file: string,
  prefix: string,
  error: z.ZodError,
  secretKeys: ReadonlySet<string> = new Set(),
): Problem[] {
  const problems: Problem[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const unknownKey of issue.keys) {
        // A name no setting could have (it may be a line of a file given by mistake) is not shown.
        const shown = FIELD_NAME.test(unknownKey) ? unknownKey : '(a name that is no setting, not shown)';
        problems.push({
          file,
          key: keyPath(prefix, [...issue.path, shown]),
          given: 'unknown field',
          allowed: issue.message,
        });
      }
      continue;
    }
    const key = keyPath(prefix, issue.path);
    const input = (issue as { input?: unknown }).input;
    problems.push({ file, key, given: describeGiven(input, secretKeys.has(key)), allowed: issue.message });
  }
  return problems;
}

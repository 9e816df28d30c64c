/**
 * How `npm run init` gets each answer: asked on the terminal until it passes its check, or taken from its flag (which
 * must pass) when there is no terminal; the checks shared by its questions.
 */
import * as readline from 'readline';
import { Checked, FieldQuestion } from '../../core/init/questions';
import { CommandLine, UsageError } from '../cli';
import type { InitOptions } from './spec';

/** The values of init's command line. */
export type InitValues = CommandLine<InitOptions>['values'];

/** Asks questions on the terminal, or takes the answers from flags when there is none. */
export class Asker {
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

/** A yes-or-no answer; an empty one is `byDefault`. */
export const yesNo =
  (byDefault: boolean) =>
  (answer: string): Checked<boolean> => {
    const a = answer.trim().toLowerCase();
    if (a === '') return { ok: true, value: byDefault };
    if (['y', 'yes'].includes(a)) return { ok: true, value: true };
    if (['n', 'no'].includes(a)) return { ok: true, value: false };
    return { ok: false, problem: `given ${JSON.stringify(answer)}; allowed: yes or no` };
  };

/** A check that reads an empty answer as `fallback` (when there is one). */
export const orDefault =
  <T>(check: (answer: string) => Checked<T>, fallback: string | undefined) =>
  (answer: string) =>
    check(answer.trim() === '' && fallback !== undefined ? fallback : answer);

/** What a required question takes, as its rule in the schema says it (what a missing answer is refused with). */
export function allowedAnswers(question: FieldQuestion): string {
  const checked = question.schema.safeParse(undefined);
  return checked.success ? 'any value' : checked.error.issues[0].message;
}

/** Whether a switch (a boolean option: --replace, --accept-any-host-key) was given. */
export const switchOn = (values: InitValues, name: string) => (values as Record<string, unknown>)[name] === true;

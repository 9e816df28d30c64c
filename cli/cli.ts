/**
 * What every command-line tool shares: its description (a ToolSpec: what it does, its operations, each option with
 * its meaning, examples), `--help` made from it, command lines checked against it with one-line errors that name the
 * word given and the closest valid one, and exits without stack traces.
 *
 * An entry file (cli/<tool>.ts) holds only its spec and loads its body lazily, so `--help` and a usage error answer
 * without loading the program, Pulumi or the network clients.
 */
import { suggestion } from '../core/didYouMean';
import { parseArgs } from 'util';
import { SettingsError } from '../core/settings/problems';
import { GenesisError } from '../core/genesis';
import { withoutControlSequences } from '../core/operations/terminalText';
import * as path from 'path';
import { PROJECT_DIR } from '../core/projectDir';

/** Exit codes of the tools. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A mistake in how a tool was called, or in the settings it read: exit code 2. */
export class UsageError extends Error {}

/** A check or operation that ran and failed: exit code 1. */
export class ToolFailure extends Error {}

/** One option of a tool. */
export interface OptionSpec {
  /** A string option takes a value; a boolean one is a switch. */
  type: 'string' | 'boolean';
  /** The option may be given more than once (its values are a list). */
  multiple?: boolean;
  /** The placeholder of its value in the help (e.g. `FILE`). */
  value?: string;
  /** What it does, one line. */
  help: string;
  /** The operations it applies to (every operation when absent); given with another, it is refused. */
  for?: readonly string[];
}

/** Everything a tool says about how to call it. */
export interface ToolSpec<O extends Record<string, OptionSpec> = Record<string, OptionSpec>> {
  /** How it is run, e.g. `npm run node --`. */
  command: string;
  /** The usage line after the command, e.g. `<operation> --stack <testnet|mainnet> [options]`. */
  usage: string;
  /** What the tool does, a few lines. */
  summary: string;
  /** Its operations (the one positional word) and what each does; none for a tool without operations. */
  operations?: Readonly<Record<string, string>>;
  /** Its options by name (without the leading dashes). */
  options: O;
  /** At least two examples: the command line after the command, and what it does. */
  examples: ReadonlyArray<readonly [string, string]>;
  /** What the exit codes mean for this tool. */
  exitCodes?: string;
}

/** The values of a spec's options as parsed. */
export type OptionValues<O extends Record<string, OptionSpec>> = {
  [K in keyof O]?: O[K]['type'] extends 'boolean'
    ? O[K]['multiple'] extends true
      ? boolean[]
      : boolean
    : O[K]['multiple'] extends true
      ? string[]
      : string;
};

/** A checked command line: its operation (for a tool with operations) and its options. */
export interface CommandLine<O extends Record<string, OptionSpec>> {
  operation: string;
  values: OptionValues<O>;
}

/** The options every tool has, besides its own. */
const HELP_OPTIONS = ['help', 'h'];
/** Width of the name column of the help's tables. */
const HELP_COLUMN = 28;

/** The `--help` text of a tool. */
export function helpText(spec: ToolSpec): string {
  const lines = [`usage: ${spec.command} ${spec.usage}`, '', ...spec.summary.split('\n')];
  // Names longer than the column go on their own line, their text below.
  const table = (rows: Array<[string, string]>) =>
    rows.map(([name, text]) =>
      name.length <= HELP_COLUMN - 4
        ? `  ${name.padEnd(HELP_COLUMN - 2)}${text}`
        : `  ${name}\n${' '.repeat(HELP_COLUMN)}${text}`,
    );
  if (spec.operations) {
    lines.push('', 'Operations:', ...table(Object.entries(spec.operations)));
  }
  const options = Object.entries(spec.options).map(([name, option]): [string, string] => {
    const value = option.type === 'string' ? ` ${option.value ?? 'VALUE'}` : '';
    const repeat = option.multiple ? ' ...' : '';
    const only = option.for ? ` (${option.for.join(', ')} only)` : '';
    return [`--${name}${value}${repeat}`, `${option.help}${only}`];
  });
  lines.push('', 'Options:', ...table([...options, ['--help, -h', 'show this help and exit']]));
  lines.push('', 'Examples:');
  for (const [args, what] of spec.examples) lines.push(`  ${spec.command} ${args}`, `      ${what}`);
  if (spec.exitCodes) lines.push('', `Exit codes: ${spec.exitCodes}`);
  return `${lines.join('\n')}\n`;
}

/** A PEM private key's first line (`-----BEGIN OPENSSH PRIVATE KEY-----`, `-----BEGIN EC PRIVATE KEY-----`, …). */
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
/** A node key as Besu's key file holds it: 64 hex digits, with or without 0x. */
const NODE_KEY = /^\s*(0x)?[0-9a-fA-F]{64}\s*$/;

/** True when a word of the command line looks like a private key (PEM, or a node key's 64 hex digits). */
function looksLikePrivateKey(word: string): boolean {
  return PEM_PRIVATE_KEY.test(word) || NODE_KEY.test(word);
}

/** What an error says instead of a value that looks like a private key: never the key itself. */
const PRIVATE_KEY_NOT_SHOWN =
  'what looks like a private key (not shown; a key on a command line is seen by the shell history and other users)';

/**
 * A message with every PEM private key in it (as given, or as JSON writes it) cut out: an error never echoes one,
 * whatever flag or file it came from.
 */
function withoutPrivateKeys(text: string): string {
  return text.replace(
    /"?-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----"?|(?="|$))/g,
    `[${PRIVATE_KEY_NOT_SHOWN}]`,
  );
}

/** Checks a command line against the spec; every mistake is a one-line UsageError naming the word given. */
export function parseCommandLine<O extends Record<string, OptionSpec>>(
  spec: ToolSpec<O>,
  args: readonly string[],
): CommandLine<O> {
  const lists = `${spec.command} --help lists them`;
  const more = `(${lists})`;
  const names = Object.keys(spec.options);
  refusePrivateKeys(spec, args);
  const loose = parseArgs({ args: [...args], strict: false, allowPositionals: true, tokens: true });
  for (const token of loose.tokens ?? []) {
    if (token.kind !== 'option' || names.includes(token.name)) continue;
    throw new UsageError(
      `unknown option ${JSON.stringify(token.rawName)}${suggestion(token.name, names, '--')}; ${lists}`,
    );
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...args],
      options: Object.fromEntries(
        names.map((n) => [n, { type: spec.options[n].type, multiple: spec.options[n].multiple ?? false }]),
      ),
      allowPositionals: spec.operations !== undefined,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(`${oneLine((error as Error).message, spec, args)} (${spec.command} --help shows the usage)`);
  }
  let operation = '';
  if (spec.operations) {
    const operations = Object.keys(spec.operations);
    const words = parsed.positionals;
    if (words.length === 0) throw new UsageError(`give an operation: ${operations.join(', ')} ${more}`);
    if (words.length > 1) {
      throw new UsageError(`give one operation, not ${words.map((w) => JSON.stringify(w)).join(' and ')} ${more}`);
    }
    operation = words[0];
    if (!operations.includes(operation)) {
      throw new UsageError(
        `unknown operation ${JSON.stringify(operation)}${suggestion(operation, operations)}; allowed: ${operations.join(', ')}`,
      );
    }
  }
  for (const name of Object.keys(parsed.values)) {
    const only = spec.options[name].for;
    if (only && !only.includes(operation)) {
      throw new UsageError(`--${name} is for ${only.join(' and ')} only, not ${operation}`);
    }
  }
  return { operation, values: parsed.values as OptionValues<O> };
}

/**
 * No option takes a private key (keys come from files and standard input): a word that looks like one is refused,
 * naming the option it was given to and what that option takes, and never echoed.
 */
function refusePrivateKeys(spec: ToolSpec, args: readonly string[]): void {
  const inline = /^--([\w-]+)=/;
  const at = args.findIndex((arg) => looksLikePrivateKey(arg.replace(inline, '')));
  if (at < 0) return;
  const flag = inline.exec(args[at])?.[1] ?? /^--([\w-]+)$/.exec(args[at - 1] ?? '')?.[1];
  const option = flag === undefined ? undefined : spec.options[flag];
  if (flag === undefined || option?.type !== 'string') {
    throw new UsageError(`given ${PRIVATE_KEY_NOT_SHOWN}; ${spec.command} --help lists what it takes`);
  }
  throw new UsageError(`--${flag}: given ${PRIVATE_KEY_NOT_SHOWN}; allowed: ${option.help}`);
}

/** Node's parseArgs messages, made one line and without its advice about positionals (which does not apply). */
function oneLine(message: string, spec: ToolSpec, args: readonly string[]): string {
  const unexpected = /^Unexpected argument '([^']*)'/.exec(message);
  if (unexpected) return `unexpected argument ${JSON.stringify(unexpected[1])}: ${spec.command} takes options only`;
  const missing = /^Option '(-[-\w]+)[^']*' argument missing/.exec(message);
  if (missing) return `${missing[1]} needs a value`;
  // `--host --node-name x`: the value left out, the next option taken for it.
  const ambiguous = /^Option '--([-\w]+)[^']*' argument is ambiguous/.exec(message);
  if (ambiguous) {
    const flag = `--${ambiguous[1]}`;
    const next = args[args.indexOf(flag) + 1];
    const allowed = spec.options[ambiguous[1]]?.help ?? 'a value';
    return `${flag} needs a value: given the option ${JSON.stringify(next)} after it; allowed: ${allowed} (a value that starts with a dash: ${flag}=VALUE)`;
  }
  return message.split('\n')[0].replace(/\. To specify a positional argument.*$/, '');
}

/** True when the command line asks for help (before any `--` that ends the options). */
function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) =>
    HELP_OPTIONS.some((h) => a === `--${h}` || a === `-${h}`),
  );
}

/**
 * Ends the tool quietly when the reader of its output goes away (`npm run init -- --help | head`), as `cat` ends: the
 * launcher's handler (launcher.js), installed here too for a tool started without it (the bench, a test).
 */
export function endQuietlyOnBrokenPipe(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const launcher = require(path.join(PROJECT_DIR, 'launcher.js')) as { endQuietlyOnBrokenPipe(): void };
  launcher.endQuietlyOnBrokenPipe();
}

/**
 * Runs a tool: `--help` prints its help; otherwise the command line is checked against the spec and handed to the
 * body (loaded only then), whose errors are printed as one plain message with the matching exit code.
 */
export function runCli<O extends Record<string, OptionSpec>>(
  spec: ToolSpec<O>,
  body: (line: CommandLine<O>) => Promise<number | void> | number | void,
  args: readonly string[] = process.argv.slice(2),
): void {
  endQuietlyOnBrokenPipe();
  if (wantsHelp(args)) {
    process.stdout.write(helpText(spec as unknown as ToolSpec));
    return;
  }
  runTool(() => body(parseCommandLine(spec, args)));
}

/** Writes an error for the terminal: one message, whatever text from outside it carries cannot drive the terminal. */
function sayError(text: string): void {
  process.stderr.write(`${withoutControlSequences(withoutPrivateKeys(text))}\n`);
}

/** What a tool says when its operation stopped before it finished (Node ran out of work while it waited). */
export const UNFINISHED_OPERATION =
  'unexpected error: the operation stopped before it finished (it waited for an answer that cannot come); nothing says it succeeded: check the node and run it again';

/** Runs a tool's main function: prints errors as plain messages and exits with the matching code. */
export function runTool(main: () => Promise<number | void> | number | void): void {
  endQuietlyOnBrokenPipe();
  // Node ends a process whose work ran out with status 0, even when the operation is still waiting for something that
  // can no longer come (a promise nothing will settle): that must never read as success.
  const unfinished = () => {
    sayError(UNFINISHED_OPERATION);
    process.exitCode = EXIT.failed;
  };
  process.once('beforeExit', unfinished);
  Promise.resolve()
    .then(main)
    .finally(() => process.off('beforeExit', unfinished))
    .then(
      (code) => {
        process.exitCode = code ?? EXIT.ok;
      },
      (error: unknown) => {
        if (error instanceof SettingsError && error.problems.every((p) => p.file.startsWith('--'))) {
          // A flag's value (e.g. --stack), not a settings file: a mistake in the command line.
          sayError(`error: ${error.problems.map((p) => `${p.file}: ${p.given}; allowed: ${p.allowed}`).join('; ')}`);
          process.exitCode = EXIT.usage;
        } else if (error instanceof SettingsError) {
          sayError(`error: the settings cannot be deployed:\n${error.message}`);
          process.exitCode = EXIT.usage;
        } else if (error instanceof UsageError) {
          sayError(`error: ${error.message}`);
          process.exitCode = EXIT.usage;
        } else if (error instanceof ToolFailure || error instanceof GenesisError) {
          sayError(`error: ${error.message}`);
          process.exitCode = EXIT.failed;
        } else {
          sayError(`unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
          process.exitCode = EXIT.failed;
        }
      },
    );
}

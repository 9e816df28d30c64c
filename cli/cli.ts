/**
 * What every command-line tool shares: argument parsing with clear usage errors, and exits without stack traces.
 */
import { parseArgs, ParseArgsConfig } from 'util';
import { SettingsError } from '../core/settings/problems';
import { GenesisError } from '../core/genesis';

/** Exit codes of the tools. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A mistake in how a tool was called, or in the settings it read: exit code 2. */
export class UsageError extends Error {}

/** A check or operation that ran and failed: exit code 1. */
export class ToolFailure extends Error {}

/** Parses the arguments; unknown or malformed options are a UsageError naming the usage line. */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  usage: string,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\nusage: ${usage}`);
  }
}

/** Runs a tool's main function: prints errors as plain messages and exits with the matching code. */
export function runTool(main: () => Promise<number | void> | number | void): void {
  Promise.resolve()
    .then(main)
    .then(
      (code) => {
        process.exitCode = code ?? EXIT.ok;
      },
      (error: unknown) => {
        if (error instanceof SettingsError) {
          process.stderr.write(`error: the settings cannot be deployed:\n${error.message}\n`);
          process.exitCode = EXIT.usage;
        } else if (error instanceof UsageError) {
          process.stderr.write(`error: ${error.message}\n`);
          process.exitCode = EXIT.usage;
        } else if (error instanceof ToolFailure || error instanceof GenesisError) {
          process.stderr.write(`error: ${error.message}\n`);
          process.exitCode = EXIT.failed;
        } else {
          process.stderr.write(
            `unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
          );
          process.exitCode = EXIT.failed;
        }
      },
    );
}

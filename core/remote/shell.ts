/**
 * Shell text the program sends to a remote machine: quoting, and the standard input of a step (its parameters as
 * exported variables, then the steps' shared library and the step's script file, each byte for byte).
 */
import { readScript, REMOTE_LIBRARY_SCRIPT } from '../scripts';
import { SECRET_PARAMETERS } from './secretParameters';

/** A value as one single-quoted shell word. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The names a step parameter may have. */
export const PARAMETER_NAME = /^[A-Z][A-Z0-9_]*$/;

/**
 * The parameter lines of a step, one per parameter, in the given order: `export NAME='value'`, but a secret parameter
 * (core/remote/secretParameters.ts) is a plain `NAME='value'`, never exported: no command the step runs inherits it,
 * and no process of another user can read it in that command's environment (/proc/PID/environ).
 */
export function exportLines(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => {
      if (!PARAMETER_NAME.test(name)) throw new Error(`not a step parameter name: ${name}`);
      return `${SECRET_PARAMETERS.has(name) ? '' : 'export '}${name}=${shellQuote(value)}\n`;
    })
    .join('');
}

/** The last line of every step's input: a step whose input does not end with it arrived cut off. */
export const STEP_END = '# end of lacchain-besu-node step';

/**
 * What a step runs after its parameters: the helpers every step may call (scripts/remote/lib.sh: fail, write_file…),
 * then the step's own script (a file under scripts/), both byte for byte. Nothing is sourced on the machine.
 */
export function stepScript(scriptFile: string): string {
  return `${readScript(REMOTE_LIBRARY_SCRIPT)}${readScript(scriptFile)}`;
}

/**
 * The standard input of a step: a header, then its parameters and its script (stepScript) inside one `{ … }` group, then
 * STEP_END. bash reads a group whole before it runs any of it, and the step's command runs nothing unless the input
 * ends with STEP_END: a step whose input is cut off (a dropped connection, a truncated stdin) runs nothing partial.
 */
export function stepInput(header: string, env: Record<string, string>, script: string): string {
  const body = script.endsWith('\n') ? script : `${script}\n`;
  return `# ${header}\n{\n${exportLines(env)}${body}}\n${STEP_END}\n`;
}

/**
 * The command that runs a step, through sudo unless the user is root: bash reads the whole input into memory (never
 * onto a command line or a disk: the node key is in it), checks that it ends with STEP_END, and only then runs it;
 * an input cut off exits 75 having run nothing.
 */
export function stepCommand(user: string): string {
  const run =
    `bash -c 'input=$(cat) || exit 75; case "$input" in *"${STEP_END}") printf "%s\\n" "$input" | bash -s ;; ` +
    `*) echo "lacchain-besu-node: the step arrived cut off: nothing was run" >&2; exit 75 ;; esac'`;
  return user === 'root' ? run : `sudo -n ${run}`;
}

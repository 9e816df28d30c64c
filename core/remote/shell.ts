/**
 * Shell text the program sends to a remote machine: quoting, and the standard input of a step (its parameters as
 * exported variables, then the step's script file, byte for byte).
 */

/** A value as one single-quoted shell word. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The names a step parameter may have. */
export const PARAMETER_NAME = /^[A-Z][A-Z0-9_]*$/;

/** The parameter lines of a step: `export NAME='value'`, one per parameter, in the given order. */
export function exportLines(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => {
      if (!PARAMETER_NAME.test(name)) throw new Error(`not a step parameter name: ${name}`);
      return `export ${name}=${shellQuote(value)}\n`;
    })
    .join('');
}

/** The standard input of a step: a header, its parameters, then its script. */
export function stepInput(header: string, env: Record<string, string>, script: string): string {
  return `# ${header}\n${exportLines(env)}${script}`;
}

/** The command that runs a step: bash reading the step from standard input, through sudo unless the user is root. */
export function stepCommand(user: string): string {
  return user === 'root' ? 'bash -s' : 'sudo -n bash -s';
}

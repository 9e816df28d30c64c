/**
 * A refused `pulumi up` is as fast as a preview (issue 67): the SDK formats an uncaught error with util.inspect for
 * its trace, and a RunError carrying its stack took about 10 s of CPU there (components/runStop.ts). So every RunError
 * the program makes comes from stopRun, with no stack. The time itself is measured by `npm run bench`, not here.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as pulumi from '@pulumi/pulumi';
import { stopRun } from '../../components/runStop';

const ROOT = path.join(__dirname, '..', '..');

/** The program's own TypeScript files: index.ts, program.ts and components/. */
function programFiles(): string[] {
  const components = fs
    .readdirSync(path.join(ROOT, 'components'))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => path.join('components', name));
  return ['index.ts', 'program.ts', ...components];
}

describe('how the program stops a pulumi up', () => {
  it('stops with a RunError that says the message and carries no stack', () => {
    const error = stopRun('the settings of stack testnet cannot be deployed');
    expect(error).toBeInstanceOf(pulumi.RunError);
    expect(error.message).toBe('the settings of stack testnet cannot be deployed');
    expect(error.stack).toBe('');
  });

  it('makes every RunError through stopRun, none with its stack', () => {
    const makers = programFiles().filter(
      (file) =>
        file !== path.join('components', 'runStop.ts') &&
        /new\s+pulumi\.RunError\b/.test(fs.readFileSync(path.join(ROOT, file), 'utf8')),
    );
    expect(programFiles().length).toBeGreaterThan(5);
    expect(makers).toEqual([]);
  });
});

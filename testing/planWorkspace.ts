/**
 * The work folder of a test file that runs the offline plan: plans run into it and project folders made in it, all
 * removed when its tests are done.
 */
import * as fs from 'fs';
import * as path from 'path';
import { projectFolder } from './projects';
import { runNpm } from './run';
import { workFolder } from './workFolder';

/** A new work folder `<prefix>XXXXXX` (see workFolder), with what the plan's tests do in it. */
export function planWorkspace(prefix: string) {
  const work = workFolder(prefix);
  return {
    work,
    /** Runs the offline plan (`npm run plan -- args --out DIR`) into a new folder of the work folder. */
    plan(args: string[], options: { cwd?: string } = {}) {
      const out = fs.mkdtempSync(path.join(work, 'out-'));
      return { ...runNpm('plan', [...args, '--out', out], options), out };
    },
    /** A project folder with a testnet stack config and values files (testing/projects.ts). */
    project: (config: Record<string, unknown>, files: Record<string, unknown> = {}) =>
      projectFolder(work, config, files),
  };
}

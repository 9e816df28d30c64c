/**
 * The plan of the same stack at a git ref (`npm run plan -- --diff-ref REF`): the ref's files planned by the ref's own
 * plan tool, without credentials, for cli/plan/diff.ts to compare with.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readPlannedResources } from './diff';
import type { PlannedResource } from './plannedResource';
import { readRemoteSteps, type RemoteSteps } from './remoteReruns';

/** The base plan could not be made. */
export class BasePlanError extends Error {}

/** The arguments of the plan to make at the ref. */
export interface BasePlanArgs {
  stack: string;
  /** The stack config: a file of the project is read as it stood at the ref. */
  config?: string;
  /** Local files (node keys, a genesis copy) are the operator's, not the repository's: used as they are. */
  nodeKeyFiles?: string[];
  genesisFile?: string;
}

/** The settings files `--diff-ref` reads at the ref: the stack file (when it is the project's) and the values files. */
const SETTINGS_PATHS = (args: BasePlanArgs) => [args.config ?? `Pulumi.${args.stack}.yaml`, 'values'];

/**
 * When the stack's settings files differ from the ref's (not committed there), what to do instead: the plan at the ref
 * planned other settings (often the shipped stack file, which holds no node).
 */
function uncommittedAdvice(
  git: (gitArgs: string[]) => { status: number | null },
  ref: string,
  args: BasePlanArgs,
): string {
  const same = git(['diff', '--quiet', ref, '--', ...SETTINGS_PATHS(args)]).status === 0;
  if (same) return '';
  return (
    `\n${SETTINGS_PATHS(args).join(' and ')} at ${ref} are not as in your folder: --diff-ref plans the files as committed. ` +
    `Commit the stack and values files (or keep a copy of them), or plan before a change ` +
    `(npm run plan -- --stack ${args.stack} --out plan-before/) and compare with --diff plan-before/ (docs/upgrades.md)`
  );
}

/**
 * Plans the same stack as the project stood at a git ref: the ref's files (`git archive`, read-only on the
 * repository) in a temporary folder sharing the project's node_modules, planned there by the ref's own plan tool.
 * A base plan that finds policy violations (exit 1) still counts: only its resources are used.
 */
export function planAtRef(
  projectDir: string,
  ref: string,
  args: BasePlanArgs,
): { resources: PlannedResource[]; steps: RemoteSteps } {
  const git = (gitArgs: string[]) => spawnSync('git', ['-C', projectDir, ...gitArgs], { maxBuffer: 1 << 30 });
  const commit = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (commit.status !== 0) throw new BasePlanError(`--diff-ref ${ref}: not a commit of the repository`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-plan-base-'));
  try {
    const tree = path.join(work, 'tree');
    fs.mkdirSync(tree);
    const archive = git(['archive', '--format=tar', commit.stdout.toString().trim()]);
    if (archive.status !== 0) throw new BasePlanError(`git archive ${ref}: ${archive.stderr.toString().trim()}`);
    const unpack = spawnSync('tar', ['-x', '-C', tree], { input: archive.stdout, maxBuffer: 1 << 30 });
    if (unpack.status !== 0) throw new BasePlanError(`unpacking ${ref}: ${unpack.stderr.toString().trim()}`);
    const modules = path.join(tree, 'node_modules');
    fs.rmSync(modules, { recursive: true, force: true });
    fs.symlinkSync(path.join(projectDir, 'node_modules'), modules, 'dir');
    const out = path.join(work, 'plan');
    const planArgs = ['--stack', args.stack, '--out', out];
    if (args.config) {
      const config = path.resolve(args.config);
      const inProject = path.relative(projectDir, config);
      const inside = !inProject.startsWith('..') && !path.isAbsolute(inProject);
      planArgs.push('--config', inside ? path.join(tree, inProject) : config);
    }
    for (const keyFile of args.nodeKeyFiles ?? []) {
      const named = /^([a-z][-a-z0-9]*)=(.+)$/.exec(keyFile);
      planArgs.push('--node-key-file', named ? `${named[1]}=${path.resolve(named[2])}` : path.resolve(keyFile));
    }
    if (args.genesisFile) planArgs.push('--genesis-file', path.resolve(args.genesisFile));
    const run = spawnSync('npm', ['run', '--silent', 'plan', '--', ...planArgs], {
      cwd: tree,
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    const resources = readPlannedResources(out);
    if (!resources || (run.status !== 0 && run.status !== 1)) {
      const stderr = (run.stderr ?? '').split('\n').filter((l) => l && !l.startsWith('npm warn'));
      throw new BasePlanError(
        `the plan at ${ref} failed (exit ${run.status}):\n${stderr.join('\n')}${uncommittedAdvice(git, ref, args)}`,
      );
    }
    return { resources, steps: readRemoteSteps(out) };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

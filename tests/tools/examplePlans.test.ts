/**
 * No setting renamed and no default changed unmeant (first guarding issue 65's items 3 and 4: the network's own guides,
 * the package's API): the example stacks, completed as an operator completes them (testing/examples.ts), plan today
 * exactly as they planned at BASE, planned there by that commit's own plan tool (`git archive` of it, sharing this
 * project's node_modules): `npm run plan -- --diff` finds nothing to create, change or delete. A later change that
 * means to change these plans moves BASE, saying why in its commit.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { STACK_NAMES, StackName } from '../../core/catalog/networks';
import { completedExample, writeProject } from '../../testing/examples';
import { planWorkspace } from '../../testing/planWorkspace';
import { PROJECT_DIR } from '../../testing/run';

jest.setTimeout(5 * 60 * 1000);

/**
 * The last change meant to change these plans: Besu's startup probe asked every 2 s, 300 times (the same 600 s), not
 * every 10 s, 60 times (9a205ae); before it, fe206b1, the commit before issue 65's items 3 and 4.
 */
const BASE = '9a205ae';

const { work, plan } = planWorkspace('lacchain-example-plans-');

/** The example stack `stack` planned by BASE's own tool, into a folder of its own. */
function basePlan(stack: StackName, tree: string): string {
  for (const [file, text] of Object.entries(completedExample(stack))) fs.writeFileSync(path.join(tree, file), text);
  const out = fs.mkdtempSync(path.join(work, `base-${stack}-`));
  const run = spawnSync(process.execPath, ['launcher.js', 'cli/plan', '--stack', stack, '--out', out], {
    cwd: tree,
    encoding: 'utf8',
    timeout: 240_000,
  });
  if (run.status !== 0 && run.status !== 1) throw new Error(`the plan at ${BASE} failed: ${run.stderr}`);
  return out;
}

let tree: string;

beforeAll(() => {
  tree = fs.mkdtempSync(path.join(work, 'base-tree-'));
  const archive = spawnSync('git', ['-C', PROJECT_DIR, 'archive', '--format=tar', BASE], { maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${BASE}: ${archive.stderr} (a clone without that commit?)`);
  const untar = spawnSync('tar', ['-x', '-C', tree], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar: ${untar.stderr}`);
  fs.symlinkSync(path.join(PROJECT_DIR, 'node_modules'), path.join(tree, 'node_modules'), 'dir');
});

it.each(STACK_NAMES)('the %s example stack plans as it did before', (stack) => {
  const base = basePlan(stack, tree);
  const config = writeProject(stack, completedExample(stack), fs.mkdtempSync(path.join(work, `now-${stack}-`)));
  const now = plan(['--stack', stack, '--config', config, '--diff', base]);
  const summary = now.stderr.split('\n').find((line) => line.startsWith('plan diff against'));
  expect(summary).toMatch(/: no changes \([1-9]\d* resources\)$/);
  expect(fs.readFileSync(path.join(now.out, 'diff.txt'), 'utf8')).toBe(`${summary}\n`);
});

/**
 * An interrupted `pulumi up`, followed the documented way (docs/interrupted.md, "After an interrupted pulumi up") with
 * the real Pulumi CLI: an update killed mid-way leaves the stack locked; the next `pulumi up` says so and names
 * `pulumi cancel`; after `pulumi cancel` the re-run goes through. The program is an Automation API inline program
 * (the CLI talks to it through --client: no language host, no provider, which cannot be had here) whose first run
 * never ends, so the test kills the CLI mid-update as a lost terminal or a CI time-out would.
 */
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PROJECT_DIR } from '../../testing/run';
import { CLI_ENV, cliSuite, fileBackendUrl, findPulumiCli, inlineStack, projectCopy, readingBack } from './pulumiCli';

jest.setTimeout(10 * 60 * 1000);
const suite = cliSuite('An interrupted pulumi up (real Pulumi CLI)');

suite('after an interrupted pulumi up', () => {
  const project = projectCopy();
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-interrupted-'));
  const backend = fileBackendUrl(state);
  const stackName = 'interrupted';
  /** The inline program of the runs after the interrupted one: it converges. */
  const program = async () => ({ converged: true });

  /**
   * The interrupted run, the stack's first (it makes the stack, in a new backend): `pulumi up` of an inline program
   * that never ends, hosted by a process of its own (as the operator's `pulumi up` is), so that killing its process
   * group kills the CLI and its program as a lost terminal does.
   */
  function startEndlessUp() {
    const automation = require.resolve('@pulumi/pulumi/automation', { paths: [PROJECT_DIR] });
    const script = `
      const { LocalWorkspace, PulumiCommand } = require(${JSON.stringify(automation)});
      (async () => {
        const stack = await LocalWorkspace.createStack(
          { stackName: ${JSON.stringify(stackName)}, workDir: ${JSON.stringify(project.dir)} },
          {
            program: () => new Promise(() => undefined),
            pulumiCommand: await PulumiCommand.get({ root: ${JSON.stringify(findPulumiCli().cli!.root)} }),
            envVars: ${JSON.stringify({ ...CLI_ENV, PULUMI_BACKEND_URL: backend })},
          },
        );
        await stack.up();
      })();`;
    return spawn(process.execPath, ['-e', script], { detached: true, stdio: 'ignore' });
  }

  afterAll(() => {
    project.remove();
    fs.rmSync(state, { recursive: true, force: true });
  });

  it('the stack stays locked, the next run names pulumi cancel, and after it the re-run converges', async () => {
    const endless = startEndlessUp();
    // Wait until the update runs (its lock taken), then kill it as a lost terminal or a CI time-out would.
    const locks = path.join(state, '.pulumi', 'locks', 'organization', 'lacchain-besu-node', stackName);
    const lockFiles = () => (fs.existsSync(locks) ? fs.readdirSync(locks).filter((f) => f.endsWith('.json')) : []);
    const held = () => lockFiles().length > 0;
    // The update's own lock is the one that stays: making the stack may take one for a moment before it.
    let steady = false;
    for (let i = 0; i < 300 && !steady; i++) {
      const seen = lockFiles()[0];
      await new Promise((resolve) => setTimeout(resolve, seen ? 1500 : 200));
      steady = seen !== undefined && lockFiles().includes(seen);
    }
    expect(steady).toBe(true);
    process.kill(-endless.pid!, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(held()).toBe(true);

    const stack = await inlineStack(stackName, project.dir, state, program);
    // The next run is refused while the lock of the killed one stays, and says what to do.
    const locked = await stack.up().then(
      () => 'went through',
      (error: Error) => error.message,
    );
    expect(locked).toMatch(/the stack is currently locked by 1 lock\(s\)/);
    expect(locked).toMatch(/pulumi cancel/);

    // The documented way: pulumi cancel (after making sure no other update runs), then run pulumi up again.
    const cli = findPulumiCli().cli!.binary;
    execFileSync(cli, ['cancel', '--yes', '--stack', stackName], {
      cwd: project.dir,
      env: { ...process.env, ...CLI_ENV, PULUMI_BACKEND_URL: backend },
      stdio: 'pipe',
    });
    expect(held()).toBe(false);
    const rerun = await readingBack(stack, { outputs: 'values', summary: true }).up();
    expect(rerun.summary.result).toBe('succeeded');
    expect(rerun.outputs.converged.value).toBe(true);
  });
});

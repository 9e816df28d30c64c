/**
 * The engine tier's harness: Pulumi's real engine (the CLI of tests/cli/pulumiCli.ts) with the real Kubernetes
 * provider, against the test API server (testing/cluster/), the program's own entry (program.ts) run as an Automation
 * API inline program (the CLI talks to it through --client: no language host, which cannot be had here), the state in
 * a file backend in a temporary folder.
 *
 * The provider: no release of pulumi-resource-kubernetes can be downloaded here, so tools/pulumi-kubernetes/build.sh
 * (run by tests/setup.sh) builds it from the one commit of its Go module the module proxy serves (the pseudo-version
 * `kubernetesProvider` of testing/cluster/versions.json) and it is installed, in a PULUMI_HOME of the test's own, as
 * the plugin version the program declares (@pulumi/kubernetes's). So the engine runs that commit's provider under
 * the name `kubernetes` PLUGIN_VERSION; PROVIDER_COMMIT says which commit it really is.
 *
 * Without the CLI or the provider the tier is skipped with the reason printed; under CI=true it fails instead.
 */
import { ChildProcess, execFileSync, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { EngineEvent, LocalWorkspace, PulumiFn, Stack, UpResult } from '@pulumi/pulumi/automation';
import { MOVE_HOLD_VARIABLE, MOVING_NODE_VARIABLE } from '../../core/catalog/move';
import { NetworkName } from '../../core/catalog/networks';
import { TEST_GENESIS_FILE } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';
import { CLI_ENV, fileBackendUrl, findPulumiCli, projectCopy, pulumiCommand, readingBack } from '../cli/pulumiCli';

/** The plugin version the program declares, as which the built provider is installed. */
export const PLUGIN_VERSION: string = JSON.parse(
  fs.readFileSync(require.resolve('@pulumi/kubernetes/package.json'), 'utf8'),
).version;
/** The provider's Go module version (a pseudo-version: the module proxy serves no tagged release of it). */
export const PROVIDER_MODULE_VERSION: string = JSON.parse(
  fs.readFileSync(path.join(PROJECT_DIR, 'testing', 'cluster', 'versions.json'), 'utf8'),
).kubernetesProvider;
/** The commit of pulumi/pulumi-kubernetes the provider is built from (the pseudo-version's last part). */
export const PROVIDER_COMMIT = PROVIDER_MODULE_VERSION.split('-').pop()!;

/** The built provider (tools/pulumi-kubernetes/build.sh --check: built by tests/setup.sh), or why there is none. */
function findProvider(): { binary?: string; reason?: string } {
  const result = spawnSync('bash', [path.join(PROJECT_DIR, 'tools', 'pulumi-kubernetes', 'build.sh'), '--check'], {
    cwd: PROJECT_DIR,
    encoding: 'utf8',
  });
  if (result.status === 0) return { binary: result.stdout.trim() };
  return { reason: result.stderr.trim().split('\n').pop() || `build.sh --check exited ${result.status}` };
}

/** `describe` when the CLI and the provider can be had; else `describe.skip` with the reason (an error under CI=true). */
export function engineSuite(what: string): { describe: jest.Describe; provider: () => string } {
  const cli = findPulumiCli();
  const provider = cli.cli ? findProvider() : {};
  const reason = cli.reason ?? provider.reason;
  if (reason === undefined) return { describe, provider: () => provider.binary! };
  console.warn(`${what} skipped: ${reason}`);
  if (process.env.CI === 'true') throw new Error(`${what} cannot run in CI: ${reason}`);
  return { describe: describe.skip, provider: () => '' };
}

/**
 * The step every run of index.ts takes before it declares a node (components/lastPlaces.ts): it reads the stack's own
 * last `nodes` output through a StackReference. A read, not a change: the engine counts it as `read`, never as a
 * create, update, replace or delete; set aside only as that one read of that one resource.
 */
export const LAST_RUN_READ = 'read pulumi:pulumi:StackReference last-run';

/**
 * The resource changes the engine counted for a run of index.ts (its summary's `resourceChanges`, or a preview's
 * `changeSummary`), its one read of its own last outputs (LAST_RUN_READ) set aside: a count of reads other than one
 * is kept, so a claim of "nothing changes" still fails on anything else the run did.
 */
export function changesBesideLastRunRead(counts: Record<string, number> | undefined): Record<string, number> {
  const { read, ...rest } = counts ?? {};
  return read === 1 ? rest : { ...counts };
}

/** A resource's name in its URN (`urn:pulumi:<stack>::<project>::<type chain>::<name>`). */
const nameOf = (urn: string) => urn.split('::').pop()!;

/**
 * `pulumi up` of `stack`, and the steps the engine took other than `same`, each as `<op> <type> <name>` (a plain run
 * that changes nothing: [LAST_RUN_READ]). The result holds the run's summary and the outputs' values (readingBack).
 */
export async function upStepsOf(stack: Stack): Promise<{ result: UpResult; steps: string[] }> {
  const steps: string[] = [];
  const result = await readingBack(stack, { outputs: 'values', summary: true }).up({
    onEvent: (event: EngineEvent) => {
      const step = event.resourcePreEvent?.metadata;
      if (step && step.op !== 'same') steps.push(`${step.op} ${step.type} ${nameOf(step.urn)}`);
    },
  });
  return { result, steps };
}

/**
 * `pulumi up` of `stack` as `npm run node -- move --to-kubernetes` runs it (pulumiUpInCluster): MOVING_NODE_VARIABLE
 * naming `node`, and the first run, `held`, MOVE_HOLD_VARIABLE too. The inline program runs in this process: the
 * variables are set here for the run, then removed. The result holds the run's summary, not the stack's outputs.
 */
export async function upAsMove(stack: Stack, node: string, held: boolean): Promise<UpResult> {
  process.env[MOVING_NODE_VARIABLE] = node;
  if (held) process.env[MOVE_HOLD_VARIABLE] = node;
  try {
    return await readingBack(stack, { outputs: false, summary: true }).up();
  } finally {
    delete process.env[MOVING_NODE_VARIABLE];
    delete process.env[MOVE_HOLD_VARIABLE];
  }
}

/**
 * Makes `stack`'s state the one a last run left whose `nodes` output put each node at `places` (`pulumi stack import`
 * of the Stack resource alone): a node deployed where this tier cannot deploy one (a machine: no command provider
 * here), as the program reads it back (LAST_RUN_READ).
 */
export async function lastRunAt(stack: Stack, places: Record<string, string>): Promise<void> {
  const { name: projectName } = await stack.workspace.projectSettings();
  const empty = await stack.exportStack();
  const stackUrn = `urn:pulumi:${stack.name}::${projectName}::pulumi:pulumi:Stack::${projectName}-${stack.name}`;
  const nodes = Object.fromEntries(Object.entries(places).map(([node, place]) => [node, { place }]));
  await stack.importStack({
    ...empty,
    deployment: {
      ...empty.deployment,
      resources: [{ urn: stackUrn, custom: false, type: 'pulumi:pulumi:Stack', outputs: { nodes } }],
    },
  });
}

/** The test genesis served on the loopback, as a network's genesis is served from its URL. */
export async function serveGenesis(): Promise<{ url: string; close(): Promise<void> }> {
  const text = fs.readFileSync(TEST_GENESIS_FILE);
  const server = http.createServer((request, response) => {
    if (request.url === '/genesis.json') response.writeHead(200, { 'content-type': 'application/json' }).end(text);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/genesis.json`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A run hosted by a process of its own. */
export interface StartedRun {
  running(): boolean;
  /** Its exit code once it has ended. */
  ended(): Promise<number | null>;
  /** What its process wrote on standard error. */
  stderr(): string;
  /** Kills (SIGKILL) its process and every process under it, whatever their process group; how many it killed. */
  kill(): number;
}

/** Sends SIGKILL to `pid`; false when it had already ended. */
function killNow(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/** The processes under `pid` (children, theirs, ...), from the process table. */
function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number));
  const under = (parent: number): number[] =>
    table.filter(([, ppid]) => ppid === parent).flatMap(([child]) => [child, ...under(child)]);
  return under(pid);
}

/** What the runs of one project share: its folder, the CLI's home and backend, their environment. */
export interface EngineProject {
  /** The project folder (Pulumi.yaml, the stack file, values/). */
  dir: string;
  /** The CLI's environment: the backend, PULUMI_HOME with the provider, no plugin download, the cluster's kubeconfig. */
  env: Record<string, string>;
  pulumiHome: string;
  /** The stack `name`, run by the real CLI with `program` inline: made by the first call, selected by the next. */
  stack(name: string, program: PulumiFn): Promise<Stack>;
  /** The real CLI in the project folder, with the project's environment; its standard output. */
  cli(args: string[]): string;
  /**
   * `pulumi up` of stack `name` hosted by a process of its own (as an operator's `pulumi up` is), its engine events
   * written as JSON lines to `events`, its error (the CLI's output) to `<events>.stderr`. A run the program ends with
   * an error must run so: in the test's process, the SDK would also report that error as the test file's own.
   */
  startUp(
    name: string,
    network: NetworkName,
    genesisUrl: string,
    events: string,
    options?: { refresh?: boolean },
  ): StartedRun;
  remove(): void;
}

/**
 * A project folder (a copy of the project's Pulumi files and values/) with a file backend and a PULUMI_HOME in a
 * temporary folder, the provider installed there as plugin `kubernetes` PLUGIN_VERSION.
 */
export function engineProject(providerBinary: string, kubeconfig: string): EngineProject {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-engine-'));
  const project = projectCopy();
  const pulumiHome = path.join(root, 'pulumi-home');
  const state = path.join(root, 'state');
  fs.mkdirSync(state);
  const cli = findPulumiCli().cli!;
  const env = {
    ...CLI_ENV,
    PULUMI_HOME: pulumiHome,
    PULUMI_BACKEND_URL: fileBackendUrl(state),
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
    KUBECONFIG: kubeconfig,
  };
  const run = (args: string[]) =>
    execFileSync(cli.binary, args, { cwd: project.dir, env: { ...process.env, ...env }, encoding: 'utf8' });
  run(['plugin', 'install', 'resource', 'kubernetes', PLUGIN_VERSION, '--file', providerBinary]);
  const started: ChildProcess[] = [];
  // The stacks made in this project's backend (a new folder: no other), so that a new one is made by `pulumi stack
  // init` alone, not after a `pulumi stack select` that fails (createOrSelectStack).
  const made = new Set<string>();
  return {
    dir: project.dir,
    env,
    pulumiHome,
    cli: run,
    stack: async (name, program) => {
      const args = { stackName: name, workDir: project.dir };
      const options = { program, pulumiHome, pulumiCommand: await pulumiCommand(), envVars: env };
      if (made.has(name)) return LocalWorkspace.selectStack(args, options);
      const stack = await LocalWorkspace.createStack(args, options);
      made.add(name);
      return stack;
    },
    startUp: (name, network, genesisUrl, events, options = {}) => {
      const script = `
        require('ts-node').register({ transpileOnly: true, project: ${JSON.stringify(path.join(PROJECT_DIR, 'tsconfig.json'))} });
        const fs = require('fs');
        // The program's own error (a settings problem, a refusal) also reaches Node as an unhandled rejection: say it,
        // and wait for the CLI to end the run.
        process.on('unhandledRejection', (error) => process.stderr.write(String(error && error.message) + '\\n'));
        const { LocalWorkspace, PulumiCommand } = require('@pulumi/pulumi/automation');
        const { engineProgram } = require(${JSON.stringify(path.join(__dirname, 'program.ts'))});
        const { readingBack } = require(${JSON.stringify(path.join(__dirname, '..', 'cli', 'pulumiCli.ts'))});
        (async () => {
          const stack = await LocalWorkspace.createOrSelectStack(
            { stackName: ${JSON.stringify(name)}, workDir: ${JSON.stringify(project.dir)} },
            {
              program: engineProgram(${JSON.stringify(network)}, ${JSON.stringify(genesisUrl)}, ${JSON.stringify(project.dir)}),
              pulumiHome: ${JSON.stringify(pulumiHome)},
              pulumiCommand: await PulumiCommand.get({ root: ${JSON.stringify(cli.root)} }),
              envVars: ${JSON.stringify(env)},
            },
          );
          // Its exit code, its error and its events are what is read of it: not its outputs or summary.
          await readingBack(stack, { outputs: false, summary: false }).up({
            refresh: ${JSON.stringify(options.refresh === true)},
            onEvent: (event) => fs.appendFileSync(${JSON.stringify(events)}, JSON.stringify(event) + '\\n'),
          });
        })().catch((error) => {
          process.stderr.write(error.message);
          process.exitCode = 1;
        });`;
      // The program's process has the test process's environment, as the in-process runs have (the SDK reads some of
      // it, KUBECONFIG among them, into the provider's inputs); the CLI gets the project's on top.
      const stderr = `${events}.stderr`;
      const child = spawn(process.execPath, ['-e', script], {
        cwd: PROJECT_DIR,
        detached: true,
        stdio: ['ignore', 'ignore', fs.openSync(stderr, 'a')],
      });
      started.push(child);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      return {
        running: () => child.exitCode === null && child.signalCode === null,
        ended: () => exited,
        stderr: () => (fs.existsSync(stderr) ? fs.readFileSync(stderr, 'utf8') : ''),
        kill: () => {
          return [child.pid!, ...descendants(child.pid!)].filter(killNow).length;
        },
      };
    },
    remove: () => {
      for (const child of started) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        [child.pid!, ...descendants(child.pid!)].forEach(killNow);
      }
      project.remove();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * The real Pulumi CLI in the tests: the one on PATH, or the one tools/pulumi-cli/build.sh builds from its Go module
 * into a cache outside the work tree (see that script). CI must run these tests; elsewhere, without a CLI and without
 * Go, they are skipped with the reason printed.
 */
import { execFile, spawnSync } from 'child_process';
import { ConfigValue, LocalWorkspace, OutputMap, PulumiCommand, PulumiFn, Stack } from '@pulumi/pulumi/automation';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { promisify } from 'util';
import * as yaml from 'js-yaml';
import { PROJECT_DIR } from '../../testing/run';

/** The CLI found or built: its binary, and the install root the Automation API expects (`<root>/bin/pulumi`). */
export interface PulumiCli {
  binary: string;
  root: string;
}

let found: { cli?: PulumiCli; reason?: string } | undefined;

/** Finds (or builds, about 5 minutes cold) the Pulumi CLI; undefined with a reason when there is none to be had. */
export function findPulumiCli(): { cli?: PulumiCli; reason?: string } {
  if (found) return found;
  const result = spawnSync('bash', [path.join(PROJECT_DIR, 'tools', 'pulumi-cli', 'build.sh')], {
    cwd: PROJECT_DIR,
    encoding: 'utf8',
    timeout: 30 * 60 * 1000,
  });
  if (result.status === 0) {
    const binary = fs.realpathSync(result.stdout.trim());
    found = { cli: { binary, root: path.dirname(path.dirname(binary)) } };
  } else {
    found = { reason: result.stderr.trim().split('\n').pop() || `build.sh exited ${result.status}` };
  }
  return found;
}

let command: Promise<PulumiCommand> | undefined;

/**
 * The CLI as the Automation API runs it, asked for once per process (each test file: jest's module registry):
 * PulumiCommand.get runs `pulumi version` every time (about 0.17 s of a core), and a file's stacks all run one CLI.
 */
export function pulumiCommand(): Promise<PulumiCommand> {
  command ??= PulumiCommand.get({ root: findPulumiCli().cli!.root });
  return command;
}

/** What a run's result holds that the SDK asks the CLI for once more after the run. */
export interface ReadBack {
  /**
   * The stack's outputs (`up` only): two `pulumi stack output` runs, masked and in plain text, to tell which are
   * secrets; `values`: their values alone, one run (in plain text), each output's `secret` left undefined.
   */
  outputs: boolean | 'values';
  /** The run's summary (`up`, `refresh`, `destroy`): one `pulumi stack history`. */
  summary: boolean;
}

/**
 * `stack` (a view of it: the stack itself is left as it is) whose `up`, `refresh` and `destroy` read back only what the
 * caller reads of their result: a field not `wanted` is left out of the result (undefined) and its runs are not made.
 */
export function readingBack(stack: Stack, wanted: ReadBack): Stack {
  const view: Stack = Object.create(stack);
  if (!wanted.outputs) view.outputs = async () => ({});
  if (wanted.outputs === 'values') view.outputs = () => outputValues(stack);
  if (!wanted.summary) view.info = async () => undefined;
  return view;
}

/** `stack`'s outputs in plain text (`pulumi stack output --json --show-secrets`), which are secrets not asked. */
async function outputValues(stack: Stack): Promise<OutputMap> {
  const workspace = stack.workspace as LocalWorkspace;
  const env = { ...(workspace.pulumiHome ? { PULUMI_HOME: workspace.pulumiHome } : {}), ...workspace.envVars };
  const args = ['stack', 'output', '--json', '--show-secrets', '--stack', stack.name, '--non-interactive'];
  const { stdout } = await promisify(execFile)(workspace.pulumiCommand.command, args, {
    cwd: workspace.workDir,
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  const values: Record<string, unknown> = JSON.parse(stdout);
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, { value, secret: undefined as unknown as boolean }]),
  );
}

/**
 * Sets `values` in `stack`'s config in one `pulumi config set-all` (with `--path`: each key a path), as that many
 * `pulumi config set` runs would, one after another.
 */
export async function setConfigs(stack: Stack, values: Record<string, ConfigValue>, path: boolean): Promise<void> {
  if (Object.keys(values).length > 0) await stack.setAllConfig(values, path);
}

/** `describe` when the CLI can be had; otherwise `describe.skip` with the reason (an error under CI=true). */
export function cliSuite(what: string): jest.Describe {
  const { cli, reason } = findPulumiCli();
  if (cli) return describe;
  console.warn(`${what} skipped: ${reason}`);
  if (process.env.CI === 'true') throw new Error(`${what} cannot run in CI: ${reason}`);
  return describe.skip;
}

/** cliSuite for a suite that also makes system users, which needs root: without it skipped (an error under CI=true). */
export function asNewUserSuite(what: string): jest.Describe {
  if (process.getuid?.() === 0) return cliSuite(what);
  console.warn(`${what} skipped: creating a user with a fresh home folder needs root`);
  if (process.env.CI === 'true') throw new Error(`${what} cannot run in CI: run as root`);
  return describe.skip;
}

/** Environment for the CLI in tests: no update check, no telemetry, a throwaway passphrase. */
export const CLI_ENV = {
  PULUMI_SKIP_UPDATE_CHECK: 'true',
  PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: 'true',
  PULUMI_CONFIG_PASSPHRASE: 'a passphrase only these tests use',
};

/** The project's Pulumi files: Pulumi.yaml and the stack files. */
const PULUMI_FILE = /^Pulumi(\.[\w-]+)?\.yaml$/;

/**
 * A temporary folder holding a copy of the project's Pulumi files (and any extra files, which may be stack files made
 * from the project's), removed by `remove`. The stack files lose the operator's own secrets provider (made by their
 * `pulumi stack select --create`, with their passphrase): the tests' stacks get their own.
 */
export function projectCopy(extra: Record<string, string> = {}): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-cli-'));
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    const own = PULUMI_FILE.test(file)
      ? text.replace(/^(encryptionsalt|encryptedkey|secretsprovider):.*\n?/gm, '')
      : text;
    fs.writeFileSync(path.join(dir, file), own);
  };
  for (const file of fs.readdirSync(PROJECT_DIR).filter((f) => PULUMI_FILE.test(f))) {
    write(file, fs.readFileSync(path.join(PROJECT_DIR, file), 'utf8'));
  }
  fs.cpSync(path.join(PROJECT_DIR, 'values'), path.join(dir, 'values'), { recursive: true });
  for (const [file, text] of Object.entries(extra)) write(file, text);
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** The project's file backend (Pulumi.yaml's backend.url) in `folder`: the same options (its query), another place. */
export function fileBackendUrl(folder: string): string {
  const project = yaml.load(fs.readFileSync(path.join(PROJECT_DIR, 'Pulumi.yaml'), 'utf8')) as {
    backend: { url: string };
  };
  const query = project.backend.url.split('?')[1];
  return `file://${folder}${query ? `?${query}` : ''}`;
}

/**
 * A stack of the project in `dir`, run by the real CLI as an Automation API inline program (the CLI talks to it
 * through --client, no language host needed), with its state in the folder `stateFolder` (fileBackendUrl).
 */
export async function inlineStack(
  stackName: string,
  dir: string,
  stateFolder: string,
  program: PulumiFn,
): Promise<Stack> {
  return LocalWorkspace.createOrSelectStack(
    { stackName, workDir: dir },
    {
      program,
      pulumiCommand: await pulumiCommand(),
      envVars: { ...CLI_ENV, PULUMI_BACKEND_URL: fileBackendUrl(stateFolder) },
    },
  );
}

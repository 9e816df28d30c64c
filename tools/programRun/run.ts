/**
 * Runs the program the way `pulumi up` runs it for this project, outside `pulumi up`: `node
 * …/@pulumi/pulumi/cmd/run` with the language host's flags and environment (TypeScript through ts-node, the config
 * as the engine hands it), against the engine stand-in (engineStandIn.ts), with entry.ts as the program: loaded by
 * main.js as Pulumi.yaml has the language host load the program (its build when current, JavaScript, no ts-node), or,
 * for comparison, through ts-node as TypeScript (how it was run before the build, and how an older tree runs). The
 * benchmark times it (bench/programRun.ts); a test checks how the program is run (tests/tools/programRun.test.ts).
 */
import { spawn } from 'child_process';
import * as path from 'path';
import { startEngineStandIn } from './engineStandIn';

/** The entry run as `pulumi up` runs the program (main.js's way), relative to the project folder. */
const RUN_ENTRY = path.join('tools', 'programRun', 'main.js');
/** The entry's TypeScript source, run through ts-node (`throughTsNode`). */
export const RUN_ENTRY_SOURCE = path.join('tools', 'programRun', 'entry.ts');

/** The stack's own resource, which the runtime registers before it loads the program. */
const STACK_TYPE = 'pulumi:pulumi:Stack';

/** One run of the program. */
export interface ProgramRun {
  /** Seconds from process start to the stack's outputs registered: every resource declared. */
  declaredSeconds: number;
  /**
   * Seconds from process start to the first resource the program itself registers (after the stack, which the
   * runtime registers before it loads the program): what it spends loading and reading the settings.
   */
  firstResourceSeconds: number;
  /** Seconds from process start to its exit. */
  exitSeconds: number;
  /** Resources registered (the stack and components included). */
  resources: number;
  /** The stack outputs the program registered. */
  outputs: Record<string, unknown>;
}

/** What to run: the project folder, the engine's config (every value a string), the genesis file, more env. */
export interface RunOptions {
  dir: string;
  stack: string;
  config: Record<string, string>;
  secretKeys: string[];
  genesisFile: string;
  env?: NodeJS.ProcessEnv;
  /** Run the TypeScript entry through ts-node (the language host's `typescript: true`) instead of main.js. */
  throughTsNode?: boolean;
}

/** A run that failed: the program's errors as the engine got them, and what it registered before. */
export class ProgramRunError extends Error {
  constructor(
    readonly code: number,
    /** The errors the program logged to the engine (a RunError's message). */
    readonly errors: string[],
    /** The resources registered before it failed (the stack's own first). */
    readonly resources: { type: string; name: string }[],
    stderr: string,
    /** Seconds from process start to its first error logged to the engine. */
    readonly errorSeconds?: number,
  ) {
    super(`the program failed (exit ${code}): ${errors.join('; ') || stderr.slice(-2000)}`);
    this.name = 'ProgramRunError';
  }
}

/** Runs the program once; throws ProgramRunError with the program's errors when it fails. */
export async function runProgram(options: RunOptions): Promise<ProgramRun> {
  const engine = await startEngineStandIn();
  try {
    engine.start();
    const started = process.hrtime.bigint();
    const runner = path.join(options.dir, 'node_modules', '@pulumi', 'pulumi', 'cmd', 'run');
    const child = spawn(
      process.execPath,
      [
        runner,
        `--monitor=${engine.address}`,
        `--engine=${engine.address}`,
        '--project=lacchain-besu-node',
        `--stack=${options.stack}`,
        `--pwd=${options.dir}`,
        '--organization=organization',
        options.throughTsNode ? RUN_ENTRY_SOURCE : RUN_ENTRY,
      ],
      {
        cwd: options.dir,
        env: {
          ...process.env,
          ...options.env,
          PULUMI_NODEJS_TYPESCRIPT: options.throughTsNode ? 'true' : 'false',
          PULUMI_CONFIG: JSON.stringify(options.config),
          PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(options.secretKeys),
          LACCHAIN_RUN_GENESIS: options.genesisFile,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    const timeout = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const code = await exited;
    clearTimeout(timeout);
    const exitSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const run = engine.run;
    if (run.doneMs === undefined || run.errors.length > 0 || code !== 0) {
      const errorSeconds = run.firstErrorMs === undefined ? undefined : run.firstErrorMs / 1000;
      throw new ProgramRunError(code, run.errors, run.resources, stderr, errorSeconds);
    }
    return {
      declaredSeconds: run.doneMs / 1000,
      firstResourceSeconds: (run.resources.find((r) => r.type !== STACK_TYPE)?.atMs ?? run.doneMs) / 1000,
      exitSeconds,
      resources: run.resources.length,
      outputs: run.outputs ?? {},
    };
  } finally {
    await engine.stop();
  }
}

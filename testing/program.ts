/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Declaring the program in tests: settings from in-memory files, the recording engine, the test genesis.
 */
import { randomBytes } from 'crypto';
import * as pulumi from '@pulumi/pulumi';
import * as yaml from 'js-yaml';
import { loadStack } from '../core/settings/load';
import type { LoadedStack } from '../core/settings/load';
import type { StackOutputs } from '../program';
import { deterministicHex, RecordedResource, settle, startRecording, unwrapSecrets } from '../tools/recording/engine';
import { memoryFiles, rawConfig, testGenesisText } from './fixtures';
import { PROGRAM_TYPES } from './pulumi';

/** One declaration of the program: the settings, the outputs and the resources it declared. */
export interface Declared {
  loaded: LoadedStack;
  outputs: StackOutputs;
  resources: RecordedResource[];
}

/** Finds the one recorded resource of a type and name. */
export function resource(declared: Declared, type: string, name: string): RecordedResource {
  const found = declared.resources.filter((r) => r.type === type && r.name === name);
  if (found.length !== 1) throw new Error(`expected one ${type} ${name}, found ${found.length}`);
  return found[0];
}

/** A resource's inputs with secrets unwrapped. */
export function inputsOf(declared: Declared, type: string, name: string): Record<string, any> {
  return unwrapSecrets(resource(declared, type, name).inputs) as Record<string, any>;
}

/**
 * Declares the program for a stack from in-memory settings and waits until every resource is registered.
 * `recorded` is the list the recording engine fills (see recordProgram).
 */
export async function declareProgram(
  recorded: RecordedResource[],
  stack: string,
  config: Record<string, unknown>,
  files: Record<string, unknown>,
): Promise<Declared> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { declareStack } = require('../program') as typeof import('../program');
  const texts = Object.fromEntries(
    Object.entries(files).map(([f, v]) => [f, typeof v === 'string' ? v : yaml.dump(v)]),
  );
  const loaded = loadStack(stack, rawConfig(config, `Pulumi.${stack}.yaml`), memoryFiles(texts));
  const start = recorded.length;
  // The secrets as the program's entry point wraps them.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { secretInputs } = require('../components/pulumiSettings') as typeof import('../components/pulumiSettings');
  const outputs = declareStack(loaded.settings, secretInputs(loaded), { genesis: () => testGenesisText() });
  for (const node of Object.values(outputs.nodes)) {
    for (const value of Object.values(node)) if (pulumi.Output.isInstance(value)) await settle(value);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  return { loaded, outputs, resources: recorded.slice(start) };
}

/** What the engine knows of a run of the program beyond the inputs (see recordRun). */
export interface RunOutputs {
  /** The stack the program sees (default testnet). */
  stack?: string;
  /**
   * Preview semantics: every output not given here stays unknown, as in `pulumi preview` or as the part of `pulumi up`
   * that runs before the commands it waits for have run.
   */
  preview: boolean;
  /**
   * The standard output of node-key Commands (`<node>-node-key`), by resource name, as the engine records it once the
   * command ran (a machine holding its own key prints its public key there, which the program reads back).
   */
  nodeKeyStdout?: Record<string, string>;
  /**
   * The random bytes the state holds, as hex, by RandomBytes resource name, where they are not the deterministic ones
   * recordProgram gives: a `pulumi up --replace` of that resource made them anew (replacedRandomBytes), and every later
   * run reads them from the state.
   */
  randomBytes?: Record<string, string>;
}

/**
 * Starts recording as the engine runs the program, for one declaration (declareProgram): deterministic random bytes
 * as recordProgram gives them, and what `outputs` says of the remote Commands. The recording engine gives a Command no
 * stdout of its own (it runs nothing); the real engine records it after the command ran, so a declaration that reads
 * one back (key custody machine) is declared twice: once before the node-key step ran, with preview semantics (its
 * stdout unknown, as are the steps and outputs made from it), then with the stdout that step printed. Not as an update
 * without the stdout: a known but empty stdout holds no public key, and the program then fails, as it should after a
 * real run (machinePublicKeyOf).
 */
export function recordRun(outputs: RunOutputs): RecordedResource[] {
  return startRecording({
    project: 'lacchain-besu-node',
    stack: outputs.stack ?? 'testnet',
    preview: outputs.preview,
    knownTypes: PROGRAM_TYPES,
    outputsFor: (resource) => {
      if (resource.type === 'random:index/randomBytes:RandomBytes') {
        const hex =
          outputs.randomBytes?.[resource.name] ?? deterministicHex(resource.name, Number(resource.inputs.length));
        return { hex, base64: Buffer.from(hex, 'hex').toString('base64') };
      }
      const stdout = outputs.nodeKeyStdout?.[resource.name];
      if (resource.type === 'command:remote:Command' && resource.name.endsWith('-node-key') && stdout !== undefined) {
        return { stdout };
      }
      return undefined;
    },
  });
}

/**
 * What `pulumi stack --show-urns` lists of the resources `declared` holds (one `URN:` line each, as the CLI prints
 * them): each URN as the engine names it, `urn:pulumi:<stack>::<project>::<type chain>::<name>`, the type chain the
 * types of its parents (a component's children's) down to its own, joined by `$`; the stack itself is no part of it.
 */
export function stackUrnListing(declared: Declared, stack: string, project = 'lacchain-besu-node'): string {
  // A parent is a component (a resource of the provider's never is one here): its name is unique among them.
  const byName = new Map(declared.resources.filter((r) => !r.custom).map((r) => [r.name, r]));
  const typeChain = (r: RecordedResource): string => {
    const parent = r.options.parent === undefined ? undefined : byName.get(r.options.parent);
    return parent ? `${typeChain(parent)}$${r.type}` : r.type;
  };
  return declared.resources
    .map((r) => `    │  URN: urn:pulumi:${stack}::${project}::${typeChain(r)}::${r.name}`)
    .join('\n');
}

/**
 * The state's random bytes after `pulumi up --replace` of each of `urns` (a RandomBytes resource's): new bytes, made
 * here as the random provider makes them (crypto.randomBytes), added to `state` (RunOutputs.randomBytes) by the
 * resource name; the length is the resource's declared one.
 */
export function replacedRandomBytes(
  declared: Declared,
  urns: readonly string[],
  state: Record<string, string> = {},
): Record<string, string> {
  const next = { ...state };
  for (const urn of urns) {
    const name = urn.split('::').pop()!;
    const length = Number(resource(declared, 'random:index/randomBytes:RandomBytes', name).inputs.length);
    next[name] = randomBytes(length).toString('hex');
  }
  return next;
}

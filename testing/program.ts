/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Declaring the program in tests: settings from in-memory files, the recording engine, the test genesis.
 */
import * as pulumi from '@pulumi/pulumi';
import * as yaml from 'js-yaml';
import { loadStack } from '../core/settings/load';
import type { LoadedStack } from '../core/settings/load';
import type { StackOutputs } from '../program';
import { RecordedResource, settle, unwrapSecrets } from '../tools/recording/engine';
import { memoryFiles, rawConfig, testGenesisText } from './fixtures';

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

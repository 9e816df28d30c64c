/**
 * Reading the stack's settings inside `pulumi up`: the raw config from the engine, validated by the core loader.
 * Bad settings end the run with the loader's message and no stack trace (pulumi.RunError).
 */
import * as path from 'path';
import * as pulumi from '@pulumi/pulumi';
import { loadStack, LoadedStack } from '../core/settings/load';
import { SettingsError } from '../core/settings/problems';
import { readFileFromDisk } from '../core/settings/yamlFile';
import type { StackSecretInputs } from '../program';

/** The config file name Pulumi reads for a stack. */
export function stackConfigFileName(stack: string): string {
  return `Pulumi.${stack}.yaml`;
}

/** The engine's config as `namespace:key` → value (objects and lists decoded from their JSON form). */
export function engineConfig(): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(pulumi.runtime.allConfig())) {
    values[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
  }
  return values;
}

/** Loads and validates the current stack's settings, or ends the run with every problem listed. */
export function loadPulumiStack(projectDir: string = process.cwd()): LoadedStack {
  const stack = pulumi.getStack();
  try {
    return loadStack(
      stack,
      { file: stackConfigFileName(stack), baseDir: path.resolve(projectDir), values: engineConfig() },
      readFileFromDisk,
    );
  } catch (error) {
    if (error instanceof SettingsError) {
      throw new pulumi.RunError(`the settings of stack ${stack} cannot be deployed:\n${error.message}`);
    }
    throw error;
  }
}

/** The secret settings wrapped as Pulumi secrets. */
export function secretInputs(loaded: LoadedStack): StackSecretInputs {
  const { sshPrivateKey, nodeKeys, rpcPasswords } = loaded.secrets;
  return {
    sshPrivateKey: sshPrivateKey === undefined ? undefined : pulumi.secret(sshPrivateKey),
    nodeKeys: Object.fromEntries(Object.entries(nodeKeys).map(([name, key]) => [name, pulumi.secret(key)])),
    rpcPasswords: Object.fromEntries(Object.entries(rpcPasswords ?? {}).map(([user, pw]) => [user, pulumi.secret(pw)])),
  };
}

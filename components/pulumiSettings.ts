/**
 * Reading the stack's settings inside `pulumi up`: the raw config from the engine, validated by the core loader.
 * Bad settings end the run with the loader's message and no stack trace (pulumi.RunError).
 */
import * as path from 'path';
import * as pulumi from '@pulumi/pulumi';
import { stackConfigFileName } from '../core/catalog/defaults';
import { loadStack, LoadedStack } from '../core/settings/load';
import { SettingsError } from '../core/settings/problems';
import { readFileFromDisk, readStackConfigFile } from '../core/settings/settingsFiles';
import { enforceProgramRules, PolicyViolationError } from '../policy/programRules';
import type { EngineConfig } from '../core/settings/engineConfig';
import { agentProblem } from '../core/catalog/sshLogin';
import { agentKeysProblem, agentLoginProblem } from './sshAgent';
import { stopRun } from './runStop';

/** The SDK's own record of which config keys are secret (runtime/config.js; not in its type declarations). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtimeConfig = require('@pulumi/pulumi/runtime/config') as { isConfigSecret(key: string): boolean };

/** The engine's config as it reaches the program: every value a string, and the keys that are secret. */
export function engineConfig(): EngineConfig {
  const values = pulumi.runtime.allConfig();
  return { values, secretKeys: Object.keys(values).filter((key) => runtimeConfig.isConfigSecret(key)) };
}

/**
 * Loads and validates the current stack's settings, and checks them against the mandatory policy rules they decide
 * (policy/programRules.ts: on every run, with or without `--policy-pack`), or ends the run before anything is
 * declared, with every settings problem listed, or else every rule they break as the policy pack words it; or, for a
 * stack that logs in to its SSH nodes with the ssh agent, when the environment names no agent (SSH_AUTH_SOCK), or
 * one that does not answer or holds no key, or (before an update) none that a machine takes (sshAgent.ts).
 */
export function loadPulumiStack(projectDir: string = process.cwd()): LoadedStack {
  const stack = pulumi.getStack();
  const file = stackConfigFileName(stack);
  try {
    const loaded = loadStack(
      stack,
      {
        file,
        baseDir: path.resolve(projectDir),
        ...engineConfig(),
        plainSecretPaths: plainSecretPaths(projectDir, file),
      },
      readFileFromDisk,
    );
    enforceProgramRules(loaded.settings);
    // The agent is the default login (docs/ssh.md#logging-in): without one, say so before anything is declared.
    const machines = loaded.settings.nodes.filter((n) => n.target === 'ssh');
    const sshNodes = machines.map((n) => n.name);
    const withAgent = loaded.settings.sshAuthentication === 'agent';
    const noAgent =
      agentProblem(file, loaded.settings.sshAuthentication, sshNodes, process.env) ??
      (withAgent ? agentKeysProblem(sshNodes, process.env) : undefined) ??
      // A preview logs in nowhere: the machines are asked only before an update.
      (withAgent && !pulumi.runtime.isDryRun() ? agentLoginProblem(machines, process.env) : undefined);
    if (noAgent !== undefined) {
      throw stopRun(`the stack ${stack} cannot log in to its machines: ${noAgent}`);
    }
    return loaded;
  } catch (error) {
    if (error instanceof SettingsError) {
      throw stopRun(`the settings of stack ${stack} cannot be deployed:\n${error.message}`);
    }
    if (error instanceof PolicyViolationError) {
      throw stopRun(
        `the settings of stack ${stack} cannot be deployed: they break mandatory policy rules (checked on every pulumi up, before anything is created or changed):\n${error.message}`,
      );
    }
    throw error;
  }
}

/**
 * The engine marks only whole keys secret: a plain value beside an encrypted one in the same mapping (say
 * `lacchain:nodeKeys.validator` next to an encrypted `lacchain:nodeKeys.writer`) shows only in the stack file.
 */
function plainSecretPaths(projectDir: string, file: string): readonly string[] {
  try {
    return readStackConfigFile(path.join(projectDir, file)).plainSecretPaths ?? [];
  } catch {
    return []; // no stack file (config from elsewhere), or one the engine read but we cannot: the engine's view rules
  }
}

/** The secret settings, as Pulumi inputs (secret outputs under `pulumi up`). */
export interface StackSecretInputs {
  /** The SSH private key for SSH nodes. */
  sshPrivateKey?: pulumi.Input<string>;
  /** Imported node private keys by node name. */
  nodeKeys: Record<string, pulumi.Input<string>>;
  /** RPC passwords by user name (password authentication). Absent in the offline plan: shown as secret there. */
  rpcPasswords?: Record<string, pulumi.Input<string>>;
  /** The backup repositories' password (`lacchain:backupPassword`); derived from each node key when absent. */
  backupPassword?: pulumi.Input<string>;
  /** An S3 repository's keys (`lacchain:backupS3Keys`). */
  backupS3Keys?: pulumi.Input<{ accessKeyId: string; secretAccessKey: string }>;
  /** The bearer token of the machines' metrics endpoint (`lacchain:metricsToken`). */
  metricsToken?: pulumi.Input<string>;
}

/** The secret settings wrapped as Pulumi secrets. */
export function secretInputs(loaded: LoadedStack): StackSecretInputs {
  const { sshPrivateKey, nodeKeys, rpcPasswords, backupPassword, backupS3Keys, metricsToken } = loaded.secrets;
  return {
    sshPrivateKey: sshPrivateKey === undefined ? undefined : pulumi.secret(sshPrivateKey),
    nodeKeys: Object.fromEntries(Object.entries(nodeKeys).map(([name, key]) => [name, pulumi.secret(key)])),
    rpcPasswords: Object.fromEntries(Object.entries(rpcPasswords ?? {}).map(([user, pw]) => [user, pulumi.secret(pw)])),
    ...(backupPassword !== undefined ? { backupPassword: pulumi.secret(backupPassword) } : {}),
    ...(backupS3Keys !== undefined ? { backupS3Keys: pulumi.secret(backupS3Keys) } : {}),
    ...(metricsToken !== undefined ? { metricsToken: pulumi.secret(metricsToken) } : {}),
  };
}

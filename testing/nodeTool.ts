/**
 * `npm run node` as the operator runs it against a test host: the stack file as the operator's machine holds it (its
 * secrets encrypted: the operations never need them) and the SSH key that logs in to the host.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { progress } from './hostSuite';
import { runNpmAsync } from './run';

/** The stack the tools run against. */
const STACK = 'testnet';
/** A secret as the stack file holds it once `pulumi config set --secret` stored it. */
const ENCRYPTED = { secure: 'v1:encrypted' };
/** The secrets a test stack may hold (no SSH key in a stack that logs in with the agent). */
const SECRETS = ['lacchain:sshPrivateKey', 'lacchain:metricsToken', 'lacchain:backupPassword'];

/** Writes `config` as the stack file of the operator's machine in `dir`, its secrets encrypted: the file's path. */
export function operatorStackFile(dir: string, config: Record<string, unknown>): string {
  const written: Record<string, unknown> = { ...config };
  for (const secret of SECRETS) if (secret in config) written[secret] = ENCRYPTED;
  const file = path.join(dir, `Pulumi.${STACK}.yaml`);
  fs.writeFileSync(file, yaml.dump({ config: written }));
  return file;
}

/** What follows the operation and its own options: the stack, its file and the SSH key. */
export function nodeToolArgs(configFile: string, sshKeyFile: string): string[] {
  return ['--stack', STACK, '--config', configFile, '--ssh-key', sshKeyFile];
}

/** `npm run node -- <args>` against the stack file: its result and how long it took (a progress line with both). */
export function nodeTool(configFile: string, sshKeyFile: string) {
  return async (...args: string[]) => {
    const started = Date.now();
    const result = await runNpmAsync('node', [...args, ...nodeToolArgs(configFile, sshKeyFile)]);
    const seconds = (Date.now() - started) / 1000;
    progress(
      `npm run node -- ${args.join(' ')} (exit ${result.code}, ${seconds.toFixed(1)} s):\n${result.stdout}${result.stderr}`,
    );
    return { ...result, seconds };
  };
}

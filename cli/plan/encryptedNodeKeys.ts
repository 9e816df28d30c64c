/**
 * The node keys a stack file holds encrypted (`pulumi config set --secret --path 'lacchain:nodeKeys.<node>'`), read
 * for the offline plan with the stack's passphrase, so that it shows their enodes as `pulumi up` will make them;
 * without the passphrase (or with another), the one line saying why those enodes stay known only after pulumi up.
 */
import * as fs from 'fs';
import * as yaml from 'js-yaml';
import { configKey } from '../../core/catalog/defaults';
import { SettingsError, type Problem } from '../../core/settings/problems';
import { readNodeKeys } from '../../core/settings/secrets';
import { ToolFailure } from '../cli';
import { PASSPHRASE_VARIABLE, passphraseFromEnvironment, unlockStack } from './pulumiPassphrase';

/** The keys read, and the note to print when some could not be. */
export interface EncryptedNodeKeys {
  keys: Record<string, string>;
  note?: string;
}

/** A stack file's fields this reads. */
interface StackFile {
  encryptionsalt?: unknown;
  config?: Record<string, unknown>;
}

/**
 * The keys of the nodes `encrypted` names (their values in `stackFile` are `secure:`), decrypted and checked as the
 * settings check a node key; `nodeNames` are the stack's nodes.
 */
export function decryptNodeKeys(
  stackFile: string,
  encrypted: readonly string[],
  nodeNames: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): EncryptedNodeKeys {
  if (encrypted.length === 0) return { keys: {} };
  const key = configKey('nodeKeys');
  const unread = (why: string): EncryptedNodeKeys => ({
    keys: {},
    note: `note: ${encrypted.map((node) => `${key}.${node}`).join(', ')} encrypted in ${stackFile}: planned as known after pulumi up (${why})`,
  });
  const passphrase = passphraseFromEnvironment(env);
  if (passphrase === undefined) {
    return unread(`set ${PASSPHRASE_VARIABLE}, the stack's passphrase, and the plan reads it and shows the enode`);
  }
  const document = (yaml.load(fs.readFileSync(stackFile, 'utf8')) ?? {}) as StackFile;
  if (typeof document.encryptionsalt !== 'string') {
    return unread("the stack's secrets are not kept with a passphrase (no encryptionsalt): only pulumi reads them");
  }
  const decrypt = unlockStack(document.encryptionsalt, passphrase);
  if (typeof decrypt !== 'function') return unread(decrypt.problem);
  const given = (document.config?.[key] ?? {}) as Record<string, unknown>;
  const plain: Record<string, string> = {};
  for (const node of encrypted) {
    const secure = (given[node] as { secure?: unknown } | undefined)?.secure;
    if (typeof secure !== 'string') return unread(`its value is not one secure: entry the plan reads`);
    try {
      plain[node] = decrypt(secure);
    } catch {
      throw new ToolFailure(`${stackFile}: ${key}.${node} does not decrypt with the stack's key (changed by hand?)`);
    }
  }
  const problems: Problem[] = [];
  const keys = readNodeKeys(plain, [...nodeNames], stackFile, problems);
  if (problems.length > 0) throw new SettingsError(problems);
  return { keys };
}

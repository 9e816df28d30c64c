/**
 * Reading the operator's YAML files: a missing file or a YAML syntax error is a settings problem, not a crash.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { Problem, SettingsError } from './problems';
import type { FileReader, RawStackConfig } from './load';
import { engineView } from './engineConfig';

/** Parses a YAML document; records a problem and returns undefined when the file is missing or not YAML. */
export function parseYamlFile(file: string, text: string | undefined, problems: Problem[]): unknown {
  if (text === undefined) {
    problems.push({ file, key: '(file)', given: 'no such file', allowed: 'an existing YAML file' });
    return undefined;
  }
  try {
    // The core schema: plain YAML types, no timestamps or custom tags.
    return yaml.load(text, { filename: file, schema: yaml.CORE_SCHEMA }) ?? {};
  } catch (error) {
    const mark = (error as yaml.YAMLException).mark;
    const where = mark ? `line ${mark.line + 1}, column ${mark.column + 1}` : '(file)';
    problems.push({
      file,
      key: where,
      given: `not valid YAML (${(error as yaml.YAMLException).reason ?? String(error)})`,
      allowed: 'a YAML document',
    });
    return undefined;
  }
}

/** Reads a file from disk; undefined when it does not exist. */
export const readFileFromDisk: FileReader = (absolutePath) =>
  fs.existsSync(absolutePath) ? fs.readFileSync(absolutePath, 'utf8') : undefined;

/** A marker standing for a `secure:` value that only the Pulumi engine can decrypt. */
export const ENCRYPTED_VALUE = '[encrypted: only pulumi can read it]';

/**
 * Reads a `Pulumi.<stack>.yaml` file into the config the engine would give the program (engineConfig.ts): every
 * top-level value a string. Encrypted (`secure:`) values cannot be decrypted without the engine: they become
 * ENCRYPTED_VALUE and their paths are listed in `encrypted`.
 */
export function readStackConfigFile(file: string): RawStackConfig & { encrypted: string[] } {
  const problems: Problem[] = [];
  const shown = path.relative(process.cwd(), file) || file;
  const document = parseYamlFile(shown, readFileFromDisk(path.resolve(file)), problems);
  if (document === undefined) throw new SettingsError(problems);
  const config = (document as { config?: unknown }).config ?? {};
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new SettingsError([
      { file: shown, key: 'config', given: 'not a mapping', allowed: 'a mapping of namespace:key to values' },
    ]);
  }
  const encrypted: string[] = [];
  const { values, secretKeys } = engineView(config as Record<string, unknown>, (key) => {
    encrypted.push(key);
    return ENCRYPTED_VALUE;
  });
  return { file: shown, baseDir: path.dirname(path.resolve(file)), values, secretKeys, encrypted };
}

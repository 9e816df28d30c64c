/**
 * Reading the operator's YAML files: a missing file or a YAML syntax error is a settings problem, not a crash.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { Problem, SettingsError } from './problems';
import type { FileReader, RawStackConfig } from './load';

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
 * Reads a `Pulumi.<stack>.yaml` file into the raw config Pulumi would give the program. Encrypted (`secure:`) values
 * cannot be decrypted without the engine: they are returned as ENCRYPTED_VALUE and listed in `encrypted`.
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
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) values[key] = decryptLater(value, key, encrypted);
  return { file: shown, baseDir: path.dirname(path.resolve(file)), values, encrypted };
}

function decryptLater(value: unknown, key: string, encrypted: string[]): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1 && entries[0][0] === 'secure') {
      encrypted.push(key);
      return ENCRYPTED_VALUE;
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, decryptLater(v, `${key}.${k}`, encrypted)]));
  }
  if (Array.isArray(value)) return value.map((v, i) => decryptLater(v, `${key}[${i}]`, encrypted));
  return value;
}

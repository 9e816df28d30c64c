/**
 * Reading the operator's YAML files: a missing file or a YAML syntax error is a settings problem, not a crash.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { Problem, SettingsError } from './problems';
import { ENCRYPTED_VALUE, type FileReader, type RawStackConfig } from './sources';
import { engineView } from './engineConfig';

/** The largest settings file read (a stack file or a values file is a few KiB). */
export const MAX_SETTINGS_FILE_BYTES = 1024 * 1024;
/** The most values a settings document may hold once its aliases are followed (a YAML alias bomb holds billions). */
export const MAX_SETTINGS_VALUES = 100_000;

/** A file that exists but is not one to read: a folder, a device, too large, or unreadable. */
export class UnreadableFileError extends Error {}

/**
 * Reads a file from disk; undefined when it does not exist. A folder, a special file, a file over
 * MAX_SETTINGS_FILE_BYTES or one that cannot be read throws UnreadableFileError (never its contents).
 */
export const readFileFromDisk: FileReader = (absolutePath) => {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(absolutePath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UnreadableFileError(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (stat.isDirectory()) throw new UnreadableFileError('is a folder, not a file');
  if (!stat.isFile()) throw new UnreadableFileError('is not a regular file');
  if (stat.size > MAX_SETTINGS_FILE_BYTES) {
    throw new UnreadableFileError(
      `has ${stat.size} bytes, more than the ${MAX_SETTINGS_FILE_BYTES} a settings file may have`,
    );
  }
  try {
    return fs.readFileSync(absolutePath, 'utf8');
  } catch (error) {
    throw new UnreadableFileError(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
};

/** Reads a settings file with `readFile`; a file that cannot be read is a problem naming it, never a crash. */
export function readSettingsFile(
  file: string,
  absolutePath: string,
  readFile: FileReader,
  problems: Problem[],
): string | undefined | null {
  try {
    return readFile(absolutePath);
  } catch (error) {
    if (!(error instanceof UnreadableFileError)) throw error;
    problems.push({ file, key: '(file)', given: `a file that ${error.message}`, allowed: 'a YAML settings file' });
    return null;
  }
}

/** True when a document holds at most `limit` values, counting every alias as often as it is used. */
function withinSize(document: unknown, limit: number): boolean {
  let seen = 0;
  const walk = (value: unknown): boolean => {
    if (++seen > limit) return false;
    if (Array.isArray(value)) return value.every(walk);
    if (value && typeof value === 'object') return Object.values(value).every(walk);
    return true;
  };
  return walk(document);
}

/**
 * Parses a YAML settings document; records a problem and returns undefined when the file is missing (`text`
 * undefined), unreadable (`null`, already recorded), not YAML, not a mapping, or too large once its aliases are
 * followed. The file's contents are never shown: it may be a private key or a system file given by mistake.
 */
export function parseYamlFile(
  file: string,
  text: string | undefined | null,
  problems: Problem[],
  /** The top-level fields such a file has: a document with none of them is not such a file. */
  fields: readonly string[],
): unknown {
  if (text === null) return undefined;
  if (text === undefined) {
    problems.push({ file, key: '(file)', given: 'no such file', allowed: 'an existing YAML file' });
    return undefined;
  }
  let document: unknown;
  try {
    // The core schema: plain YAML types, no timestamps or custom tags.
    document = yaml.load(text, { filename: file, schema: yaml.CORE_SCHEMA }) ?? {};
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
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    problems.push({
      file,
      key: '(file)',
      given: `a document that is ${Array.isArray(document) ? 'a list' : 'not a mapping'} (contents not shown)`,
      allowed: 'a YAML mapping of settings',
    });
    return undefined;
  }
  const keys = Object.keys(document);
  if (keys.length > 0 && !keys.some((key) => fields.includes(key))) {
    problems.push({
      file,
      key: '(file)',
      given: `a document with none of the fields ${fields.join(', ')} (contents not shown)`,
      allowed: 'a YAML mapping of settings',
    });
    return undefined;
  }
  if (!withinSize(document, MAX_SETTINGS_VALUES)) {
    problems.push({
      file,
      key: '(file)',
      given: `a document of more than ${MAX_SETTINGS_VALUES} values once its aliases are followed`,
      allowed: 'a YAML mapping of settings (aliases may not multiply it)',
    });
    return undefined;
  }
  return document;
}

/** The top-level fields of a stack file Pulumi writes. */
const STACK_FILE_FIELDS = ['config', 'encryptionsalt', 'secretsprovider', 'encryptedkey', 'environment'];

/**
 * Reads a `Pulumi.<stack>.yaml` file into the config the engine would give the program (engineConfig.ts): every
 * top-level value a string. Encrypted (`secure:`) values cannot be decrypted without the engine: they become
 * ENCRYPTED_VALUE and their paths are listed in `encrypted`.
 */
export function readStackConfigFile(file: string): RawStackConfig & { encrypted: string[] } {
  const problems: Problem[] = [];
  const shown = path.relative(process.cwd(), file) || file;
  const document = parseYamlFile(
    shown,
    readSettingsFile(shown, path.resolve(file), readFileFromDisk, problems),
    problems,
    STACK_FILE_FIELDS,
  );
  if (document === undefined) throw new SettingsError(problems);
  const config = (document as { config?: unknown }).config ?? {};
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new SettingsError([
      { file: shown, key: 'config', given: 'not a mapping', allowed: 'a mapping of namespace:key to values' },
    ]);
  }
  const encrypted: string[] = [];
  const { values, secretKeys, plainSecretPaths } = engineView(config as Record<string, unknown>, (key) => {
    encrypted.push(key);
    return ENCRYPTED_VALUE;
  });
  return { file: shown, baseDir: path.dirname(path.resolve(file)), values, secretKeys, plainSecretPaths, encrypted };
}

/**
 * The stack config as the Pulumi engine hands it to the program, and back.
 *
 * Under `pulumi up` every top-level config value reaches the program as a string (`pulumi.runtime.allConfig()`):
 * `true` as "true", `5` as "5", objects and lists as their JSON text, secrets decrypted and listed as secret keys,
 * whether the stack file holds YAML booleans and mappings or the values were set with `pulumi config set`. Values
 * inside a mapping or list keep their JSON types. Every reader of settings (the program, the offline plan, the
 * day-2 command, the policy pack, the tests) goes through this one view, so none can see types the engine does not.
 */
import { CONFIG_KEY_KINDS, ConfigKeyKind, SECRET_CONFIG_KEYS } from './schema';

/** The engine's view of a stack's config: `namespace:key` → string, and which keys are secret. */
export interface EngineConfig {
  /** Every top-level value, as a string (objects and lists as JSON text). */
  values: Record<string, string>;
  /** The keys whose values are secret (set with `--secret`, or holding a `secure:` value inside). */
  secretKeys: readonly string[];
  /**
   * Paths inside the settings that must be secrets (SECRET_CONFIG_KEYS) whose values the stack file holds in plain
   * text, e.g. `lacchain:nodeKeys.validator` beside an encrypted `lacchain:nodeKeys.writer`: the engine marks only
   * whole keys secret, so only a reader of the file can tell.
   */
  plainSecretPaths?: readonly string[];
}

/** A value of the stack file: `{ secure: … }` marks an encrypted one. */
function isSecure(value: unknown): value is { secure: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === 'secure';
}

/**
 * The engine's view of a stack file's `config:` mapping. `decrypt` turns a `secure:` value into its text (the offline
 * plan, which cannot decrypt, returns a marker); every key holding one is a secret key.
 */
export function engineView(config: Record<string, unknown>, decrypt: (path: string) => string): EngineConfig {
  const values: Record<string, string> = {};
  const secretKeys: string[] = [];
  const plainSecretPaths: string[] = [];
  const mustBeSecret = new Set<string>(SECRET_CONFIG_KEYS);
  for (const [key, value] of Object.entries(config)) {
    let secret = false;
    const plain = (v: unknown, path: string): unknown => {
      if (isSecure(v)) {
        secret = true;
        return decrypt(path);
      }
      if (mustBeSecret.has(key) && (typeof v === 'string' || typeof v === 'number')) plainSecretPaths.push(path);
      if (Array.isArray(v)) return v.map((item, i) => plain(item, `${path}[${i}]`));
      if (typeof v === 'object' && v !== null) {
        return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, plain(item, `${path}.${k}`)]));
      }
      return v;
    };
    const decoded = plain(value, key);
    values[key] = engineString(decoded);
    if (secret) secretKeys.push(key);
  }
  return { values, secretKeys, plainSecretPaths };
}

/** How the engine writes one top-level value: text as it is, anything else as JSON (null as an empty text). */
export function engineString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  return JSON.stringify(value);
}

/**
 * Reads each top-level value of ours as the SDK's typed getters do (`Config.getBoolean`, `getNumber`, `getObject`),
 * by the kind the schema gives its key. A value that does not read as its kind is passed on as the text it is, so
 * the schema refuses it with the usual message (`given "yes"; allowed: true or false`).
 */
export function decodeEngineValues(values: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values).map(([key, text]) => [key, decodeValue(text, CONFIG_KEY_KINDS[key])]),
  );
}

function decodeValue(text: string, kind: ConfigKeyKind | undefined): unknown {
  switch (kind) {
    case 'text':
      return text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'list':
    case 'mapping':
    case undefined: {
      // An unknown key is decoded when it is JSON, so its message shows what was written.
      if (kind === undefined && !/^\s*[[{]/.test(text)) return text;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    }
  }
}

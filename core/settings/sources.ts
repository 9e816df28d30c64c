/**
 * Where the settings are read from, as every reader of core/settings takes them: the stack config as the engine hands
 * it over, and a reader of the files it names (values files, the JWT public key). Their own file, so that the readers
 * and the loader that runs them do not import each other.
 */
/** The raw stack config as the engine hands it to the program (see engineConfig.ts): every value a string. */
export interface RawStackConfig {
  /** The file name shown in messages, e.g. `Pulumi.testnet.yaml`. */
  file: string;
  /** Folder that relative paths (values files, genesis file) are resolved against. */
  baseDir: string;
  /** Every config value, keyed `namespace:key`, as the engine's text (objects and lists as JSON). */
  values: Record<string, string>;
  /** The keys the engine marks secret. */
  secretKeys?: readonly string[];
  /** Paths of settings that must be secrets but are written in plain text in the stack file (engineConfig.ts). */
  plainSecretPaths?: readonly string[];
  /**
   * Keys (`namespace:key` or `namespace:key.sub`) whose values are encrypted and cannot be read here (the offline
   * plan): they hold ENCRYPTED_VALUE, are not validated and are passed on as that marker.
   */
  encrypted?: readonly string[];
}

/** A marker standing for a `secure:` value that only the Pulumi engine can decrypt (read without it: the offline plan). */
export const ENCRYPTED_VALUE = '[encrypted: only pulumi can read it]';

/** Reads a file relative to the settings' folder; undefined when it does not exist. */
export type FileReader = (absolutePath: string) => string | undefined;

/**
 * The secret parameters of the remote steps: given only to the node-key step, never logged, and never exported in a
 * step's shell (core/remote/shell.ts writes them as plain shell variables), so no process the step starts inherits
 * them: the step hands each to the one command that needs it, on standard input or a pipe.
 */

/** The name of the one secret parameter (the node key), given only to the node-key step. */
export const NODE_KEY_PARAMETER = 'NODE_KEY';
/** The secret RPC credentials file (password authentication), also given only to the node-key step. */
export const RPC_CREDENTIALS_PARAMETER = 'RPC_CREDENTIALS';
/** The backup repository's password, also given only to the node-key step (it writes the backup environment). */
export const BACKUP_PASSWORD_PARAMETER = 'BACKUP_PASSWORD';
/** The metrics endpoint's bearer token (`lacchain:metricsToken`), given to the node-key step too (it writes the check). */
export const METRICS_TOKEN_PARAMETER = 'METRICS_TOKEN';
/** An S3 repository's keys, given to the node-key step too (with an `s3:` repository). */
export const BACKUP_S3_PARAMETERS = {
  accessKeyId: 'BACKUP_S3_ACCESS_KEY_ID',
  secretAccessKey: 'BACKUP_S3_SECRET_ACCESS_KEY',
} as const;

/** Every secret parameter's name. */
export const SECRET_PARAMETERS: ReadonlySet<string> = new Set([
  NODE_KEY_PARAMETER,
  RPC_CREDENTIALS_PARAMETER,
  BACKUP_PASSWORD_PARAMETER,
  METRICS_TOKEN_PARAMETER,
  ...Object.values(BACKUP_S3_PARAMETERS),
]);

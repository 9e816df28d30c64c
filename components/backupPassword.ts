/**
 * The password of a node's backup repository, a secret: the operator's (`lacchain:backupPassword`), or 32 random bytes
 * made once with @pulumi/random and kept, secret, in the stack's state.
 */
import * as pulumi from '@pulumi/pulumi';
import type * as random from '@pulumi/random';

/** Bytes of a generated backup password. */
const GENERATED_PASSWORD_BYTES = 32;

export function backupPassword(
  node: string,
  parent: pulumi.Resource,
  given: pulumi.Input<string> | undefined,
): pulumi.Output<string> {
  if (given !== undefined) return pulumi.secret(given);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { RandomBytes } = require('@pulumi/random') as typeof random;
  // Made on the first `pulumi up` and kept after: it has no input an ordinary change could alter. Kept on destroy: it
  // is what opens the backups.
  const bytes = new RandomBytes(
    `${node}-backup-password`,
    { length: GENERATED_PASSWORD_BYTES },
    { parent, additionalSecretOutputs: ['hex', 'base64'], retainOnDelete: true },
  );
  return pulumi.secret(bytes.hex);
}

/**
 * The password of a node's backup repository, a secret: the operator's (`lacchain:backupPassword`), or one derived from
 * the node key (HMAC-SHA-256 of a fixed label under the key), so that the key's copy the operator keeps also opens the
 * node's backups, and no other resource or state is needed to make or keep it. A machine holding its own key (machine
 * custody) derives the same password there (scripts/remote/lib.sh, hmac_sha256_of_key).
 */
import * as pulumi from '@pulumi/pulumi';
import { createHmac } from 'crypto';
import { BACKUP_PASSWORD_DERIVATION_LABEL } from '../core/catalog/keyCustody';

/** The password derived from a node key (`0x` + 64 hex), as hex. */
export function derivedBackupPassword(privateKey: string): string {
  return createHmac('sha256', Buffer.from(privateKey.replace(/^0x/, ''), 'hex'))
    .update(BACKUP_PASSWORD_DERIVATION_LABEL)
    .digest('hex');
}

/**
 * The operator's password, or the one derived from the key the stack holds; undefined when the stack has neither (the
 * key is on the machine, which derives it).
 */
export function backupPassword(
  given: pulumi.Input<string> | undefined,
  privateKey: pulumi.Input<string> | undefined,
): pulumi.Output<string> | undefined {
  if (given !== undefined) return pulumi.secret(given);
  if (privateKey === undefined) return undefined;
  return pulumi.secret(pulumi.output(privateKey).apply(derivedBackupPassword));
}

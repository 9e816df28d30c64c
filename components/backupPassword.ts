/**
 * The password of a node's backup repository, a secret: the operator's (`lacchain:backupPassword`), or one derived from
 * the node key (HMAC-SHA-256 of a fixed label under the key), so that the key's copy the operator keeps also opens the
 * node's backups, and no other resource or state is needed to make or keep it.
 */
import * as pulumi from '@pulumi/pulumi';
import { createHmac } from 'crypto';

/** What the derived password is the HMAC of: changing it would lock every node out of its backups. */
const DERIVATION_LABEL = 'lacchain-besu-node backup repository';

/** The password derived from a node key (`0x` + 64 hex), as hex. */
export function derivedBackupPassword(privateKey: string): string {
  return createHmac('sha256', Buffer.from(privateKey.replace(/^0x/, ''), 'hex'))
    .update(DERIVATION_LABEL)
    .digest('hex');
}

export function backupPassword(
  given: pulumi.Input<string> | undefined,
  privateKey: pulumi.Input<string>,
): pulumi.Output<string> {
  return pulumi.secret(given ?? pulumi.output(privateKey).apply(derivedBackupPassword));
}

/**
 * The RPC credentials file as a Pulumi secret: bcrypt hashes of the users' passwords (secrets themselves).
 */
import * as pulumi from '@pulumi/pulumi';
import { renderCredentialsToml } from '../core/rpc/credentials';
import type { RpcUser } from '../core/settings/model';

/** The credentials file of the users, a secret. Every user's password is there: the settings loader checks it. */
export function rpcCredentials(
  users: readonly RpcUser[],
  passwords: Record<string, pulumi.Input<string>> | undefined,
): pulumi.Output<string> {
  const missing = users.filter((u) => passwords?.[u.name] === undefined).map((u) => u.name);
  if (!passwords || missing.length > 0) throw new Error(`no RPC password for ${missing.join(', ')}`);
  const all = pulumi.all(Object.fromEntries(users.map((u) => [u.name, passwords[u.name]])));
  return pulumi.secret(all.apply((given) => renderCredentialsToml(users, given as Record<string, string>)));
}

/**
 * The RPC credentials file as a Pulumi secret: bcrypt hashes of the users' passwords (secrets themselves), each with
 * a random salt of its own, made once with @pulumi/random and kept, secret, in the stack's state.
 */
import * as pulumi from '@pulumi/pulumi';
import type * as random from '@pulumi/random';
import { BCRYPT_SALT_BYTES, renderCredentialsToml } from '../core/rpc/credentials';
import type { RpcUser } from '../core/settings/model';

/**
 * The credentials file of a node's users, a secret. Every user's password is there: the settings loader checks it.
 *
 * Each user gets a `RandomBytes` of 16 bytes, `<node>-rpc-salt-<user>`, a child of the node's component: made on the
 * first `pulumi up` and kept after (it has no input an ordinary change could alter), so the same password gives the
 * same hash and an unchanged setting rolls nothing. It is not derived from the user or the password, and it is
 * secret in the state, so no value outside the secrets lets anyone check a guessed password offline.
 */
export function rpcCredentials(
  node: string,
  parent: pulumi.Resource,
  users: readonly RpcUser[],
  passwords: Record<string, pulumi.Input<string>> | undefined,
): pulumi.Output<string> {
  const missing = users.filter((u) => passwords?.[u.name] === undefined).map((u) => u.name);
  if (!passwords || missing.length > 0) throw new Error(`no RPC password for ${missing.join(', ')}`);
  // The random provider's SDK is loaded only here, for a node with password authentication.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { RandomBytes } = require('@pulumi/random') as typeof random;
  const salts = Object.fromEntries(
    users.map((u) => [
      u.name,
      new RandomBytes(
        `${node}-rpc-salt-${u.name}`,
        { length: BCRYPT_SALT_BYTES },
        { parent, additionalSecretOutputs: ['hex', 'base64'] },
      ).hex,
    ]),
  );
  const given = pulumi.all(Object.fromEntries(users.map((u) => [u.name, passwords[u.name]])));
  return pulumi.secret(
    pulumi
      .all([given, pulumi.all(salts)])
      .apply(([p, s]) => renderCredentialsToml(users, p as Record<string, string>, s as Record<string, string>)),
  );
}

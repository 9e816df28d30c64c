/**
 * NodeIdentity: owns a node's private key and publishes its public identity (public key, enode, address).
 * The key is either imported (an already permissioned node keeps its identity) or generated once with
 * @pulumi/random and kept in the stack's state; it is a secret everywhere.
 */
import * as pulumi from '@pulumi/pulumi';
import type * as random from '@pulumi/random';
import { deriveIdentity, parsePrivateKey, privateKeyFromRandomHex } from '../core/identity/nodeKey';

export interface NodeIdentityArgs {
  /** An existing private key to keep (0x + 64 hex). When absent, a new key is generated once and kept. */
  importedKey?: pulumi.Input<string>;
  /** The IP address advertised to peers (the enode's host). */
  p2pHost: pulumi.Input<string>;
  /** The p2p port (the enode's port). */
  p2pPort: pulumi.Input<number>;
  /** Let `pulumi destroy` delete a generated key, as the key Secret (`lacchain:allowKeyDeletion`). Default false. */
  allowKeyDeletion?: boolean;
}

/** A node's key and public identity. */
export class NodeIdentity extends pulumi.ComponentResource {
  /** The private key, `0x` + 64 hex. Secret. */
  readonly privateKey: pulumi.Output<string>;
  /** The public key, `0x` + 128 hex (the enode's node id). */
  readonly publicKey: pulumi.Output<string>;
  /** `enode://<128 hex>@<p2p host>:<p2p port>`. */
  readonly enode: pulumi.Output<string>;
  /** The node address, `0x` + 40 hex. */
  readonly address: pulumi.Output<string>;

  constructor(name: string, args: NodeIdentityArgs, opts?: pulumi.ComponentResourceOptions) {
    super('lacchain:index:NodeIdentity', name, {}, opts);
    let key: pulumi.Output<string>;
    if (args.importedKey !== undefined) {
      key = pulumi.output(args.importedKey).apply(parsePrivateKey);
    } else {
      // 32 random bytes, made once: the resource has no input that an ordinary change could alter. The random
      // provider's SDK is loaded only here, for a node whose key the program generates.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { RandomBytes } = require('@pulumi/random') as typeof random;
      const material = new RandomBytes(
        `${name}-key`,
        { length: 32 },
        // Kept on destroy like the key Secret, never `protect`ed (which would make every destroy fail).
        { parent: this, additionalSecretOutputs: ['hex', 'base64'], retainOnDelete: !args.allowKeyDeletion },
      );
      key = material.hex.apply(privateKeyFromRandomHex);
    }
    this.privateKey = pulumi.secret(key);
    const identity = pulumi
      .all([this.privateKey, args.p2pHost, args.p2pPort])
      .apply(([privateKey, host, port]) => deriveIdentity(privateKey, host, port));
    // The public identity is derived from the secret key but is itself public: it is what gets permissioned.
    this.publicKey = pulumi.unsecret(identity.publicKey);
    this.enode = pulumi.unsecret(identity.enode);
    this.address = pulumi.unsecret(identity.address);
    this.registerOutputs({ publicKey: this.publicKey, enode: this.enode, address: this.address });
  }
}

/**
 * NodeIdentity: a node's public identity (public key, enode, address) and, when the stack holds the key (key custody
 * `stack`), its private key. That key is either imported (an already permissioned node keeps its identity) or generated
 * once with @pulumi/random and kept in the stack's state; it is a secret everywhere. A node whose key lives elsewhere
 * (on its machine, or in the operator's Secret) has only its public key here: read back from the machine, or given.
 */
import * as pulumi from '@pulumi/pulumi';
import type * as random from '@pulumi/random';
import {
  deriveIdentity,
  identityOfPublicKey,
  parsePrivateKey,
  privateKeyFromRandomHex,
} from '../core/identity/nodeKey';

export interface NodeIdentityArgs {
  /** An existing private key to keep (0x + 64 hex). When absent, a new key is generated once and kept. */
  importedKey?: pulumi.Input<string>;
  /** The public key of a key the stack does not hold (0x + 128 hex): no private key is made, imported or kept. */
  publicKey?: pulumi.Input<string>;
  /** The IP address advertised to peers (the enode's host). */
  p2pHost: pulumi.Input<string>;
  /** The p2p port (the enode's port). */
  p2pPort: pulumi.Input<number>;
  /** Let `pulumi destroy` delete a generated key, as the key Secret (`lacchain:allowKeyDeletion`). Default false. */
  allowKeyDeletion?: boolean;
}

/** A node's key and public identity. */
export class NodeIdentity extends pulumi.ComponentResource {
  /** The private key, `0x` + 64 hex. Secret. Undefined when the stack does not hold it (`publicKey` given). */
  readonly privateKey: pulumi.Output<string> | undefined;
  /** The public key, `0x` + 128 hex (the enode's node id). */
  readonly publicKey: pulumi.Output<string>;
  /** `enode://<128 hex>@<p2p host>:<p2p port>`. */
  readonly enode: pulumi.Output<string>;
  /** The node address, `0x` + 40 hex. */
  readonly address: pulumi.Output<string>;

  constructor(name: string, args: NodeIdentityArgs, opts?: pulumi.ComponentResourceOptions) {
    super('lacchain:index:NodeIdentity', name, {}, opts);
    if (args.publicKey !== undefined) {
      const known = pulumi
        .all([args.publicKey, args.p2pHost, args.p2pPort])
        .apply(([publicKey, host, port]) => identityOfPublicKey(publicKey, host, port));
      this.privateKey = undefined;
      this.publicKey = pulumi.unsecret(known.publicKey);
      this.enode = pulumi.unsecret(known.enode);
      this.address = pulumi.unsecret(known.address);
      this.registerOutputs({ publicKey: this.publicKey, enode: this.enode, address: this.address });
      return;
    }
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
    const privateKey = pulumi.secret(key);
    this.privateKey = privateKey;
    const identity = pulumi
      .all([privateKey, args.p2pHost, args.p2pPort])
      .apply(([privateKey, host, port]) => deriveIdentity(privateKey, host, port));
    // The public identity is derived from the secret key but is itself public: it is what gets permissioned.
    this.publicKey = pulumi.unsecret(identity.publicKey);
    this.enode = pulumi.unsecret(identity.enode);
    this.address = pulumi.unsecret(identity.address);
    this.registerOutputs({ publicKey: this.publicKey, enode: this.enode, address: this.address });
  }
}

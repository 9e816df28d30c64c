/**
 * What a node's component takes on both paths (KubernetesNode on a cluster, RemoteNode on a machine), beside its own.
 */
import type * as pulumi from '@pulumi/pulumi';

/** The arguments of a node's component that both paths share, for a node of settings `N`. */
export interface NodeArgs<N> {
  /** The node's validated settings. */
  node: N;
  /**
   * The node's private key (a secret) when the stack holds it (key custody `stack`): a machine's is written to data/key;
   * none with another custody.
   */
  privateKey?: pulumi.Input<string>;
  /** The network's verified genesis. */
  genesis: pulumi.Input<string>;
  /** RPC passwords by user (secrets), for password authentication. */
  rpcPasswords?: Record<string, pulumi.Input<string>>;
  /** The backup repository's password (a secret); derived from the node key when absent. */
  backupPassword?: pulumi.Input<string>;
}

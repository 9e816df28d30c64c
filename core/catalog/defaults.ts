/**
 * Defaults for the settings an operator may leave out, on both deployment paths.
 */
import { NodeType } from './nodeTypes';

/** Pulumi config namespace of this program's settings (`lacchain:network`, `lacchain:nodes`, ...). */
export const CONFIG_NAMESPACE = 'lacchain';

/** The full name of one of this program's config keys: `configKey('nodes')` is `lacchain:nodes`. */
export function configKey<N extends string>(name: N): `${typeof CONFIG_NAMESPACE}:${N}` {
  return `${CONFIG_NAMESPACE}:${name}`;
}

/** The stack config file Pulumi reads for a stack: `Pulumi.<stack>.yaml`. */
export function stackConfigFileName(stack: string): string {
  return `Pulumi.${stack}.yaml`;
}

/** The values file of a Kubernetes node, per node type (the seed's Helm values files). */
export function defaultValuesFile(typenode: NodeType): string {
  return `values/${typenode}.yml`;
}

/** Kubernetes namespace a node is created in. */
export const DEFAULT_NAMESPACE = 'lacchain';

/** SSH: the user the program logs in as, and the port. */
export const DEFAULT_SSH_USER = 'root';
export const DEFAULT_SSH_PORT = 22;
/**
 * SSH: the login user the guided setup (`npm run init`) offers and writes, the safer one: a user of its own with
 * passwordless sudo, as cloud images of Ubuntu make it, rather than root (whose SSH login many machines refuse). An
 * inventory without `user` still logs in as DEFAULT_SSH_USER, so the stacks already deployed keep their login.
 */
export const GUIDED_SSH_USER = 'ubuntu';

/** SSH: the node's home folder (config.toml, data/, logs/). */
export const DEFAULT_NODE_HOME = '/opt/lacchain';
/** SSH: the systemd service (and log file prefix) of the node. */
export const DEFAULT_NODE_SERVICE = 'besu';
/** SSH: the system user the node runs as. */
export const DEFAULT_SERVICE_USER = 'besu';

/**
 * Where `npm run init` writes node key files by default: a folder of the operator's home (`~` is the home folder),
 * outside any repository, so a key can never be committed with the settings.
 */
export const DEFAULT_KEY_FOLDER = '~/.lacchain-besu-node/keys';

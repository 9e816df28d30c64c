/**
 * The shapes of the operator's settings files, with zod: the stack config (`Pulumi.<stack>.yaml`),
 * a Kubernetes node's values file (`values/<typenode>.yml`, `deploy` section) and an SSH node's inventory.
 */
import { z } from 'zod';
import { PORTS } from '../catalog/ports';
import { DEFAULT_SSH_PORT, DEFAULT_SSH_USER } from '../catalog/defaults';
import {
  absolutePath,
  bool,
  email,
  hostAddress,
  hostname,
  ipv4,
  kubernetesLabel,
  kubernetesSubdomain,
  nodeName,
  nodeType,
  port,
  releaseUrlTemplate,
  releaseVersion,
  resourceLabel,
  sshHostKey,
  storageSize,
  strict,
  text,
  unixUser,
} from './fields';

const TARGET = 'kubernetes or ssh';

/** An SSH node's inventory: the seed's inventory elements, plus how to reach the machine. */
export const inventorySchema = strict({
  /** The address this machine uses to reach the remote one (IP or DNS name). */
  host: hostAddress,
  /** SSH port. */
  port: port.default(DEFAULT_SSH_PORT),
  /** The user to log in as (sudo is used when it is not root). */
  user: unixUser.default(DEFAULT_SSH_USER),
  /** The remote machine's SSH host key; when set, the connection refuses any other. */
  host_key: sshHostKey.optional(),
  /** The node's public IPv4 address: advertised as its p2p host, part of its enode. */
  node_ip: ipv4,
  /** The node's name on the network. */
  node_name: nodeName,
  /** The operator's contact e-mail. */
  node_email: email,
  /** The Besu release to run. */
  node_release_version: releaseVersion.optional(),
  /** A DNS name of the machine, added to the TLS certificate. */
  dns_name: hostname.optional(),
  /** The node's home folder on the machine. */
  node_home: absolutePath.optional(),
  /** The systemd service name (also the log file prefix). */
  node_service: unixUser.optional(),
  /** Where releases are downloaded from: a URL template holding {version}. */
  release_url: releaseUrlTemplate.optional(),
  /** Deploy on a machine below the network's minimum hardware anyway. */
  allow_below_minimum_hardware: bool.default(false),
});

/** One node of the stack, as listed in `lacchain:nodes`. */
export const stackNodeSchema = strict({
  /** The node's name in this stack (resource names, outputs). */
  name: resourceLabel,
  /** writer, validator or bootnode. */
  typenode: nodeType,
  /** Where the node runs. */
  target: z.enum(['kubernetes', 'ssh'], { error: TARGET }),
  /** Kubernetes nodes: the values file, default values/<typenode>.yml. */
  values: text.optional(),
  /** SSH nodes: the inventory elements. */
  inventory: inventorySchema.optional(),
});

const SSH_KEY = 'an SSH private key (PEM or OpenSSH, beginning with -----BEGIN), set with pulumi config set --secret';
const NODE_KEYS = 'a mapping from node name to node private key (64 hex digits), set with --secret';

/** The `lacchain:` settings of a stack config file. Keys keep their namespace so messages name them as written. */
export const stackConfigSchema = strict({
  'lacchain:network': text,
  'lacchain:nodes': z
    .array(stackNodeSchema, { error: 'a list of nodes' })
    .min(1, { error: 'a list of at least one node' }),
  'lacchain:sshPrivateKey': z
    .string({ error: SSH_KEY })
    .refine((v) => v.trimStart().startsWith('-----BEGIN'), { error: SSH_KEY })
    .optional(),
  // Each key's value is checked by the loader, which knows how to describe a bad key without showing it.
  'lacchain:nodeKeys': z.record(z.string(), z.unknown(), { error: NODE_KEYS }).optional(),
  'lacchain:genesisFile': text.optional(),
  'lacchain:kubeContext': text.optional(),
  'lacchain:allowKeyDeletion': bool.default(false),
  'lacchain:supportContact': text.optional(),
});

/** The `deploy` section of a Kubernetes node's values file (the seed's Helm values, same field names). */
export const deploySchema = strict({
  /** Helm name of the network: main-net or open-protest-net. */
  network: text,
  /** writer, validator or bootnode. */
  typenode: nodeType,
  /** The static public IP of the LoadBalancer Service. */
  publicIP: ipv4,
  p2p: strict({
    /** The IP advertised to peers (part of the enode): the node's permissioned IP. */
    host: ipv4,
    /** The p2p port, TCP and UDP. */
    port: port.default(PORTS.p2p),
  }),
  /** The Kubernetes worker the pod is pinned to (its egress IP must not change). */
  workerName: kubernetesSubdomain,
  /** The node's name on the network. */
  nodeName: nodeName,
  /** The operator's contact e-mail. */
  nodeEmail: email,
  /** A DNS name for the node (optional). */
  dnsName: hostname.optional(),
  /** Kubernetes namespace, default lacchain. */
  namespace: kubernetesLabel.optional(),
  /** The Besu release to run (image tag). */
  releaseVersion: releaseVersion.optional(),
  /** Storage class of the data volume (the cluster's default when absent). */
  storageClass: kubernetesSubdomain.optional(),
  /** Size of the data volume (the network's size when absent). */
  volumeSize: storageSize.optional(),
});

/** A values file: only the `deploy` section. */
export const valuesFileSchema = strict({ deploy: deploySchema });

export type StackConfigInput = z.infer<typeof stackConfigSchema>;
export type StackNodeInput = z.infer<typeof stackNodeSchema>;
export type InventoryInput = z.infer<typeof inventorySchema>;
export type DeployInput = z.infer<typeof deploySchema>;

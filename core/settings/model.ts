/**
 * Validated settings: what the rest of the program works from. Every field here has been checked.
 */
import type { Network, StackName } from '../catalog/networks';
import type { NodeType } from '../catalog/nodeTypes';

/** What every node has, whatever its target. */
export interface NodeSettingsBase {
  /** The node's name in the stack (resource names, outputs). */
  name: string;
  /** writer, validator or bootnode. */
  typenode: NodeType;
  /** The network the node joins. */
  network: Network;
  /** The node's name on the network (monitoring job, ethstats, permissioning request). */
  nodeName: string;
  /** The operator's contact e-mail. */
  nodeEmail: string;
  /** The IP advertised to peers: part of the enode, the address that gets permissioned. */
  p2pHost: string;
  /** The p2p port, TCP and UDP. */
  p2pPort: number;
  /** The Besu release. */
  releaseVersion: string;
  /** Optional DNS name of the node. */
  dnsName?: string;
  /** The file the node's own settings come from (values file or stack config), for messages. */
  settingsFile: string;
}

/** A node on a Kubernetes cluster. */
export interface KubernetesNodeSettings extends NodeSettingsBase {
  target: 'kubernetes';
  /** The values file it was read from. */
  valuesFile: string;
  /** The static public IP of the LoadBalancer Service. */
  publicIP: string;
  /** The worker the pod is pinned to. */
  workerName: string;
  /** Kubernetes namespace. */
  namespace: string;
  /** Storage class of the data volume (cluster default when undefined). */
  storageClass?: string;
  /** Size of the data volume. */
  volumeSize: string;
}

/** A node on a remote machine reached over SSH. */
export interface SshNodeSettings extends NodeSettingsBase {
  target: 'ssh';
  /** The address this machine uses to reach the remote one. */
  host: string;
  /** SSH port. */
  sshPort: number;
  /** The login user. */
  user: string;
  /** Pinned SSH host key, when the operator gave one. */
  hostKey?: string;
  /** The node's home folder. */
  nodeHome: string;
  /** The systemd service name. */
  serviceName: string;
  /** Release download URL template holding {version}. */
  releaseUrl: string;
  /** Deploy below the network's minimum hardware anyway. */
  allowBelowMinimumHardware: boolean;
}

export type NodeSettings = KubernetesNodeSettings | SshNodeSettings;

/** A stack's validated settings. Secrets are kept apart, in StackSecrets. */
export interface StackSettings {
  stack: StackName;
  network: Network;
  /** The stack config file, for messages. */
  configFile: string;
  nodes: NodeSettings[];
  /** A local copy of the genesis file (verified against the pinned digest), instead of downloading it. */
  genesisFile?: string;
  /** The kubeconfig context for Kubernetes nodes (the current context when undefined). */
  kubeContext?: string;
  /** Let `pulumi destroy` delete the node key Secrets (by default they are protected and kept). */
  allowKeyDeletion: boolean;
  /** Where to open a support request when a restart does not help (the health check's recovery rule). */
  supportContact: string;
}

/** The secret settings of a stack. */
export interface StackSecrets {
  /** The SSH private key for SSH nodes. */
  sshPrivateKey?: string;
  /** Imported node private keys by node name (normalised to 0x + 64 lowercase hex). */
  nodeKeys: Record<string, string>;
}

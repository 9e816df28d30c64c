/**
 * Validated settings: what the rest of the program works from. Every field here has been checked.
 */
import type { BackupSchedule } from '../catalog/backups';
import type { Network, StackName } from '../catalog/networks';
import type { NodeType } from '../catalog/nodeTypes';
import type { ETHSTATS, ReleasedCompanionName } from '../catalog/companions';
import type { KeyCustody } from '../catalog/keyCustody';
import type { RpcApiGroup, RpcExposure } from '../catalog/rpc';
import type { SshAuthentication } from '../catalog/sshLogin';
import type { LoadBalancerCloud } from '../catalog/loadBalancers';

/** A password user of the RPC (its password is a secret, in StackSecrets.rpcPasswords). */
export interface RpcUser {
  /** The user name (`[Users.<name>]` in the credentials file; the /login username). */
  name: string;
  /** Besu permissions `<api>:<method>`; default every method (`*:*`). */
  permissions: string[];
}

/** How callers authenticate to the RPC. */
export type RpcAuthentication =
  | {
      /** Besu's username/password: a credentials file of bcrypt hashes, tokens from POST /login. */
      method: 'password';
      /** The users. */
      users: RpcUser[];
    }
  | {
      /** JWTs the operator signs; Besu checks them with the public key. */
      method: 'jwt';
      /** The public key, PEM text. */
      publicKey: string;
      /** The signature algorithm; Besu's default (RS256) when undefined. */
      algorithm?: string;
    };

/** JSON-RPC access of one node (the stack's `lacchain:rpc`, with the node's own `rpc` fields over it), validated. */
export interface RpcSettings {
  /** The setting its values come from, for messages: `lacchain:rpc`, or `lacchain:nodes[i].rpc` when the node has one. */
  key: string;
  /** Where a choice for this node alone is set: `lacchain:nodes[i].rpc`. */
  nodeKey: string;
  /** API groups enabled; undefined: the node type's (catalog), less what may not be reachable from outside. */
  apis?: RpcApiGroup[];
  /** Where the RPC is reachable: public 4545, only through the TLS proxy, or only inside the host/cluster. */
  exposure: RpcExposure;
  /** Extra host names the RPC answers to (besides localhost, 127.0.0.1, the node's addresses and DNS name). */
  hostAllowlist: string[];
  /** Origins browsers may call the RPC from (none by default). */
  corsOrigins: string[];
  /** Authentication, when on. */
  authentication?: RpcAuthentication;
  /** Methods callable without authentication, besides the checks' read-only methods (catalog CHECK_METHODS). */
  noAuthMethods: string[];
  /** The operator's explicit override: unsafe APIs or CORS * on a publicly reachable RPC. */
  allowUnsafeApis: boolean;
  /** The operator's explicit opt-in for this node: the consensus vote methods on an RPC reachable from outside. */
  allowConsensusVotesFromOutside: boolean;
  /** Besu's rpc-http-max-active-connections (written from 21.1.2). */
  maxActiveConnections: number;
  /** The reverse proxy's limits. */
  proxy: {
    /** Largest request body (nginx size, e.g. 1m). */
    maxBodySize: string;
    /** Requests per second per client address. */
    requestsPerSecond: number;
    /** Requests allowed above the rate in a burst. */
    burst: number;
    /** Connections open at once per client address. */
    maxConnectionsPerClient: number;
  };
}

/** The operator's own Secret holding a node key (`keyCustody: secret`). */
export interface KeySecretReference {
  /** The Secret's name, in the node's namespace. */
  name: string;
  /** Its entry holding the key. */
  entry: string;
}

/** Besu options the network's Helm chart writes and its Ansible roles do not (`lacchain:besu`, a node's `besu`). */
export interface BesuOptions {
  /** `revert-reason-enabled`. */
  revertReason?: boolean;
  /** `tx-pool-retention-hours` (with `tx-pool="legacy"` from 23.10). */
  txPoolRetentionHours?: number;
  /** `tx-pool-max-size` (with `tx-pool="legacy"` from 23.10). */
  txPoolMaxSize?: number;
  /** `permissions-accounts-contract-enabled` with the network's account contract. */
  accountPermissioning?: boolean;
}

/** What every node has, whatever its target. */
export interface NodeSettingsBase {
  /** The node's name in the stack (resource names, outputs). */
  name: string;
  /** writer, validator or bootnode. */
  typenode: NodeType;
  /** The network the node joins. */
  network: Network;
  /** Where the node's private key lives (`keyCustody`). */
  keyCustody: KeyCustody;
  /**
   * The public key the operator gives (`publicKey`): with `secret` custody the enode and address come from it; with
   * `machine` custody it pins the key the machine must hold.
   */
  publicKey?: string;
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
  /** JSON-RPC access: the stack's `lacchain:rpc` with the node's own `rpc` fields over it. */
  rpc: RpcSettings;
  /** The companion services this node runs beside Besu (from `lacchain:companions`), in the catalog's order. */
  companions: CompanionSettings[];
  /** Backups of the node's chain data (`lacchain:backups`). */
  backups: BackupSettings;
  /** The Besu options set for it (`lacchain:besu`, its own `besu` over it); absent: none, Besu's defaults. */
  besu?: BesuOptions;
  /**
   * The enodes of the stack's own bootnodes this node carries in its `bootnodes` beside the network's (writers and
   * validators; those known before the node starts: core/node/stackBootnodes.ts).
   */
  stackBootnodes?: string[];
}

/** Backups of a node's chain data, defaults filled in. */
export interface BackupSettings {
  /** The restic repository: a machine's folder or an SFTP server; on a cluster, the backup volume's mount point. */
  repository: string;
  /** Back up before `pulumi up` switches the node to another release. */
  beforeReleaseChange: boolean;
  /** When scheduled backups run. */
  schedule: BackupSchedule;
  /** How many backups are kept (and every one taken before a release change). */
  keep: number;
}

/** What every companion service has, as configured for the stack (`lacchain:companions.<name>`). */
interface CompanionSettingsBase {
  /** The setting's key, for messages: `relaySigner`, `rotationValidator` or `ethstats`. */
  key: string;
  /** Whether the stack runs it on the nodes of its type. */
  enabled: boolean;
  /** The image a Kubernetes node runs it from (and, for ethstats, a machine too). */
  image: string;
  /** The image's registry digest (`sha256:…`), pinning it, when given (a machine running ethstats needs it). */
  imageDigest?: string;
}

/** A companion installed on a machine from a released executable: the relay signer or the rotation client. */
export interface ReleasedCompanionSettings extends CompanionSettingsBase {
  /** Its name in the catalog (core/catalog/companions.ts). */
  name: ReleasedCompanionName;
  /** The release a machine installs. */
  version: string;
  /** The executable's download URL (the template with the version in it). */
  releaseUrl: string;
  /** Its SHA-256, when given (an SSH node needs it, or gitBlob). */
  sha256?: string;
  /** The git blob id the catalog pins for this release at the catalog's URL, when it pins one (checked on the machine). */
  gitBlob?: string;
  /** The network contract it works with (relay hub, or validator rotation). */
  contract: string;
}

/** The network's monitoring client (ethstats-cli), run from its container image on both paths. */
export interface EthstatsSettings extends CompanionSettingsBase {
  name: typeof ETHSTATS.name;
  /** The network's ethstats server. */
  serverUrl: string;
}

/** One companion service as configured for the stack. */
export type CompanionSettings = ReleasedCompanionSettings | EthstatsSettings;

/** How the operator's Prometheus watches the stack's cluster nodes (`lacchain:monitoring`), validated. */
export interface ClusterMonitoringSettings {
  /** The Prometheus admitted to the pods' metrics port, by its namespace and pod labels; none: nobody is. */
  scraper?: { namespace: string; podLabels: Record<string, string> };
  /** A ServiceMonitor and a PrometheusRule per node (the cluster runs the Prometheus Operator); else pod annotations. */
  prometheusOperator: boolean;
  /** The labels of the ServiceMonitor and PrometheusRule (what the operator's Prometheus selects them by). */
  resourceLabels: Record<string, string>;
}

/** The load balancer of a cluster node's Service (`deploy.loadBalancer`; core/catalog/loadBalancers.ts). */
export interface LoadBalancerSettings {
  cloud: LoadBalancerCloud;
  /** aws: the Elastic IP allocations, one per subnet. */
  eipAllocations?: string[];
  /** aws: the NLB's subnets, as many as the allocations. */
  subnets?: string[];
  /** azure: the resource group of the public IP. */
  resourceGroup?: string;
  /** azure: the public IP's name. */
  publicIpName?: string;
  /** metallb: the address pool. */
  addressPool?: string;
}

/** A node on a Kubernetes cluster. */
export interface KubernetesNodeSettings extends NodeSettingsBase {
  target: 'kubernetes';
  /** The operator's Secret holding the key (`keySecret`, `keySecretEntry`), with `secret` custody. */
  keySecret?: KeySecretReference;
  /** The values file it was read from. */
  valuesFile: string;
  /** The static public IP of the LoadBalancer Service. */
  publicIP: string;
  /** The cluster's load balancer and what it reads to put the Service on `publicIP` (`deploy.loadBalancer`). */
  loadBalancer: LoadBalancerSettings;
  /** The worker the pod is pinned to. */
  workerName: string;
  /** Kubernetes namespace. */
  namespace: string;
  /** Storage class of the data volume (cluster default when undefined). */
  storageClass?: string;
  /** Size of the data volume. */
  volumeSize: string;
  /** The Besu image's registry digest (`sha256:…`), pinning the image beside its tag; the tag alone when undefined. */
  imageDigest?: string;
  /** The writer's proxy image's registry digest (`sha256:…`); the tag alone when undefined. */
  proxyImageDigest?: string;
  /** A VolumeSnapshotClass: backups are snapshots of the data volume; copies by a restic Job when undefined. */
  volumeSnapshotClass?: string;
  /** The backup Job's image's registry digest; the tag alone when undefined. */
  backupImageDigest?: string;
  /** The schedule's kubectl image's registry digest; the tag alone when undefined. */
  kubectlImageDigest?: string;
  /** How the operator's Prometheus scrapes and alerts on it (`lacchain:monitoring`). */
  monitoring: ClusterMonitoringSettings;
}

/** A node on a remote machine reached over SSH. */
export interface SshNodeSettings extends NodeSettingsBase {
  target: 'ssh';
  /** Whether the machine serves its metrics to the operator's Prometheus over TLS (`lacchain:metricsToken` is set). */
  metricsEndpoint: boolean;
  /** The address this machine uses to reach the remote one. */
  host: string;
  /** SSH port. */
  sshPort: number;
  /** The login user. */
  user: string;
  /** The machine's system as the inventory names it (`os`: `<ID> <VERSION_ID>`), checked before any `pulumi up`. */
  system?: string;
  /** Pinned SSH host key; absent only when the operator opted out (acceptAnyHostKey, test networks). */
  hostKey?: string;
  /** The operator's explicit opt-out of host key pinning (inventory accept_any_host_key): flagged by plan and policy. */
  acceptAnyHostKey: boolean;
  /** The node's home folder. */
  nodeHome: string;
  /** The systemd service name. */
  serviceName: string;
  /** Release download URL template holding {version}: https: or file:. */
  releaseUrl: string;
  /** SHA-256 the release archive must have (the catalog's, or the inventory's release_sha256). */
  releaseSha256: string;
  /** The operator's own Java runtime archive (inventory java_runtime_url and java_runtime_sha256), instead of the catalog's. */
  javaRuntime?: { url: string; sha256: string };
  /** How long the start step waits for the node to answer after a (re)start, in seconds. */
  startTimeoutSeconds: number;
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
  /** The companion services as configured for the stack, enabled or not (`lacchain:companions`). */
  companions: CompanionSettings[];
  /** How a change that restarts several nodes rolls out (`lacchain:rollout`). */
  rollout: RolloutSettings;
  /** How `pulumi up` logs in to the SSH nodes' machines (`lacchain:sshAuthentication`): the agent unless a key is stored. */
  sshAuthentication: SshAuthentication;
}

/** How a change that restarts several nodes rolls out: one node at a time, each healthy before the next. */
export interface RolloutSettings {
  /** How long a restarted node's health gate waits for it, in seconds. */
  gateTimeoutSeconds: number;
}

/** The secret settings of a stack. */
export interface StackSecrets {
  /** The SSH private key for SSH nodes, with `sshAuthentication` `privateKey` (the agent needs none). */
  sshPrivateKey?: string;
  /** Imported node private keys by node name (normalised to 0x + 64 lowercase hex). */
  nodeKeys: Record<string, string>;
  /** RPC passwords by user name (`lacchain:rpcPasswords`), for password authentication. */
  rpcPasswords?: Record<string, string>;
  /** The backup repositories' password (`lacchain:backupPassword`); derived from each node key when undefined. */
  backupPassword?: string;
  /** An S3 repository's keys (`lacchain:backupS3Keys`). */
  backupS3Keys?: { accessKeyId: string; secretAccessKey: string };
  /** The bearer token of the machines' metrics endpoint (`lacchain:metricsToken`); none: no endpoint. */
  metricsToken?: string;
}

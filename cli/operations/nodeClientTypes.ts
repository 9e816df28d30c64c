/**
 * What `npm run node` asks of one node, whatever its target: the questions (NodeClient), answered through ssh by
 * nodeClient.ts or through kubectl and the node's RPC URL by clusterNodeClient.ts, and what a client is made with.
 */
import type { DiskUsage } from '../../core/operations/disk';
import type { CompanionState } from '../../core/operations/health';
import type { NodeRolloutState } from '../../core/operations/rolloutState';
import type { IngressVerdict } from '../../core/kubernetes/loadBalancer';
import type { BackupClient } from './backupClient';
import type { ClockState } from './nodeClock';

/** What the operations need from a node, whatever its target. */
export interface NodeClient {
  /** How the node is reached, for messages. */
  where: string;
  /**
   * Looks at the node once, before an operation: its client is there, its cluster or machine answers and it is
   * deployed there; otherwise throws NodeUnreachable.
   */
  reach(): Promise<void>;
  /** Running or not, in the client's words (`Running` pod, `started` service). */
  serviceState(): Promise<{ running: boolean; detail: string }>;
  /** The node's companion services (`lacchain:companions`), each running or not. */
  companionStates(): Promise<CompanionState[]>;
  /** A JSON-RPC question to the node's own RPC; throws naming the address, or with the node's error. */
  rpc(method: string, params?: readonly unknown[]): Promise<unknown>;
  /** When the node last started, epoch seconds; undefined when unknown. */
  startedAt(): Promise<number | undefined>;
  /** The addresses the node leaves from towards `address`, and how they were read; undefined when unknown. */
  egress(towards: string): Promise<Egress | undefined>;
  /** The node's clock against this machine's (seconds), and whether it says it is synchronised; undefined when unknown. */
  clock(): Promise<ClockState | undefined>;
  /** The release the node runs, as deployed (SSH: `releases/current`; Kubernetes: the pod's image), if known. */
  releaseInUse(): Promise<string | undefined>;
  /** The enode the program recorded for the node (SSH: data/enode; Kubernetes: the Service annotation). */
  recordedEnode(): Promise<string | undefined>;
  /** SSH: the enode the node had before it moved to this machine (`npm run node -- move`), if it did. */
  movedFrom?(): Promise<string | undefined>;
  /**
   * Kubernetes: whether the cloud put the node's Service on the enode's IP (its `status.loadBalancer.ingress`, a DNS
   * name resolved); undefined on a machine, whose address is its own.
   */
  staticIp?(): Promise<IngressVerdict>;
  /**
   * The node's part of the last rollout (SSH: its health gate's record; Kubernetes: its StatefulSet's roll), or
   * undefined when nothing says.
   */
  rolloutState(): Promise<NodeRolloutState | undefined>;
  recentLog(): Promise<string>;
  /** The node's clock, epoch seconds. */
  now(): Promise<number>;
  /** The data's size and its filesystem's free space and size; throws when they cannot be read. */
  diskUsage(): Promise<DiskUsage>;
  showLogs(follow: boolean): Promise<number>;
  start(): Promise<void>;
  restart(): Promise<void>;
  /**
   * The client for one look at the node that changes nothing (status, one check's observations), whose questions share
   * their reads: Kubernetes: the pod and the Service read once each, not once a question. Not for a command that
   * changes the node: its answers are as they were when first read. Absent: the client itself (an SSH node's sessions
   * already share one connection).
   */
  look?(): NodeClient;
  /** The operator command that restarts the node, for the recovery rule. */
  restartHint: string;
  /** The node's backups. */
  backups: BackupClient;
}

/** The addresses a node leaves from, and how they were read. */
export interface Egress {
  addresses: string[];
  how: string;
}

/** Options of the SSH client. */
export interface SshOptions {
  /** A private key file (ssh -i). */
  keyFile?: string;
  /** Extra ssh options (ssh -o). */
  options: string[];
}

/** What a node's client needs besides the node: the stack, its file and context, ssh's options, an RPC URL. */
export interface ClientContext {
  stack: string;
  /** The stack file, for messages. */
  configFile: string;
  kubeContext?: string;
  ssh: SshOptions;
  rpcUrl?: string;
}

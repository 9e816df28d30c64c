/**
 * How much of an answer the operator's tools read at most from a machine, a pod or the network: whatever answers
 * (a machine or pod not to be trusted, a port-forward to anything) may answer without end, and the operator's memory
 * is not its to fill. Each read is bounded; one that passes its bound is stopped with a one-line error.
 */
export const ANSWER_LIMITS = {
  /** A client's (ssh's, kubectl's) output on either stream, unless a read says less: a list of backups, a log. */
  client: 16 * 1024 * 1024,
  /** An enode as recorded on a machine, in a pod or in a backup (about 150 bytes). */
  enode: 4 * 1024,
  /** One JSON-RPC answer of the node (admin_peers of a well-connected node is the largest, tens of KiB). */
  rpc: 4 * 1024 * 1024,
  /** A node's rollout record (a few short lines: scripts/remote/gate.sh). */
  rolloutRecord: 16 * 1024,
  /** One line of a client's output read as it comes (a progress line of restic's). */
  line: 1024 * 1024,
  /** How much of a streamed client's output is kept for its result (its last lines tell why it failed). */
  keptTail: 64 * 1024,
  /** An HTTP answer's body, unless a read says less (the network's genesis file). */
  http: 64 * 1024 * 1024,
} as const;

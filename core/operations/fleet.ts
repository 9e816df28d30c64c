/**
 * Every node of a stack at a glance (`npm run node -- status --all`): one row per node, as a table or as JSON. Pure:
 * the rows in, the text out.
 */

import { NodeRolloutState, rolloutLines, RolloutWord, rolloutWords } from './rolloutState';
import { rolloutOrder } from '../node/rollout';
import type { NodeSettings } from '../settings/model';

/** What one node said, or why it could not say it. */
export interface FleetRow {
  node: string;
  type: string;
  /** Where it runs: `kubernetes` or `ssh`. */
  path: string;
  /** The release it runs (what it says, or the one deployed), when known. */
  release?: string;
  /**
   * The service's or pod's state in the client's words (`started`, `Running`), or, for a node that could not be
   * looked at, a short word (`unreachable`, `not deployed`, …) whose reason is `problem`.
   */
  service: string;
  /** Why the node could not be looked at: one line saying which and what to do. */
  problem?: string;
  running: boolean;
  peers?: number;
  head?: number;
  /** Blocks behind the best known block (0 when not syncing). */
  behind?: number;
  /** Whether the network's contract allows the node to connect to its bootnodes, at the node's head. */
  permissioned?: boolean;
  /** Companions running, of those the node must run. */
  companionsUp: number;
  companions: number;
  /** The node's part of the last rollout, as its client read it (SSH: its health gate; Kubernetes: its pod's roll). */
  rollout?: NodeRolloutState;
  /** In a rollout in progress: `changing` or `stopped` (the node it is at), or `waits for <node>`. */
  rolloutStep?: RolloutWord;
}

/** True when every node runs with all its companions. */
export function fleetHealthy(rows: readonly FleetRow[]): boolean {
  return rows.every((row) => row.running && row.companionsUp === row.companions);
}

/** The release in a client version (`besu/v24.1.0/linux-x86_64/…`), or the text as it is. */
export function releaseOfClientVersion(version: string): string {
  return /^besu\/(?:[^/]+\/)?v([0-9][^/]*)\//.exec(version)?.[1] ?? version;
}

/**
 * The release in what a client says is deployed: `24.1.0 (the release in use, …)` on a machine,
 * `hyperledger/besu:24.1.0@sha256:… (the pod's image)` on a cluster.
 */
export function deployedRelease(deployed: string): string {
  const word = deployed.split(' ')[0].replace(/@.*$/, '');
  return word.slice(word.lastIndexOf(':') + 1);
}

/** The table, one aligned line per node, then the reason of each node that could not be looked at, one line each. */
export function fleetTable(rows: readonly FleetRow[]): string[] {
  const header = [
    'NODE',
    'TYPE',
    'PATH',
    'RELEASE',
    'SERVICE',
    'PEERS',
    'HEAD',
    'BEHIND',
    'PERMISSIONED',
    'COMPANIONS',
  ];
  const known = (value: number | string | undefined) => (value === undefined ? '-' : String(value));
  const cells = rows.map((r) => [
    r.node,
    r.type,
    r.path,
    known(r.release),
    r.service,
    known(r.peers),
    known(r.head),
    known(r.behind),
    r.permissioned === undefined ? '-' : r.permissioned ? 'yes' : 'no',
    r.companions === 0 || r.problem !== undefined ? '-' : `${r.companionsUp}/${r.companions} up`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const table = [header, ...cells].map((line) =>
    line
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
  return [...table, ...rows.flatMap((r) => (r.problem === undefined ? [] : [r.problem]))];
}

/**
 * The rows in the stack's order with each one's step in a rollout in progress (`rolloutStep`), and the lines saying
 * where the rollout is, in the order it changes the nodes (core/node/rollout.ts); no lines when none is in progress.
 */
export function withRollout(
  nodes: readonly NodeSettings[],
  rows: readonly FleetRow[],
  stack: string,
): { rows: FleetRow[]; lines: string[] } {
  const byName = new Map(rows.map((row) => [row.node, row]));
  const ordered = rolloutOrder(nodes).map((node) => byName.get(node.name)!);
  const words = rolloutWords(ordered);
  return {
    rows: rows.map((row) => (words.has(row.node) ? { ...row, rolloutStep: words.get(row.node)! } : row)),
    lines: rolloutLines(ordered, stack),
  };
}

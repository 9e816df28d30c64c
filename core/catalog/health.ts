/**
 * What "healthy" means, once: the thresholds `npm run node -- check` judges a node by, the readiness probe's, and the
 * alert rules' (monitoring/alerts.yml is written from them). Blocks come every 2 s on the LACChain networks (IBFT 2.0).
 */

/** The networks' block period. */
export const BLOCK_PERIOD_SECONDS = 2;

/** No new block (no block import in the log, no change of the chain head) for longer than this: the head is stalled. */
export const MAX_HEAD_AGE_SECONDS = 120;

/** More blocks behind the best known block than this: the node is behind (the readiness probe's maxBlocksBehind). */
export const MAX_BLOCKS_BEHIND = 2;

/** How long the node may be behind before the alert fires (a node catching up after a restart is not an incident). */
export const BEHIND_FOR_MINUTES = 5;

/** How long the node may have no peer before the alert fires. */
export const NO_PEERS_FOR_MINUTES = 2;

/** How long the node may not answer its scrape before the alert fires. */
export const DOWN_FOR_MINUTES = 1;

/** Free space of the data's filesystem, as a share of its size: below `warning` a warning, below `critical` critical. */
export const DISK_FREE = { warning: 0.15, critical: 0.05 } as const;

/** A restart loop: more than `restarts` starts of the node within `minutes`. */
export const RESTART_LOOP = { restarts: 2, minutes: 15 } as const;

/** How long a companion service may be down before the alert fires. */
export const COMPANION_DOWN_FOR_MINUTES = 2;

/**
 * The network's gateway has taken none of the node's metrics for longer than this (the relay pushes every 5 s): the
 * network sees the node as gone, so the operator is told before the network operator calls.
 */
export const MAX_PUSH_AGE_SECONDS = 60;

/**
 * The node's clock may be this far from the operator's: beyond it a node with no peers is told to fix its clock
 * (devp2p discovery packets expire 20 s after they are sent, and IBFT 2.0 refuses blocks from the future).
 */
export const MAX_CLOCK_OFFSET_SECONDS = 10;

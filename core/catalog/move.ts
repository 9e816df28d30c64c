/**
 * Moving a node from one machine to another (`npm run node -- move`, docs/moving.md): the files the move leaves on
 * each machine, all root's, and the name of its backup.
 */

/** The files of a move on a machine, by the node's service name. */
export const MACHINE_MOVE_FILES = {
  /** On the old machine: the node moved away (and where to); while it is there, the node's units never start. */
  movedOut: (serviceName: string) => `/etc/lacchain/${serviceName}-moved-out`,
  /** On the new machine: the backup its start step restores before the node's first start there (`backup=ID`). */
  movedIn: (serviceName: string) => `/etc/lacchain/${serviceName}-moved-in`,
  /** On the new machine, key custody machine: the key carried root to root, taken in once by the node-key step. */
  incomingKey: (serviceName: string) => `/etc/lacchain/${serviceName}-incoming-key`,
  /**
   * On the new machine: root's only folder where the node identity files an earlier stay of the node left there (key,
   * enode, address, the accepted key's record) are set aside, so the node-key step takes in the carried key, writes
   * the stack's, or makes a new one (`--new-key`).
   */
  keysAside: (serviceName: string) => `/etc/lacchain/${serviceName}-keys-aside`,
  /** The systemd drop-in, in each of the old machine's node units, that keeps it from starting. */
  dropIn: 'lacchain-moved-out.conf',
} as const;

/** The steps of a move, in order: what the tool prints and what a cut one says it reached. */
export const MOVE_STEPS = {
  stopOld: 'stop the old node (its units kept from starting again)',
  lastBackup: 'take its last backup',
  carry: 'carry the backup (and a machine key) to the new machine',
  bringUp: 'bring the node up on the new machine, its data restored before its first start',
  health: "wait for the new node's health",
  removeOld: "remove the old machine's service (its data kept)",
} as const;
export type MoveStep = keyof typeof MOVE_STEPS;

/**
 * The environment variable `npm run node -- move` sets for its own `pulumi up`, naming the node it moves (its old node
 * already stopped and kept from starting): that run may bring the node up in its new place.
 */
export const MOVING_NODE_VARIABLE = 'LACCHAIN_MOVING_NODE';

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

/** The words of the steps the moves share (machine to machine, into a cluster, out of one). */
const SHARED_STEPS = {
  stopOldMachine: 'stop the old node (its units kept from starting again)',
  lastBackup: 'take its last backup',
  bringUpOnMachine: 'bring the node up on the new machine, its data restored before its first start',
  health: "wait for the new node's health",
  removeOldMachine: "remove the old machine's service (its data kept)",
} as const;

/** The steps of a move, in order: what the tool prints and what a cut one says it reached. */
export const MOVE_STEPS = {
  stopOld: SHARED_STEPS.stopOldMachine,
  lastBackup: SHARED_STEPS.lastBackup,
  carry: 'carry the backup (and a machine key) to the new machine',
  bringUp: SHARED_STEPS.bringUpOnMachine,
  health: SHARED_STEPS.health,
  removeOld: SHARED_STEPS.removeOldMachine,
} as const;
export type MoveStep = keyof typeof MOVE_STEPS;

/**
 * The environment variable `npm run node -- move` sets for its own `pulumi up`, naming the node it moves (its old node
 * already stopped and kept from starting): that run may bring the node up in its new place.
 */
export const MOVING_NODE_VARIABLE = 'LACCHAIN_MOVING_NODE';

/**
 * The environment variable of the first of the two `pulumi up` runs of a move into a cluster, naming the node: its
 * StatefulSet is made with no pod (replicas 0), so that the move fills the new data volume before the pod's first
 * start; the second run, without it, starts the pod (and leaves the state as the stack file says).
 */
export const MOVE_HOLD_VARIABLE = 'LACCHAIN_MOVE_HOLD_NODE';

/** The steps of a move between a machine and a cluster, in order (`npm run node -- move --to-kubernetes`). */
export const CLUSTER_MOVE_STEPS = {
  stopOld: SHARED_STEPS.stopOldMachine,
  lastBackup: SHARED_STEPS.lastBackup,
  prepare: "make the node's objects in the cluster, its StatefulSet with no pod",
  carry: 'fill the new data volume from the backup (and the key Secret, key custody machine)',
  bringUp: "start the node's pod on that data",
  health: SHARED_STEPS.health,
  removeOld: SHARED_STEPS.removeOldMachine,
} as const;
export type ClusterMoveStep = keyof typeof CLUSTER_MOVE_STEPS;

/** The label of the short-lived pod that fills a moved node's data volume (its value: the node's name). */
export const MOVE_FILL_LABEL = 'lacchain.net/move-fill-of';

/** The steps of a move out of the cluster onto a machine, in order (`npm run node -- move --from-kubernetes`). */
export const MACHINE_FROM_CLUSTER_STEPS = {
  stopOld: "stop the node's pod (its StatefulSet at no pod, its backup schedule suspended)",
  lastBackup: 'take its last backup (restic, into its backups volume)',
  carry: 'carry the backup repository (and a Secret key) to the new machine',
  bringUp: SHARED_STEPS.bringUpOnMachine,
  health: SHARED_STEPS.health,
  removeOld: "remove the cluster's StatefulSet (its volumes and key Secret kept)",
} as const;
export type MachineFromClusterStep = keyof typeof MACHINE_FROM_CLUSTER_STEPS;

/** The annotation on the StatefulSet of a node moved out of the cluster: where to (while it is there, no pod). */
export const MOVED_TO_ANNOTATION = 'lacchain.net/moved-to';

/**
 * The annotation a move into the cluster puts on the node's Service (beside the program's own): the enode the node had
 * on its machine, for `npm run node -- check` (a moved node not yet permissioned at its new enode).
 */
export const MOVED_FROM_ENODE_ANNOTATION = 'lacchain.net/moved-from-enode';

/**
 * What `npm run node` accepts, and its help: its operations and options, each with its meaning (cli/node.ts runs it,
 * cli/node/run.ts does the work).
 */
import type { ToolSpec } from '../cli';

/** The operations of `npm run node`, in the order the help lists them. */
const OPERATIONS = {
  status: "the node's service, peers, block, version, enode, disk and companions (--all: every node, one row each)",
  logs: "the node's recent log (--follow: keep printing)",
  start: 'start the node',
  restart: 'restart the node',
  check: 'the health check: verdict, causes and fixes (--fix: restart once when unhealthy, then check again)',
  backup: 'back the node up now (without --node: every node of the stack)',
  backups: "list the node's backups (without --node: every node's)",
  restore: 'restore a backup (--backup ID, or the newest): the node stops, its data is replaced, it starts',
  rollback: 'go back to the release and data of the backup taken before the last release change',
  move: 'move an SSH node to another machine (--to-host, --to-host-key), into the cluster (--to-kubernetes) or out of it (--from-kubernetes), with its key and data (docs/moving.md)',
} as const;

/** An operation of `npm run node`. */
export type Operation = keyof typeof OPERATIONS;

/** The options of `npm run node`, each with its meaning and the operations it applies to. */
export const NODE_OPTIONS = {
  stack: { type: 'string', value: '<testnet|mainnet>', help: 'the stack whose nodes to act on (required)' },
  node: {
    type: 'string',
    value: 'NAME',
    help: 'the node, by its name in lacchain:nodes (may be left out when the stack has one node)',
  },
  config: { type: 'string', value: 'FILE', help: 'the stack file to read (default Pulumi.<stack>.yaml)' },
  'ssh-key': { type: 'string', value: 'FILE', help: "an SSH node's private key (default: ssh's own)" },
  'ssh-option': {
    type: 'string',
    multiple: true,
    value: 'OPTION',
    help: 'an option for ssh, as ssh -o takes it (ControlMaster=no: a connection per question, not one shared)',
  },
  'rpc-url': {
    type: 'string',
    multiple: true,
    value: '[NODE=]URL',
    help: "a Kubernetes node's RPC (e.g. a port-forward); NODE=URL for one node",
  },
  window: {
    type: 'string',
    value: 'SECONDS',
    help: 'how long the check watches the head move (1 to 600, default 10)',
    for: ['check'],
  },
  follow: { type: 'boolean', help: 'keep printing new log lines', for: ['logs'] },
  fix: { type: 'boolean', help: 'restart an unhealthy node once, then check again', for: ['check'] },
  backup: { type: 'string', value: 'ID', help: 'the backup to restore (default: the newest)', for: ['restore'] },
  'key-file': {
    type: 'string',
    value: 'FILE',
    help: "the node key to put back (when the backup's key is not the stack's)",
    for: ['restore', 'rollback'],
  },
  'to-host': {
    type: 'string',
    value: 'HOST',
    help: 'the machine the node moves to (its inventory host)',
    for: ['move'],
  },
  'to-host-key': {
    type: 'string',
    value: 'KEY',
    help: "the new machine's SSH host key, as inventory host_key takes it (checked on a channel you trust)",
    for: ['move'],
  },
  'to-user': { type: 'string', value: 'USER', help: 'the login user there (default: the same)', for: ['move'] },
  'to-ssh-port': { type: 'string', value: 'PORT', help: 'the SSH port there (default: the same)', for: ['move'] },
  'to-node-ip': {
    type: 'string',
    value: 'IP',
    help: "the enode's address there (default: the new host, when node_ip was the old host)",
    for: ['move'],
  },
  'to-kubernetes': {
    type: 'boolean',
    help: "move an SSH node into the stack's cluster (its values file values/<node>.yml written first)",
    for: ['move'],
  },
  'from-kubernetes': {
    type: 'boolean',
    help: 'move a cluster node onto the machine its stack file entry now names (target: ssh, inventory)',
    for: ['move'],
  },
  'new-key': {
    type: 'boolean',
    help: 'a new key at the new place, made as for a new node: the old key is never carried, the enode changes',
    for: ['move'],
  },
  all: { type: 'boolean', help: 'every node of the stack at a glance, one row each', for: ['status'] },
  json: { type: 'boolean', help: 'the rows of --all as JSON', for: ['status'] },
} as const;

/** What `npm run node` is, for its help and its errors. */
export const NODE_TOOL = {
  command: 'npm run --silent node --',
  usage: '<operation> --stack <testnet|mainnet> [--node NAME] [options]',
  summary:
    'Day-2 operations on the nodes of a stack, from your machine, with ssh or kubectl and the names the program\n' +
    'created. Reads the same settings as pulumi up; needs no Pulumi state or login.',
  operations: OPERATIONS,
  options: NODE_OPTIONS,
  examples: [
    ['status --stack testnet --all', 'every node of the testnet stack at a glance'],
    ['check --stack mainnet --node validator --fix', 'check the validator; restart it once if it is unhealthy'],
    ['logs --stack testnet --node writer --follow', "follow the writer's log"],
    ['restore --stack testnet --node writer --backup 4f2a9c1e', 'put back one backup (backups lists them)'],
    [
      "move --stack testnet --node writer --to-host 203.0.113.20 --to-host-key 'ssh-ed25519 AAAA…'",
      'move the writer to another machine, with its key and data',
    ],
  ],
  exitCodes: '0 healthy or done, 1 unhealthy or failed, 2 a mistake in the command line or the settings.',
} as const satisfies ToolSpec<typeof NODE_OPTIONS>;

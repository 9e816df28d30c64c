/**
 * Key custody: where a node's private key lives, and what each choice costs (`lacchain:nodes[i].keyCustody`).
 * docs/security.md's table and the mainnet policy's advisory are made from these facts.
 */
/** The two deployment paths (a node's `target`). */
export const TARGETS = ['kubernetes', 'ssh'] as const;
export type Target = (typeof TARGETS)[number];

export const KEY_CUSTODIES = ['stack', 'machine', 'secret'] as const;
/** Where a node's private key lives. */
export type KeyCustody = (typeof KEY_CUSTODIES)[number];

/** The custody a node has when its entry names none: today's behaviour. */
export const DEFAULT_KEY_CUSTODY: KeyCustody = 'stack';

/** The entry of the operator's Secret that holds the key, when `keySecretEntry` names none. */
export const DEFAULT_KEY_SECRET_ENTRY = 'key';

/** What one custody means for the operator. */
export interface KeyCustodyFacts {
  /** The deployment path it exists on. */
  targets: readonly Target[];
  /** Where the key lives, in a few words (`npm run node -- check`). */
  where: string;
  /** Who can read the key. */
  readers: string;
  /** What the stack's state holds of it. */
  state: string;
  /** What is lost if the state leaks. */
  stateLeak: string;
  /** What is lost if the machine (or the cluster) is lost. */
  machineLoss: string;
  /** When the enode is known. */
  enodeKnown: string;
}

export const KEY_CUSTODY_FACTS: Record<KeyCustody, KeyCustodyFacts> = {
  stack: {
    targets: ['kubernetes', 'ssh'],
    where: "in the stack's state (a Pulumi secret), copied to the node",
    readers:
      "whoever can decrypt the stack's state (its passphrase or secrets provider); root and the service user on the machine; the namespace's Secret readers on a cluster",
    state: 'the private key, encrypted as a Pulumi secret',
    stateLeak:
      "the key, with the state's passphrase or secrets provider: the node's identity (a validator's signing key)",
    machineLoss: 'nothing: `pulumi up` writes the key to a new machine or cluster',
    enodeKnown: 'before the first start (`pulumi preview` shows it)',
  },
  machine: {
    targets: ['ssh'],
    where: 'on its machine only (made there by the node-key step)',
    readers: 'root and the service user on the machine',
    state: 'the public key only (read back from the machine)',
    stateLeak: 'nothing of the key',
    machineLoss: 'the key, unless you kept a copy: `npm run node -- restore --key-file` puts it on a new machine',
    enodeKnown: 'after the first `pulumi up` (the node-key step reads it back)',
  },
  secret: {
    targets: ['kubernetes'],
    where: "in the operator's Kubernetes Secret (made by their own tooling), mounted into the pod",
    readers: "the namespace's Secret readers, and your secrets manager's (Vault, External Secrets, sealed-secrets)",
    state: "the Secret's name and the public key you give (`publicKey`)",
    stateLeak: 'nothing of the key',
    machineLoss: 'nothing, as long as your secrets manager keeps the key',
    enodeKnown: 'before the first start (from `publicKey`)',
  },
};

/**
 * The line the node-key step prints at every run with machine custody: the public key of the key on the machine, which
 * the program reads from the step's output (core/remote/nodeKeyOutput.ts). Nothing else of the key is ever printed.
 */
export const NODE_PUBLIC_KEY_LINE = 'node-key: public key';

/**
 * What the derived backup password is the HMAC-SHA-256 of, under the node key: changing it would lock every node out
 * of its backups. The program derives it (stack custody); a machine derives the same from its own key (machine custody).
 */
export const BACKUP_PASSWORD_DERIVATION_LABEL = 'lacchain-besu-node backup repository';

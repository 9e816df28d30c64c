/**
 * The node key init makes or reuses (key custody stack): `<stack>-<name>.key` in the key folder (outside any
 * repository, mode 0600), reused on a re-run; its enode and address; stored as a secret of the stack through
 * `pulumi config set` on standard input when the operator says so, else put on the still-to-do list.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { CONFIG_NAMESPACE, DEFAULT_KEY_FOLDER } from '../../core/catalog/defaults';
import { PORTS } from '../../core/catalog/ports';
import { deriveIdentity, generatePrivateKey } from '../../core/identity/nodeKey';
import { shellQuote } from '../../core/remote/shell';
import { UsageError } from '../cli';
import { expandHome, gitWorkTreeOf, readKeyFile, writeNewKeyFile } from '../keyFile';
import { Asker, InitValues, yesNo } from './asker';
import type { NodeChoice, StackFiles } from './nodeChoice';
import type { ToDo } from './stillToDo';

/** What the operator chose for the key: its file, whether to use it (made or reused), and to store it now. */
export interface KeyChoice {
  keyFile: string;
  useKey: boolean;
  /** The key already in the file (a re-run), when it is used. */
  existingKey?: string;
  store: boolean;
}

/** Asks whether to make (or reuse) the node key and to store it as a stack secret; a machine-custody node gets none. */
export async function askNodeKey(
  asker: Asker,
  values: InitValues,
  files: StackFiles,
  node: NodeChoice,
): Promise<KeyChoice> {
  // The key: reused when this node's key file exists (a re-run), else made now if the operator wants.
  const keyDir = path.resolve(expandHome(values['key-dir'] ?? DEFAULT_KEY_FOLDER));
  const keyFile = path.join(keyDir, `${files.stack}-${node.name}.key`);
  const keyExists = fs.existsSync(keyFile);
  // A machine that holds its own key gets none from here: the node-key step makes it there.
  const useKey = node.machineCustody
    ? false
    : await asker.ask(
        'keygen',
        keyExists ? `The node key ${keyFile} exists: use it? [Y/n]` : 'Create the node key now? [Y/n]',
        yesNo(true),
        'yes or no',
      );
  const existingKey = useKey && keyExists ? readKeyFile(keyFile) : undefined;
  if (useKey && !keyExists && gitWorkTreeOf(keyFile)) {
    throw new UsageError(
      `--key-dir: ${keyFile} would be inside the git work tree ${gitWorkTreeOf(keyFile)}: keep node keys outside any repository, e.g. ${DEFAULT_KEY_FOLDER}`,
    );
  }
  const store = useKey
    ? await asker.ask(
        'store-secret',
        'Store it as a secret of the stack now (needs pulumi)? [Y/n]',
        yesNo(true),
        'yes or no',
      )
    : false;
  return { keyFile, useKey, existingKey, store };
}

/** The key made or read, with its identity, and the to-do item storing it when it is not stored yet. */
export interface MadeKey {
  identity?: { enode: string; address: string };
  keyToDo?: ToDo;
}

/**
 * Writes a new key (or reads the one there), derives its enode and address from the node's p2p host and port, and
 * stores it as a secret of the stack when asked (the key on pulumi's standard input: never on a command line).
 */
export function makeNodeKey(
  key: KeyChoice,
  files: StackFiles,
  node: NodeChoice,
  answers: Record<string, unknown>,
): MadeKey {
  if (!key.useKey) return {};
  const { stack, dir } = files;
  const { keyFile, store } = key;
  const keyPath = `${CONFIG_NAMESPACE}:nodeKeys.${node.name}`;
  const secretCommand = `pulumi config set --stack ${stack} --secret --path '${keyPath}' < ${shellQuote(keyFile)}`;
  let privateKey = key.existingKey;
  if (privateKey === undefined) {
    privateKey = generatePrivateKey();
    writeNewKeyFile(keyFile, privateKey);
    process.stdout.write(`wrote ${keyFile} (mode 0600): keep a copy somewhere safe\n`);
  } else {
    process.stdout.write(`using the node key ${keyFile}\n`);
  }
  const p2pHost = (node.target === 'kubernetes' ? answers['p2p.host'] : answers.node_ip) as string;
  const p2pPort = node.target === 'kubernetes' ? Number(answers['p2p.port'] ?? PORTS.p2p) : PORTS.p2p;
  const identity = deriveIdentity(privateKey, p2pHost, p2pPort);
  // The key goes to pulumi on standard input: never on a command line, and no shell runs with the path.
  const stored =
    store &&
    spawnSync('pulumi', ['config', 'set', '--stack', stack, '--secret', '--path', keyPath], {
      cwd: dir,
      input: privateKey,
      stdio: ['pipe', 'inherit', 'inherit'],
    }).status === 0;
  if (store && !stored) process.stdout.write('could not run pulumi: the key is on the list below\n');
  if (stored) return { identity };
  return {
    identity,
    keyToDo: {
      what: `${keyPath}: the node key, as a secret of the stack (else pulumi up makes another key, with another enode):`,
      lines: [{ command: secretCommand }],
    },
  };
}

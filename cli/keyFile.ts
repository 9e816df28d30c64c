/**
 * Node key files on the operator's machine: read with Besu's rules, written with mode 0600 and never overwritten.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { InvalidNodeKeyError, parsePrivateKey } from '../core/identity/nodeKey';
import { DEFAULT_KEY_FOLDER } from '../core/catalog/defaults';
import { ToolFailure } from './cli';

/** Reads and validates a key file; a bad file is a ToolFailure naming the file and the problem. */
export function readKeyFile(file: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ToolFailure(
      `key file ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  try {
    return parsePrivateKey(text);
  } catch (error) {
    if (error instanceof InvalidNodeKeyError) throw new ToolFailure(`key file ${file} ${error.message}`);
    throw error;
  }
}

/** A path with a leading `~` read as the operator's home folder. */
export function expandHome(file: string): string {
  return file === '~' || file.startsWith('~/') ? path.join(os.homedir(), file.slice(1)) : file;
}

/** The git work tree a path would be inside (the nearest folder above it holding `.git`), if any. */
export function gitWorkTreeOf(file: string): string | undefined {
  for (let folder = path.dirname(path.resolve(file)); ; folder = path.dirname(folder)) {
    if (fs.existsSync(path.join(folder, '.git'))) return folder;
    if (path.dirname(folder) === folder) return undefined;
  }
}

/**
 * Writes a new key file (mode 0600, `0x` + 64 hex, no newline, as Besu writes it); refuses to overwrite, and refuses
 * a place inside a git work tree (a key there is one `git add` away from being published).
 */
export function writeNewKeyFile(file: string, privateKey: string): void {
  const tree = gitWorkTreeOf(file);
  if (tree) {
    throw new ToolFailure(
      `key file ${file} would be inside the git work tree ${tree}: write node keys outside any repository, e.g. ${DEFAULT_KEY_FOLDER}/`,
    );
  }
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new ToolFailure(`key file ${file} already exists: refusing to overwrite a node key`);
    throw new ToolFailure(`key file ${file} cannot be created: ${code ?? (error as Error).message}`);
  }
  try {
    fs.writeSync(fd, privateKey);
    fs.fchmodSync(fd, 0o600);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Node key files on the operator's machine: read with Besu's rules, written with mode 0600 and never overwritten.
 */
import * as fs from 'fs';
import { InvalidNodeKeyError, parsePrivateKey } from '../core/identity/nodeKey';
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

/** Writes a new key file (mode 0600, `0x` + 64 hex, no newline, as Besu writes it); refuses to overwrite. */
export function writeNewKeyFile(file: string, privateKey: string): void {
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

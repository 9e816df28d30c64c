/**
 * The project's folder: the one that holds package.json, found upwards from this file, so the files read at run time
 * (scripts/, core/catalog/besu-options/) are found the same whether the program runs from its sources (ts-node) or
 * from its build in bin/ (main.js).
 */
import * as fs from 'fs';
import * as path from 'path';

function projectDirFrom(dir: string): string {
  if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  const parent = path.dirname(dir);
  if (parent === dir) throw new Error(`no package.json above ${__dirname}: not inside the project`);
  return projectDirFrom(parent);
}

/** The project's folder. */
export const PROJECT_DIR = projectDirFrom(__dirname);

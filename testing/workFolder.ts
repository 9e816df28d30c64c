/**
 * A test file's temporary work folder: made under the system's temporary folder, removed when its tests are done.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * A new folder `<prefix>XXXXXX` under the system's temporary folder, removed after the tests of the file (of the
 * describe block, when one calls it).
 */
export function workFolder(prefix: string): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));
  return folder;
}

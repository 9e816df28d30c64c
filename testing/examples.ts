/**
 * The example stacks as an operator completes them before a deploy: the commented image digests their comments ask
 * for (values files: `# imageDigest: sha256:<64 hex digits>`; stack file: the commented `lacchain:companions` block)
 * uncommented and given. The digests are the tests' own made-up ones: the examples never hold a digest.
 */
import * as fs from 'fs';
import * as path from 'path';
import { stackConfigFileName } from '../core/catalog/defaults';
import type { StackName } from '../core/catalog/networks';
import { TEST_KEY_IMAGE_DIGESTS } from './fixtures';
import { PROJECT_DIR } from './run';

/** What the examples write where a digest goes. */
const PLACEHOLDER = 'sha256:<64 hex digits>';

/** Replaces a pattern that must be in the file: an example without it fails the test instead of passing unpinned. */
function replaceIn(file: string, pattern: RegExp, replacement: string, text: string): string {
  if (!pattern.test(text)) throw new Error(`${file}: no ${pattern} to fill in`);
  return text.replace(pattern, replacement);
}

/**
 * Copies the example stack `stack` (its stack file and the values files) into `dir` with its images pinned by the
 * tests' digests, and returns the copied stack file's path.
 */
export function pinnedExample(stack: StackName, dir: string): string {
  const stackFile = stackConfigFileName(stack);
  let config = fs.readFileSync(path.join(PROJECT_DIR, stackFile), 'utf8');
  const block = /^ {2}# lacchain:companions:\n {2}# {3}(relaySigner|rotationValidator):\n {2}# {5}imageDigest: (.*)$/m;
  const companion = block.exec(config)?.[1] as 'relaySigner' | 'rotationValidator' | undefined;
  config = replaceIn(
    stackFile,
    block,
    `  lacchain:companions:\n    ${companion}:\n      imageDigest: ${companion && TEST_KEY_IMAGE_DIGESTS[companion]}`,
    config,
  );
  fs.mkdirSync(path.join(dir, 'values'), { recursive: true });
  fs.writeFileSync(path.join(dir, stackFile), config);
  for (const file of fs.readdirSync(path.join(PROJECT_DIR, 'values'))) {
    const name = path.join('values', file);
    const values = replaceIn(
      name,
      new RegExp(`^( {2})# imageDigest: ${PLACEHOLDER.replace(/[<>]/g, '\\$&')}$`, 'm'),
      `$1imageDigest: ${TEST_KEY_IMAGE_DIGESTS.besu}`,
      fs.readFileSync(path.join(PROJECT_DIR, name), 'utf8'),
    );
    fs.writeFileSync(path.join(dir, name), values);
  }
  return path.join(dir, stackFile);
}

/**
 * The example stacks as an operator completes them before a deploy: their example nodes in (the stock files hold none),
 * the commented image digests their comments ask
 * for (values files: `# imageDigest: sha256:<64 hex digits>`, and the backups' `# backupImageDigest: …` and
 * `# kubectlImageDigest: …`; stack file: the commented `lacchain:companions` block)
 * uncommented and given, and, on mainnet, which refuses the examples' documentation addresses, the node's public
 * address in their place. The digests and addresses are the tests' own made-up ones: the examples never hold one.
 */
import * as fs from 'fs';
import * as path from 'path';
import { stackConfigFileName } from '../core/catalog/defaults';
import { networkOfStack, StackName } from '../core/catalog/networks';
import { testPublicIp, TEST_BACKUP_IMAGE_DIGESTS, TEST_KEY_IMAGE_DIGESTS } from './fixtures';
import { PROJECT_DIR } from './run';

/** The Kubernetes nodes the stock stack files show as examples (commented out there: the files hold no node). */
export const EXAMPLE_NODES = { testnet: ['writer'], mainnet: ['validator', 'bootnode'] } as const;

/** The stock stack file's text with its example nodes in, as an operator who added them (`npm run init`) has it. */
export function stockStackWithExamples(stack: StackName): string {
  const stock = fs.readFileSync(path.join(PROJECT_DIR, stackConfigFileName(stack)), 'utf8');
  const empty = '  lacchain:nodes: []\n';
  if (!stock.includes(empty)) throw new Error(`${stackConfigFileName(stack)} no longer ships with ${empty.trim()}`);
  const entries = EXAMPLE_NODES[stack].map(
    (type) =>
      `    # A ${type} on your Kubernetes cluster; its settings are in values/${type}.yml (deploy section).\n` +
      `    - name: ${type}\n      typenode: ${type}\n      target: kubernetes\n`,
  );
  return stock.replace(empty, `  lacchain:nodes:\n${entries.join('')}`);
}

/** What the examples write where a digest goes. */
const PLACEHOLDER = 'sha256:<64 hex digits>';

/** The documentation addresses the examples give as a node's public IP and p2p host. */
const EXAMPLE_ADDRESS = /\b203\.0\.113\.(\d+)\b/g;

/** Replaces a pattern that must be in the file: an example without it fails the test instead of passing unpinned. */
function replaceIn(file: string, pattern: RegExp, replacement: string, text: string): string {
  if (!pattern.test(text)) throw new Error(`${file}: no ${pattern} to fill in`);
  return text.replace(pattern, replacement);
}

/**
 * The files of the example stack `stack` (its stack file and the values files, by their path in the project) as an
 * operator completes them: on a network that refuses documentation addresses, its values files with public ones;
 * unless `pin` is false, the images that receive the node key or touch its data pinned by the tests' digests.
 */
export function completedExample(stack: StackName, { pin = true }: { pin?: boolean } = {}): Record<string, string> {
  const stackFile = stackConfigFileName(stack);
  const network = networkOfStack(stack);
  let config = stockStackWithExamples(stack);
  const block = /^ {2}# lacchain:companions:\n {2}# {3}(relaySigner|rotationValidator):\n {2}# {5}imageDigest: (.*)$/m;
  const companion = block.exec(config)?.[1] as 'relaySigner' | 'rotationValidator' | undefined;
  if (pin) {
    config = replaceIn(
      stackFile,
      block,
      `  lacchain:companions:\n    ${companion}:\n      imageDigest: ${companion && TEST_KEY_IMAGE_DIGESTS[companion]}`,
      config,
    );
  }
  const files: Record<string, string> = { [stackFile]: config };
  for (const file of fs.readdirSync(path.join(PROJECT_DIR, 'values'))) {
    const name = path.join('values', file);
    let values = fs.readFileSync(path.join(PROJECT_DIR, name), 'utf8');
    if (pin) {
      const digests = { imageDigest: TEST_KEY_IMAGE_DIGESTS.besu, ...TEST_BACKUP_IMAGE_DIGESTS };
      for (const [key, digest] of Object.entries(digests)) {
        values = replaceIn(
          name,
          new RegExp(`^( {2})# ${key}: ${PLACEHOLDER.replace(/[<>]/g, '\\$&')}$`, 'm'),
          `$1${key}: ${digest}`,
          values,
        );
      }
    }
    if (new RegExp(`^ {2}network: ${network.helmName}\\b`, 'm').test(values)) {
      values = values.replace(EXAMPLE_ADDRESS, (_, last: string) => testPublicIp(Number(last)));
    }
    files[name] = values;
  }
  return files;
}

/** The files of the example stack `stack` as shipped, its example nodes in: nothing else completed. */
export function exampleAsGiven(stack: StackName): Record<string, string> {
  const files: Record<string, string> = { [stackConfigFileName(stack)]: stockStackWithExamples(stack) };
  for (const file of fs.readdirSync(path.join(PROJECT_DIR, 'values'))) {
    files[path.join('values', file)] = fs.readFileSync(path.join(PROJECT_DIR, 'values', file), 'utf8');
  }
  return files;
}

/** Writes files (by path in a project) into `dir`, and returns the path of the stack file `stack` among them. */
export function writeProject(stack: StackName, files: Record<string, string>, dir: string): string {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return path.join(dir, stackConfigFileName(stack));
}

/**
 * Copies the example stack `stack` into `dir` completed as completedExample does (its images pinned by the tests'
 * digests), and returns the copied stack file's path.
 */
export function pinnedExample(stack: StackName, dir: string): string {
  return writeProject(stack, completedExample(stack), dir);
}

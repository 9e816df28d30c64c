/**
 * The work of `npm run monitoring` (cli/monitoring.ts): reads the stack's settings as the program does, what is
 * already in the folder (the token's file, the saved certificates) and the nodes' outputs when given; writes the
 * files core/monitoring/stackScrape.ts makes, and says what it wrote, how each node is scraped and what is still to do.
 */
import * as fs from 'fs';
import * as path from 'path';
import { DEFAULT_MONITORING_FOLDER, STACK_MONITORING_FILES } from '../../core/catalog/metrics';
import { certificateFile, fingerprintsFromOutputs, stackScrape, TokenFileState } from '../../core/monitoring/stackScrape';
import { loadOperatorStack } from '../operatorStack';
import { CommandLine, EXIT, ToolFailure, UsageError } from '../cli';
import { expandHome, gitWorkTreeOf } from '../keyFile';
import type { MONITORING_TOOL } from './spec';

/** The largest certificate or outputs file read (a certificate is about 1.3 KiB, the outputs a few KiB). */
const MAX_READ_BYTES = 1024 * 1024;

const say = (line: string) => process.stdout.write(`${line}\n`);

/** A small file's text, or undefined when it does not exist; anything else that stops reading it is a ToolFailure. */
function readSmallFile(file: string, what: string): string | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ToolFailure(`${what} ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  if (!stat.isFile() || stat.size > MAX_READ_BYTES) {
    throw new ToolFailure(`${what} ${file} is not a file of at most ${MAX_READ_BYTES} bytes`);
  }
  return fs.readFileSync(file, 'utf8');
}

/** Whether the token's file is there, holds something, and is kept from other users. */
function tokenFileState(file: string): TokenFileState {
  try {
    const stat = fs.statSync(file);
    if (stat.size === 0) return 'empty';
    return (stat.mode & 0o077) !== 0 ? 'readable-by-others' : 'ok';
  } catch {
    return 'missing';
  }
}

export async function run({ values }: CommandLine<(typeof MONITORING_TOOL)['options']>): Promise<number> {
  if (!values.stack) throw new UsageError('--stack is required: the stack whose nodes are scraped (testnet, mainnet)');
  // The scrape configuration logs in nowhere: the SSH key may not be set on the machine that writes it.
  const { stack, settings } = loadOperatorStack(values.stack, values.config);
  const dir = path.resolve(expandHome(values.out ?? `${DEFAULT_MONITORING_FOLDER}/${stack}`));
  const tokenGiven = values['token-file'] === undefined ? undefined : path.resolve(expandHome(values['token-file']));
  const tokenShown = tokenGiven ?? path.join(dir, STACK_MONITORING_FILES.token);
  const tree = gitWorkTreeOf(tokenShown);
  if (tree) {
    throw new UsageError(
      `the metrics token's file ${tokenShown} would be inside the git work tree ${tree}: ` +
        `write into a folder outside any repository (--out DIR, default ${DEFAULT_MONITORING_FOLDER}/${stack}), or name the token's file with --token-file`,
    );
  }
  let fingerprints: Record<string, string | undefined> | undefined;
  if (values.outputs !== undefined) {
    const file = path.resolve(expandHome(values.outputs));
    const text = readSmallFile(file, '--outputs');
    if (text === undefined) throw new UsageError(`--outputs: ${file} does not exist`);
    try {
      fingerprints = fingerprintsFromOutputs(text);
    } catch (error) {
      throw new UsageError(`--outputs: ${file}: ${(error as Error).message}`);
    }
  }
  const certificates: Record<string, string | undefined> = {};
  for (const node of settings.nodes) {
    if (node.target !== 'ssh' || !node.metricsEndpoint) continue;
    certificates[node.name] = readSmallFile(path.join(dir, certificateFile(node.name)), 'certificate');
  }

  const result = stackScrape({
    settings,
    dir,
    tokenFile: {
      configured: tokenGiven ?? STACK_MONITORING_FILES.token,
      shown: tokenShown,
      state: tokenFileState(tokenShown),
    },
    certificates,
    fingerprints,
  });
  if (result.files.length > 0) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const file of result.files) {
    const target = path.join(dir, file.name);
    fs.writeFileSync(target, file.text);
    say(`wrote ${target}: ${file.what}`);
  }
  say(`the nodes of stack ${stack}:`);
  for (const line of result.nodes) say(`  ${line}`);
  if (result.todo.length > 0) {
    say('still to do:');
    result.todo.forEach((line, i) => say(`  ${i + 1}. ${line}`));
  }
  if (result.problems.length > 0) throw new ToolFailure(result.problems.join('\nerror: '));
  if (result.files.length === 0) {
    throw new ToolFailure(`nothing written: no node of stack ${stack} can be scraped yet (still to do, above)`);
  }
  return EXIT.ok;
}

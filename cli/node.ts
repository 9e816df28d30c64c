/**
 * `npm run node -- <operation> --stack <testnet|mainnet> [options]`: day-2 operations on the nodes of a stack.
 * Its options and help are in cli/node/spec.ts; the work, in cli/node/run.ts, is loaded only to do it, so `--help`
 * and a mistake in the command line answer at once.
 */
import { runCli } from './cli';
import { NODE_TOOL } from './node/spec';

runCli(NODE_TOOL, async (line) => (await import('./node/run')).run(line));

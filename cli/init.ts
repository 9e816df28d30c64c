/**
 * `npm run init -- --stack <testnet|mainnet> [flags]`: the guided setup. Its options and help are in
 * cli/init/spec.ts; the work, in cli/init/run.ts, is loaded only to do it.
 */
import { runCli } from './cli';
import { INIT_TOOL } from './init/spec';

runCli(INIT_TOOL, async (line) => (await import('./init/run')).run(line));

/**
 * `npm run monitoring -- --stack <testnet|mainnet> [--out DIR] [--token-file FILE] [--outputs FILE] [--config FILE]`:
 * writes the monitoring files of the operator's own stack (its nodes' scrape configuration and the alert rules), says
 * what it wrote, one line per file, and what is still to do. Its options and help are in cli/monitoring/spec.ts;
 * the work, in cli/monitoring/run.ts, is loaded only to do it, so `--help` and a mistake in the command line answer at once.
 */
import { runCli } from './cli';
import { MONITORING_TOOL } from './monitoring/spec';

runCli(MONITORING_TOOL, async (line) => (await import('./monitoring/run')).run(line));

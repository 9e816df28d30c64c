/**
 * `npm run --silent identity -- --key-file FILE --host HOST [--port PORT]`: prints a node key's public identity as JSON: {"publicKey","enode","address"}. Never prints the private key.
 *
 * Its options and help are in cli/identity/spec.ts; the work, in cli/identity/run.ts, is loaded only to do it,
 * so `--help` and a mistake in the command line answer at once.
 */
import { runCli } from './cli';
import { IDENTITY_TOOL } from './identity/spec';

runCli(IDENTITY_TOOL, async (line) => (await import('./identity/run')).run(line));

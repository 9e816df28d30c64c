/**
 * `npm run --silent keygen -- --out FILE [--host HOST] [--port PORT]`: writes a new node key file (mode 0600, refuses to overwrite, refuses a place inside a git work tree; `~` is the
 * home folder) and prints the identity as JSON
 * ({"keyFile","publicKey","address"} and, with --host, "enode"). Never prints the private key.
 *
 * Its options and help are in cli/keygen/spec.ts; the work, in cli/keygen/run.ts, is loaded only to do it,
 * so `--help` and a mistake in the command line answer at once.
 */
import { runCli } from './cli';
import { KEYGEN_TOOL } from './keygen/spec';

runCli(KEYGEN_TOOL, async (line) => (await import('./keygen/run')).run(line));

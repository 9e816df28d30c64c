/**
 * The --host and --port options of the identity tools' specs (keygen, identity): only what their help and their
 * command line's parse need, so `--help` loads no settings rule (their check is cli/hostPort.ts, loaded with the work).
 */
import { PORTS } from '../core/catalog/ports';

/** The --host and --port options of a tool's spec, --host's help in the tool's own words. */
export function hostPortOptions(hostHelp: string) {
  return {
    host: { type: 'string', value: 'HOST', help: hostHelp },
    port: { type: 'string', value: 'PORT', help: `the p2p port of the enode (default ${PORTS.p2p})` },
  } as const;
}

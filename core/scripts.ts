/**
 * The scripts that run on remote machines and in pods live as real files under scripts/ (shellcheck-clean,
 * reviewable, tested on a real host); the program reads them from there, byte for byte.
 */
import * as fs from 'fs';
import * as path from 'path';
import { PROJECT_DIR } from './projectDir';

/** The scripts folder of the project. */
export const SCRIPTS_DIR = path.join(PROJECT_DIR, 'scripts');

/** The start step of a node on both paths: refuses to start Besu without the node key. */
export const START_NODE_SCRIPT = 'start-node.sh';

/** The start of a companion service on a machine: the node key into its environment, then its executable. */
export const START_COMPANION_SCRIPT = 'start-companion.sh';

/** The start of a companion service that runs from a container image on a machine: podman, as the service user. */
export const START_CONTAINER_COMPANION_SCRIPT = 'start-container-companion.sh';

/** A machine's metrics relay: Besu's metrics pushed to the network's gateway (core/remote/metricsRelay.ts). */
export const METRICS_RELAY_SCRIPT = 'metrics-relay.sh';

/** A pod's metrics relay, run by Java's source launcher in Besu's image (core/kubernetes/monitoring.ts). */
export const POD_METRICS_RELAY_SCRIPT = 'metrics-relay.java';

/** The helpers every remote step may call, sent before each step's own script (core/remote/shell.ts stepScript). */
export const REMOTE_LIBRARY_SCRIPT = 'remote/lib.sh';

/** The text of a script, by its path under scripts/. */
export function readScript(relativePath: string): string {
  return fs.readFileSync(path.join(SCRIPTS_DIR, relativePath), 'utf8');
}

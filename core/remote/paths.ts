/**
 * Where a remote node's files are, from its settings.
 */
import { infoLogPath, NODE_HOME_LAYOUT } from '../catalog/remote';
import { BESU_FILES } from '../catalog/besu';
import type { SshNodeSettings } from '../settings/model';

/** Every path of a remote node. */
export function nodePaths(node: SshNodeSettings) {
  const home = node.nodeHome;
  return {
    home,
    config: `${home}/${NODE_HOME_LAYOUT.config}`,
    dataDir: `${home}/${NODE_HOME_LAYOUT.dataDir}`,
    key: `${home}/${NODE_HOME_LAYOUT.key}`,
    nodeAddress: `${home}/${NODE_HOME_LAYOUT.nodeAddress}`,
    enode: `${home}/${NODE_HOME_LAYOUT.enode}`,
    /** With machine custody, the public key the machine's key was accepted with (root's). */
    machineKeyRecord: `${home}/${NODE_HOME_LAYOUT.machineKeyRecord}`,
    /** The health gate's record of the last rollout that restarted the node (root's). */
    rolloutRecord: `${home}/${NODE_HOME_LAYOUT.rolloutRecord}`,
    genesis: `${home}/${NODE_HOME_LAYOUT.genesis}`,
    logsDir: `${home}/${NODE_HOME_LAYOUT.logsDir}`,
    binDir: `${home}/${NODE_HOME_LAYOUT.binDir}`,
    launcher: `${home}/${NODE_HOME_LAYOUT.launcher}`,
    tlsDir: `${home}/${NODE_HOME_LAYOUT.tlsDir}`,
    /** The RPC credentials file (password authentication), mode 0600, owned by the service user. */
    rpcCredentials: `${home}/${BESU_FILES.rpcCredentials}`,
    /** The JWT public key (jwt authentication). */
    rpcJwtPublicKey: `${home}/${BESU_FILES.rpcJwtPublicKey}`,
    infoLog: infoLogPath(home, node.serviceName),
    /** One folder per Besu release, beside a `current` and a `previous` link. */
    releasesDir: `${home}/${NODE_HOME_LAYOUT.releasesDir}`,
    /** The companion services' folders, one each, and the files every companion's service reads. */
    companionsDir: `${home}/${NODE_HOME_LAYOUT.companionsDir}`,
    companionLauncher: `${home}/${NODE_HOME_LAYOUT.companionLauncher}`,
    containerCompanionLauncher: `${home}/${NODE_HOME_LAYOUT.containerCompanionLauncher}`,
    webSocketFence: `${home}/${NODE_HOME_LAYOUT.webSocketFence}`,
    /** Besu through the `current` link, so switching releases is one link change. */
    besuBinary: `${home}/${NODE_HOME_LAYOUT.releasesDir}/current/bin/besu`,
  };
}

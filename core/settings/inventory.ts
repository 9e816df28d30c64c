/**
 * An SSH node's settings: the `inventory` of its entry in `lacchain:nodes` (the reference Ansible inventory's fields).
 */
import { DEFAULT_RELEASE_URL } from '../catalog/besu';
import { DEFAULT_NODE_HOME, DEFAULT_NODE_SERVICE } from '../catalog/defaults';
import type { Network } from '../catalog/networks';
import { PORTS } from '../catalog/ports';
import type { RpcSettings, SshNodeSettings } from './model';
import { describeGiven, Problem } from './problems';
import type { StackNodeInput } from './schema';

/** An SSH node of the stack, from its entry in `lacchain:nodes`. */
export function sshNode(
  entry: StackNodeInput,
  key: string,
  network: Network,
  file: string,
  problems: Problem[],
  rpc: RpcSettings,
): SshNodeSettings | undefined {
  if (entry.values !== undefined) {
    problems.push({
      file,
      key: `${key}.values`,
      given: describeGiven(entry.values),
      allowed: 'no values file for an ssh node: its settings are its inventory',
    });
  }
  const inventory = entry.inventory;
  if (!inventory) {
    problems.push({
      file,
      key: `${key}.inventory`,
      given: 'missing',
      allowed: 'the inventory of an ssh node: host, node_ip, node_name, node_email (and optional fields)',
    });
    return undefined;
  }
  return {
    name: entry.name,
    typenode: entry.typenode,
    target: 'ssh',
    network,
    nodeName: inventory.node_name,
    nodeEmail: inventory.node_email,
    p2pHost: inventory.node_ip,
    p2pPort: PORTS.p2p,
    releaseVersion: inventory.node_release_version ?? network.defaultBesuVersion,
    dnsName: inventory.dns_name,
    settingsFile: file,
    host: inventory.host,
    sshPort: inventory.port,
    user: inventory.user,
    hostKey: inventory.host_key,
    nodeHome: inventory.node_home ?? DEFAULT_NODE_HOME,
    serviceName: inventory.node_service ?? DEFAULT_NODE_SERVICE,
    releaseUrl: inventory.release_url ?? DEFAULT_RELEASE_URL,
    allowBelowMinimumHardware: inventory.allow_below_minimum_hardware,
    rpc,
  };
}

/**
 * A Kubernetes node's settings: its values file (`values/<typenode>.yml`, the `deploy` section), read, parsed and
 * cross-checked against the stack.
 */
import * as path from 'path';
import { defaultValuesFile, DEFAULT_NAMESPACE } from '../catalog/defaults';
import { findNetwork, Network } from '../catalog/networks';
import { NODE_TYPE_FACTS } from '../catalog/nodeTypes';
import { quantityBytes } from '../quantity';
import type { FileReader, RawStackConfig } from './sources';
import type { KubernetesNodeSettings, RpcSettings } from './model';
import { describeGiven, Problem, problemsFromZod } from './problems';
import { BackupsInput, DeployInput, LoadBalancerInput, StackNodeInput, valuesFileSchema } from './schema';
import {
  DEFAULT_LOAD_BALANCER_CLOUD,
  LOAD_BALANCER_CLOUD_FIELDS,
  LOAD_BALANCER_CLOUDS,
} from '../catalog/loadBalancers';
import { clusterBackups } from './backups';
import { publicAddressProblem } from './fields';
import { NO_CLUSTER_MONITORING } from './monitoring';
import { readKeyCustody } from './keyCustody';
import { parseYamlFile, readSettingsFile } from './settingsFiles';

/** A Kubernetes node of the stack, from its entry in `lacchain:nodes` and its values file. */
export function kubernetesNode(
  entry: StackNodeInput,
  key: string,
  network: Network,
  raw: RawStackConfig,
  readFile: FileReader,
  problems: Problem[],
  rpc: RpcSettings,
  backups: BackupsInput | undefined,
): KubernetesNodeSettings | undefined {
  if (entry.inventory !== undefined) {
    problems.push({
      file: raw.file,
      key: `${key}.inventory`,
      given: 'given an inventory',
      allowed: 'no inventory for a kubernetes node: its settings are in its values file',
    });
  }
  const loaded = readDeploy(entry, network, raw, readFile, problems);
  if (!loaded) return undefined;
  const { deploy, file } = loaded;
  return {
    name: entry.name,
    typenode: entry.typenode,
    target: 'kubernetes',
    ...readKeyCustody(entry, 'kubernetes', key, raw.file, problems),
    network,
    nodeName: deploy.nodeName,
    nodeEmail: deploy.nodeEmail,
    p2pHost: deploy.p2p.host,
    p2pPort: deploy.p2p.port,
    releaseVersion: deploy.releaseVersion ?? network.defaultBesuVersion,
    dnsName: deploy.dnsName,
    settingsFile: file,
    valuesFile: file,
    publicIP: deploy.publicIP,
    loadBalancer: deploy.loadBalancer ?? { cloud: DEFAULT_LOAD_BALANCER_CLOUD },
    workerName: deploy.workerName,
    namespace: deploy.namespace ?? DEFAULT_NAMESPACE,
    storageClass: deploy.storageClass,
    volumeSize: deploy.volumeSize ?? network.volumeSize,
    imageDigest: deploy.imageDigest,
    proxyImageDigest: deploy.proxyImageDigest,
    volumeSnapshotClass: deploy.volumeSnapshotClass,
    backupImageDigest: deploy.backupImageDigest,
    kubectlImageDigest: deploy.kubectlImageDigest,
    rpc,
    companions: [],
    backups: clusterBackups(backups, raw.file, problems),
    // The stack's `lacchain:monitoring`, set by the loader once for every cluster node.
    monitoring: NO_CLUSTER_MONITORING,
  };
}

/** Reads, parses and cross-checks a Kubernetes node's values file. */
export function readDeploy(
  entry: Pick<StackNodeInput, 'typenode' | 'values'>,
  network: Network,
  raw: RawStackConfig,
  readFile: FileReader,
  problems: Problem[],
): { deploy: DeployInput; file: string } | undefined {
  const file = entry.values ?? defaultValuesFile(entry.typenode);
  const document = parseYamlFile(
    file,
    readSettingsFile(file, path.resolve(raw.baseDir, file), readFile, problems),
    problems,
    Object.keys(valuesFileSchema.shape),
  );
  if (document === undefined) return undefined;
  const parsed = valuesFileSchema.safeParse(document, { reportInput: true });
  if (!parsed.success) {
    problems.push(...problemsFromZod(file, '', parsed.error));
    return undefined;
  }
  const deploy = parsed.data.deploy;
  const named = findNetwork(deploy.network);
  if (!named || named.name !== network.name || deploy.network !== named.helmName) {
    problems.push({
      file,
      key: 'deploy.network',
      given: describeGiven(deploy.network),
      allowed: named?.deprecated
        ? `${network.helmName} — ${named.deprecated}`
        : `${network.helmName} (the Helm name of ${network.name}, the network of this stack)`,
    });
  }
  if (deploy.typenode !== entry.typenode) {
    problems.push({
      file,
      key: 'deploy.typenode',
      given: describeGiven(deploy.typenode),
      allowed: `${entry.typenode} (the node's typenode in ${raw.file})`,
    });
  }
  if (deploy.proxyImageDigest !== undefined && !NODE_TYPE_FACTS[deploy.typenode].reverseProxy) {
    problems.push({
      file,
      key: 'deploy.proxyImageDigest',
      given: describeGiven(deploy.proxyImageDigest),
      allowed: `no proxyImageDigest for a ${deploy.typenode}: only writers run the reverse proxy`,
    });
  }
  checkVolume(deploy.volumeSize, network, file, problems);
  if (deploy.loadBalancer) problems.push(...loadBalancerProblems(deploy.loadBalancer, file));
  for (const [key, ip] of [
    ['deploy.publicIP', deploy.publicIP],
    ['deploy.p2p.host', deploy.p2p.host],
  ] as const) {
    const problem = publicAddressProblem(ip, network, file, key);
    if (problem) problems.push(problem);
  }
  return { deploy, file };
}

function checkVolume(volumeSize: string | undefined, network: Network, file: string, problems: Problem[]): void {
  if (volumeSize === undefined || !network.enforceMinimumHardware) return;
  if ((quantityBytes(volumeSize) ?? 0) < (quantityBytes(network.volumeSize) ?? 0)) {
    problems.push({
      file,
      key: 'deploy.volumeSize',
      given: describeGiven(volumeSize),
      allowed: `at least ${network.volumeSize} on ${network.name}`,
    });
  }
}

/** The load balancer's fields checked against its cloud: each cloud's own, its required one, as many subnets as IPs. */
function loadBalancerProblems(loadBalancer: LoadBalancerInput, file: string): Problem[] {
  const { cloud } = loadBalancer;
  const key = (field: string) => `deploy.loadBalancer.${field}`;
  const problems: Problem[] = [];
  const fields = LOAD_BALANCER_CLOUD_FIELDS;
  for (const field of Object.keys(loadBalancer) as Array<keyof LoadBalancerInput>) {
    if (field === 'cloud' || loadBalancer[field] === undefined || fields[cloud].reads.includes(field)) continue;
    const owners = LOAD_BALANCER_CLOUDS.filter((c) => fields[c].reads.includes(field));
    problems.push({
      file,
      key: key(field),
      given: describeGiven(loadBalancer[field]),
      allowed: `no ${field} with cloud ${cloud}: it is read with cloud ${owners.join(' or ')}`,
    });
  }
  const required = fields[cloud].requires as keyof LoadBalancerInput | undefined;
  if (required && loadBalancer[required] === undefined) {
    problems.push({
      file,
      key: key(required),
      given: 'missing',
      allowed:
        cloud === 'aws'
          ? 'the Elastic IP allocation of deploy.publicIP (eipalloc-…), required with cloud aws: without it the NLB gets changing addresses and a DNS name, not the permissioned IP'
          : "the resource group of deploy.publicIP's public IP, required with cloud azure",
    });
  }
  const { eipAllocations, subnets } = loadBalancer;
  if (cloud === 'aws' && eipAllocations && subnets && subnets.length !== eipAllocations.length) {
    problems.push({
      file,
      key: key('subnets'),
      given: describeGiven(subnets),
      allowed: `as many subnets as eipAllocations (${eipAllocations.length}), one Elastic IP per subnet, in the same order`,
    });
  }
  return problems;
}

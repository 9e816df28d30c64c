/**
 * Rules on the node's identity and its place in the network: pinned to its worker, on its static public IP,
 * advertising its permissioned address, with on-chain node permissioning on.
 */
import { IDENTITY_ANNOTATIONS } from '../../core/catalog/kubernetes';
import { ANY_CLOUD_IP_ANNOTATIONS } from '../../core/catalog/loadBalancers';
import { enodeEndpoint } from '../../core/identity/nodeKey';
import { at, isOpaque, kubernetesNodeOf, TYPES } from '../inspect';
import { describeResource, expectedNode, networkOf, remoteParameters, Rule, withConfig } from './common';

export const podPinnedToWorker: Rule = {
  name: 'pod-pinned-to-worker',
  description:
    "The node's pod is pinned to the worker its settings name (deploy.workerName), so its egress IP, part of its " +
    'permissioned identity, never changes.',
  types: [TYPES.statefulSet],
  check(resource, context) {
    const where = describeResource(resource);
    const worker = at(resource.inputs, 'spec', 'template', 'spec', 'nodeName');
    if (isOpaque(worker)) return [];
    if (typeof worker !== 'string' || worker === '') {
      return [`${where}: the pod is not pinned to a worker (spec.template.spec.nodeName is not set)`];
    }
    const expected = expectedNode(context, kubernetesNodeOf(resource), where);
    if (typeof expected === 'string') return [expected];
    return worker === expected.workerName
      ? []
      : [`${where}: the pod is pinned to worker "${worker}", but deploy.workerName is "${expected.workerName}"`];
  },
};

export const serviceOnPublicIp: Rule = {
  name: 'service-static-public-ip',
  description:
    "The node's LoadBalancer Service asks its cloud's load balancer for the static IP its settings name " +
    '(deploy.publicIP, deploy.loadBalancer): spec.loadBalancerIP (every cloud but aws and metallb) and each ' +
    "annotation the cloud reads (aws: the NLB's Elastic IP allocations).",
  types: [TYPES.service],
  check(resource, context) {
    const where = describeResource(resource);
    const problems: string[] = [];
    const type = at(resource.inputs, 'spec', 'type');
    if (type !== 'LoadBalancer' && !isOpaque(type)) {
      problems.push(`${where}: type is ${JSON.stringify(type)}, not LoadBalancer: the node has no static public IP`);
    }
    const expected = expectedNode(context, kubernetesNodeOf(resource), where);
    if (typeof expected === 'string') problems.push(expected);
    const ip = at(resource.inputs, 'spec', 'loadBalancerIP');
    const wantedFields = typeof expected !== 'string' ? expected.loadBalancer : undefined;
    const wantedIp = wantedFields ? wantedFields.loadBalancerIP : undefined;
    if (isOpaque(ip)) {
      // Known after pulumi up: nothing to compare.
    } else if (wantedFields && wantedIp === undefined) {
      if (ip !== undefined) {
        problems.push(`${where}: spec.loadBalancerIP is ${JSON.stringify(ip)}, but this cloud ignores it`);
      }
    } else if (typeof ip !== 'string' || ip === '') {
      problems.push(`${where}: spec.loadBalancerIP is not set: the Service would get a changing IP`);
    } else if (wantedIp !== undefined && ip !== wantedIp) {
      problems.push(`${where}: spec.loadBalancerIP is ${JSON.stringify(ip)}, but deploy.publicIP is "${wantedIp}"`);
    }
    // Without the settings, the IP annotations must at least agree with spec.loadBalancerIP.
    const wanted: Record<string, string> = wantedFields
      ? wantedFields.annotations
      : typeof ip === 'string' && ip
        ? Object.fromEntries(ANY_CLOUD_IP_ANNOTATIONS.map((annotation) => [annotation, ip]))
        : {};
    for (const [annotation, value] of Object.entries(wanted)) {
      const given = at(resource.inputs, 'metadata', 'annotations', annotation);
      if (isOpaque(given) || given === value) continue;
      const shown = given === undefined ? 'missing' : JSON.stringify(given);
      const publicIp = typeof expected !== 'string' ? expected.publicIP : ip;
      const what =
        value === publicIp
          ? `the public IP ${JSON.stringify(value)}`
          : `${JSON.stringify(value)} (deploy.loadBalancer)`;
      problems.push(`${where}: annotation ${annotation} is ${shown}, not ${what}`);
    }
    return problems;
  },
};

export const p2pHostIsPermissionedIp: Rule = {
  name: 'p2p-host-is-permissioned-ip',
  description:
    'The node advertises the permissioned address its settings name (deploy.p2p.host or inventory.node_ip, with ' +
    "its p2p port): config.toml's p2p-host and p2p-port, no NAT detection, and the enode the node is known by.",
  types: [TYPES.configMap, TYPES.service, TYPES.command],
  check(resource, context) {
    const where = describeResource(resource);
    const endpointProblems = (enode: unknown, node: string | undefined, what: string): string[] => {
      const endpoint = enodeEndpoint(enode);
      if (isOpaque(enode) || enode === undefined || enode === '') return [];
      const expected = expectedNode(context, node, where);
      if (typeof expected === 'string') return [expected];
      if (endpoint && endpoint.host === expected.p2pHost && endpoint.port === expected.p2pPort) return [];
      return [`${where}: ${what} ${String(enode)} does not end in @${expected.p2pHost}:${expected.p2pPort}`];
    };
    if (resource.type === TYPES.service) {
      const enode = at(resource.inputs, 'metadata', 'annotations', IDENTITY_ANNOTATIONS.enode);
      return endpointProblems(enode, kubernetesNodeOf(resource), `annotation ${IDENTITY_ANNOTATIONS.enode}`);
    }
    const start = remoteParameters(resource, ['start']);
    if (start) return endpointProblems(start.parameters.EXPECTED_ENODE, start.node, 'EXPECTED_ENODE');
    const files = remoteParameters(resource, ['node-files']);
    const enodeProblems = files ? endpointProblems(files.parameters.NODE_ENODE, files.node, 'NODE_ENODE') : [];
    return [
      ...enodeProblems,
      ...withConfig(resource, (config, node) => {
        const expected = expectedNode(context, node, where);
        if (typeof expected === 'string') return [expected];
        const problems: string[] = [];
        if (config['p2p-host'] !== expected.p2pHost) {
          problems.push(
            `${where}: config.toml p2p-host is ${JSON.stringify(config['p2p-host'])}, not the permissioned address "${expected.p2pHost}"`,
          );
        }
        if (config['p2p-port'] !== undefined && config['p2p-port'] !== expected.p2pPort) {
          problems.push(`${where}: config.toml p2p-port is ${String(config['p2p-port'])}, not ${expected.p2pPort}`);
        }
        const nat = config['nat-method'];
        if (nat !== undefined && String(nat).toUpperCase() !== 'NONE') {
          problems.push(
            `${where}: config.toml nat-method is ${JSON.stringify(nat)}: Besu would advertise a detected address, not p2p-host`,
          );
        }
        return problems;
      }),
    ];
  },
};

export const nodePermissioningEnabled: Rule = {
  name: 'node-permissioning-enabled',
  description:
    "config.toml enables on-chain node permissioning with the network's node permissioning contract, so the node " +
    'only peers with permissioned nodes.',
  types: [TYPES.configMap, TYPES.command],
  check(resource, context) {
    const where = describeResource(resource);
    return withConfig(resource, (config) => {
      const problems: string[] = [];
      if (config['permissions-nodes-contract-enabled'] !== true) {
        problems.push(`${where}: config.toml does not set permissions-nodes-contract-enabled = true`);
      }
      const network = networkOf(resource, context);
      const address = config['permissions-nodes-contract-address'];
      if (!network) {
        problems.push(`${where}: the network is unknown, so its node permissioning contract is too`);
      } else if (String(address).toLowerCase() !== network.nodesPermissioningContract.toLowerCase()) {
        problems.push(
          `${where}: permissions-nodes-contract-address is ${JSON.stringify(address)}, not ${network.name}'s ${network.nodesPermissioningContract}`,
        );
      }
      return problems;
    });
  },
};

/**
 * A LACChain writer on a cluster you already run (bare metal with MetalLB here), from your own Pulumi program: the
 * cluster's provider from your kubeconfig, the node on a static IP of a MetalLB pool
 * (docs/kubernetes.md#a-static-ip-on-each-cloud). The same on GKE (`cloud: 'gcp'`, `publicIP` a regional
 * `gcp.compute.Address`'s `address`) or AKS (`cloud: 'azure'`, `publicIP` an `azure.network.PublicIp`'s `ipAddress`,
 * `resourceGroup` its group's name).
 */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { ClusterNode } from 'lacchain-besu-node';

const config = new pulumi.Config();
const provider = new k8s.Provider('cluster', { context: config.get('kubeContext') });

const writer = new ClusterNode('writer', {
  network: 'open-protestnet',
  typenode: 'writer',
  publicIP: config.require('publicIP'),
  deploy: {
    workerName: config.require('workerName'),
    nodeName: config.require('nodeName'),
    nodeEmail: config.require('nodeEmail'),
    loadBalancer: { cloud: 'metallb', addressPool: config.get('addressPool') },
  },
  secrets: { nodeKey: config.getSecret('nodeKey') },
  provider,
});

/** What you send for permissioning (README, "Getting permissioned"). */
export const enode = writer.enode;
export const address = writer.address;
export const permissioningRequest = writer.permissioningRequest;

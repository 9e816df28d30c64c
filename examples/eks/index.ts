/**
 * A LACChain writer on EKS from your own Pulumi program: the cluster, the Elastic IP the node is permissioned on, and
 * the node, its static IP given by the Elastic IP (docs/kubernetes.md#a-static-ip-on-each-cloud).
 *
 * Before `pulumi up`: the AWS Load Balancer Controller runs in the cluster (its Helm chart, `eks/aws-load-balancer-
 * controller`): it makes the Network Load Balancer on the Elastic IP; without it EKS gives the Service a DNS name
 * and the node's `pulumi up` fails saying so. The pod is pinned to one worker (`workerName`): once the node group is
 * up, `kubectl get nodes` and `pulumi config set workerName <node>`.
 */
import * as aws from '@pulumi/aws';
import * as eks from '@pulumi/eks';
import * as pulumi from '@pulumi/pulumi';
import { ClusterNode } from 'lacchain-besu-node';

const config = new pulumi.Config();

// The cluster, its workers in the default VPC's public subnets (Besu: 4 vCPU and 16 GiB on open-protestnet).
const vpc = aws.ec2.getVpcOutput({ default: true });
const subnets = aws.ec2.getSubnetsOutput({ filters: [{ name: 'vpc-id', values: [vpc.id] }] });
const cluster = new eks.Cluster('lacchain', {
  vpcId: vpc.id,
  publicSubnetIds: subnets.ids,
  instanceType: 'm6i.xlarge',
  desiredCapacity: 1,
  minSize: 1,
  maxSize: 1,
});

// The node's static IP: one Elastic IP, for the one subnet its Network Load Balancer spans.
const subnet = subnets.ids.apply((ids) => ids[0]);
const staticIp = new aws.ec2.Eip('writer-ip', { domain: 'vpc', tags: { Name: 'lacchain-writer' } });

const writer = new ClusterNode('writer', {
  network: 'open-protestnet',
  typenode: 'writer',
  publicIP: staticIp.publicIp,
  deploy: {
    workerName: config.require('workerName'),
    nodeName: config.require('nodeName'),
    nodeEmail: config.require('nodeEmail'),
    loadBalancer: { cloud: 'aws', eipAllocations: [staticIp.allocationId], subnets: [subnet] },
  },
  // The node key is made once and kept in this stack's state; to keep an existing one:
  // secrets: { nodeKey: config.requireSecret('nodeKey') },
  provider: cluster.provider,
});

/** What you send for permissioning (README, "Getting permissioned"). */
export const enode = writer.enode;
export const address = writer.address;
export const permissioningRequest = writer.permissioningRequest;
export const loadBalancerAddress = writer.loadBalancerAddress;
export const kubeconfig = cluster.kubeconfigJson;

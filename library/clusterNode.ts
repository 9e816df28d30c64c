/**
 * ClusterNode: a Besu node on your own Kubernetes cluster, from your own Pulumi program. Its arguments are a values
 * file's `deploy` section and a stack file's node entry and shared settings, checked by the same loader
 * (nodeSettings.ts); the static IP, the cluster's provider and the secrets may be what your program makes (an Elastic
 * IP, a GCP address, an Azure public IP; the provider of the cluster you declare). What it declares is what
 * `pulumi up` of a stack file declares for such a node (program.ts, components/kubernetesNode.ts), under it.
 */
import type * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { DEFAULT_NAMESPACE } from '../core/catalog/defaults';
import { NETWORKS } from '../core/catalog/networks';
import { namespaceManifest } from '../core/kubernetes/manifests';
import type { NodeOutputs } from '../program';
import { BesuNode } from './besuNode';
import { declareNode, nodeOutput } from './declareNode';
import { DeployValues, LoadBalancerValues, NodeArgs, NodeRequest, NodeSecrets, NodeSecretValues } from './nodeSettings';

/** A values file's `deploy` section as a ClusterNode takes it: less the network, type and static IP it says itself. */
export type ClusterDeploy = Omit<DeployValues, 'publicIP' | 'p2p' | 'loadBalancer'> & {
  p2p?: { port?: number };
  loadBalancer?: LoadBalancerValues;
};

/** Each field a value or an output of your program (a list: of values or outputs). */
type Inputs<T> = {
  [K in keyof T]: NonNullable<T[K]> extends (infer E)[] ? pulumi.Input<pulumi.Input<E>[]> : pulumi.Input<T[K]>;
};

/** ClusterDeploy, each value (but the namespace, declared at once) possibly an output of your program. */
export type ClusterDeployArgs = Inputs<Omit<ClusterDeploy, 'namespace' | 'loadBalancer'>> & {
  namespace?: string;
  loadBalancer?: Inputs<LoadBalancerValues>;
};

/** The arguments of a ClusterNode. */
export interface ClusterNodeArgs extends NodeArgs {
  /**
   * The static IP of the node's LoadBalancer Service (`deploy.publicIP`): an Elastic IP's `publicIp`, a GCP address's
   * `address`, an Azure public IP's `ipAddress`. Also the enode's host, unless `p2pHost` says otherwise.
   */
  publicIP: pulumi.Input<string>;
  /** The IP advertised to peers, the one that gets permissioned (`deploy.p2p.host`). Default: `publicIP`. */
  p2pHost?: pulumi.Input<string>;
  /**
   * The rest of the values file's `deploy` section (docs/settings.md: workerName, nodeName, nodeEmail, loadBalancer,
   * namespace, releaseVersion, imageDigest, ...); `p2p.port` alone of `p2p`. Each value but `namespace` may be an
   * output of your program: a worker's name, an Elastic IP's `allocationId`, a subnet's id, a resource group's name.
   */
  deploy: ClusterDeployArgs;
  /** The node key to keep, RPC passwords, the backup password. */
  secrets?: Omit<NodeSecrets, 'sshPrivateKey' | 'metricsToken'>;
  /** The provider of your cluster: every object of the node is made with it. */
  provider: k8s.Provider;
  /**
   * The node's namespace, when your program declares it (two nodes in one namespace: declare it once, give it to
   * both). Default: the component declares `deploy.namespace`, and `pulumi destroy` leaves it.
   */
  namespace?: k8s.core.v1.Namespace;
}

/** The values a ClusterNode's arguments hold once your program has made them. */
export interface ClusterNodeValues {
  publicIP: string;
  p2pHost: string;
  deploy: ClusterDeploy;
  secrets: NodeSecretValues;
}

/** What a ClusterNode's arguments say, as the one-node stack file and values file the loader reads. */
export function clusterNodeRequest(name: string, args: NodeArgs, values: ClusterNodeValues): NodeRequest {
  const { p2p, ...deploy } = values.deploy;
  return {
    component: 'ClusterNode',
    name,
    network: args.network,
    entry: { ...args.node, name, typenode: args.typenode, target: 'kubernetes' },
    values: {
      deploy: {
        ...deploy,
        network: NETWORKS[args.network]?.helmName ?? args.network,
        typenode: args.typenode,
        publicIP: values.publicIP,
        p2p: { ...p2p, host: values.p2pHost },
      },
    },
    shared: args.shared,
    secrets: values.secrets,
  };
}

/**
 * The Kubernetes SDK, loaded by the first ClusterNode: the package's entry loads no provider SDK, so a program (this
 * project's own, for an SSH-only stack) that declares none loads none.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const kubernetesSdk = () => require('@pulumi/kubernetes') as typeof k8s;

/** A Besu node on your Kubernetes cluster. */
export class ClusterNode extends BesuNode {
  /** The address the cloud gave the node's Service, checked to be the enode's IP after `pulumi up`. */
  readonly loadBalancerAddress: pulumi.Output<string | undefined>;
  /** The namespace and pod of the node (for `kubectl`). */
  readonly namespace: pulumi.Output<string | undefined>;
  readonly podName: pulumi.Output<string | undefined>;

  constructor(name: string, args: ClusterNodeArgs, opts?: pulumi.ComponentResourceOptions) {
    super('lacchain:index:ClusterNode', name, (self) => declareClusterNode(self, name, args), opts);
    this.loadBalancerAddress = nodeOutput(this.declared, 'loadBalancerAddress');
    this.namespace = nodeOutput(this.declared, 'namespace');
    this.podName = nodeOutput(this.declared, 'podName');
    this.registerNodeOutputs({ loadBalancerAddress: this.loadBalancerAddress });
  }
}

/** Declares the node of `component` on the cluster, once the values your program makes are known. */
function declareClusterNode(component: BesuNode, name: string, args: ClusterNodeArgs): pulumi.Output<NodeOutputs> {
  const namespaceName = args.deploy.namespace ?? DEFAULT_NAMESPACE;
  // Created if absent, never deleted: deleting it would delete the key Secret and the data volume inside it.
  const namespace =
    args.namespace ??
    new (kubernetesSdk().core.v1.Namespace)(`${name}-namespace`, namespaceManifest(namespaceName), {
      parent: component,
      provider: args.provider,
      retainOnDelete: true,
    });
  // A preview of a new static IP shows the node after it.
  return pulumi
    .all([args.publicIP, args.p2pHost ?? args.publicIP, pulumi.output(args.deploy), pulumi.output(args.secrets ?? {})])
    .apply(([publicIP, p2pHost, deploy, secrets]) => {
      const request = clusterNodeRequest(name, args, {
        publicIP,
        p2pHost,
        deploy: deploy as ClusterDeploy,
        secrets: secrets as NodeSecretValues,
      });
      return declareNode(request, {
        parent: component,
        cluster: { provider: args.provider, namespaces: { [namespaceName]: namespace } },
      });
    });
}

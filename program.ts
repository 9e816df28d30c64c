/**
 * The program: from validated settings to one component per node, and the stack outputs.
 * index.ts (under `pulumi up`), the offline plan and the tests all call declareStack, so the same settings always
 * declare the same resources.
 */
import { gasModelUrl } from './core/node/companions';
import { describeNode } from './core/node/description';
import { reachableFromOutside, ReachableFromOutside } from './core/node/exposure';
import { rolloutOrder } from './core/node/rollout';
import * as pulumi from '@pulumi/pulumi';
import { NodeIdentity } from './components/nodeIdentity';
import type { StackSecretInputs } from './components/pulumiSettings';

export type { StackSecretInputs } from './components/pulumiSettings';
import { permissioningRequest, PermissioningRequest } from './core/permissioning';
import type { KubernetesNodeSettings, NodeSettings, StackSettings } from './core/settings/model';
import { SSH_AUTHENTICATION_KEY, SSH_PRIVATE_KEY_KEY } from './core/catalog/sshLogin';
import type { SshLogin } from './components/remoteNode';
import type { Cluster } from './components/kubernetesCluster';

/*
 * Each path's components, and the provider SDK behind them, are loaded only when the stack has a node on that path:
 * an SSH-only stack never loads @pulumi/kubernetes, a cluster-only one never loads @pulumi/command. `pulumi up` runs
 * the program twice (preview, then update), so what is not loaded is saved twice.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const clusterPath = () => require('./components/kubernetesCluster') as typeof import('./components/kubernetesCluster');
const remotePath = () => require('./components/remoteNode') as typeof import('./components/remoteNode');
/* eslint-enable @typescript-eslint/no-require-imports */

/** What the program needs from outside: how to obtain the verified genesis. */
export interface ProgramDeps {
  /** The network's genesis file text, verified against its pinned digest. */
  genesis: () => pulumi.Input<string>;
}

/** The outputs of one node. */
export interface NodeOutputs {
  typenode: string;
  target: string;
  /** The node's enode: hand it to the network operator. */
  enode: pulumi.Output<string>;
  /** The node's address: hand it to the network operator. */
  address: pulumi.Output<string>;
  /** The public key (the enode's node id). */
  publicKey: pulumi.Output<string>;
  /** Everything the network operator needs to permission the node. */
  permissioningRequest: pulumi.Output<PermissioningRequest>;
  /** Each port reachable from outside the machine or cluster and what it admits (ports, API groups, methods). */
  reachableFromOutside: ReachableFromOutside;
  /** The node's JSON-RPC URL. */
  rpcUrl?: pulumi.Output<string>;
  /** A writer's gas model: the proxy's port 80, which sends its transactions through the relay signer. */
  gasModelUrl?: pulumi.Output<string>;
  /** SSH: the systemd service and the node's home folder. */
  serviceName?: pulumi.Output<string>;
  nodeHome?: pulumi.Output<string>;
  /** SSH: the SHA-256 fingerprint of the proxy's self-signed TLS certificate, and its public key's pin: pin them. */
  tlsCertificateSha256?: pulumi.Output<string | undefined>;
  tlsPublicKeyPin?: pulumi.Output<string | undefined>;
  /**
   * Kubernetes: the address the cloud gave the node's Service (its IP, or the DNS name resolving to it), checked to be
   * the enode's IP: a `pulumi up` that finds another fails naming the setting to fix.
   */
  loadBalancerAddress?: pulumi.Output<string | undefined>;
  /** Kubernetes: the namespace, pod and Besu container of the node. */
  namespace?: pulumi.Output<string>;
  podName?: pulumi.Output<string>;
  containerName?: pulumi.Output<string>;
}

/** The stack outputs. */
export interface StackOutputs {
  /** The network the stack deploys to. */
  network: string;
  /** Per node (by its name in the stack). */
  nodes: Record<string, NodeOutputs>;
}

/**
 * Where the nodes are declared, when not at the top of the stack (the package's components, library/): their parent
 * resource, and the operator's own cluster (its provider and the nodes' namespaces) instead of one made from
 * `lacchain:kubeContext`.
 */
export interface DeclareOptions {
  parent?: pulumi.Resource;
  cluster?: Cluster;
}

/** Declares every node of the stack. */
export function declareStack(
  settings: StackSettings,
  secrets: StackSecretInputs,
  deps: ProgramDeps,
  options: DeclareOptions = {},
): StackOutputs {
  const cluster = options.cluster ?? declareCluster(settings);
  const opts = options.parent ? { parent: options.parent } : undefined;
  const genesis = settings.nodes.length > 0 ? pulumi.output(deps.genesis()) : undefined;
  const declared: Record<string, NodeOutputs> = {};
  // One node at a time, in the rollout's order (docs/upgrades.md#rolling-out-a-change): each node's restarting
  // resources wait for the node before it to pass its gate.
  const order = rolloutOrder(settings.nodes);
  let previousGate: pulumi.Resource | undefined;
  for (const [index, node] of order.entries()) {
    const nextNodes = order.slice(index + 1).map((next) => next.name);
    const endpoint = { p2pHost: node.p2pHost, p2pPort: node.p2pPort };
    const identityName = `${node.name}-identity`;
    // Key custody (docs/security.md#key-custody): the stack holds the key; or only its public key is known here,
    // given by the operator (a Secret of theirs, or a machine's key pinned), or read back from the machine below.
    let identity: NodeIdentity | undefined =
      node.keyCustody === 'stack'
        ? new NodeIdentity(
            identityName,
            {
              importedKey: secrets.nodeKeys[node.name],
              allowKeyDeletion: settings.allowKeyDeletion,
              ...endpoint,
            },
            opts,
          )
        : node.publicKey !== undefined
          ? new NodeIdentity(identityName, { publicKey: node.publicKey, ...endpoint }, opts)
          : undefined;
    const outputs: Partial<NodeOutputs> = {};
    const gasModel = gasModelUrl(node);
    if (gasModel) outputs.gasModelUrl = pulumi.output(gasModel);
    if (node.target === 'kubernetes' && cluster && genesis) {
      if (!identity) throw new Error(`node ${node.name}: a cluster node's public key is known before it is deployed`);
      const deployed = new (clusterPath().KubernetesNode)(
        node.name,
        {
          node,
          privateKey: identity.privateKey,
          genesis,
          enode: identity.enode,
          address: identity.address,
          provider: cluster.provider,
          namespace: cluster.namespaces[node.namespace],
          allowKeyDeletion: settings.allowKeyDeletion,
          rpcPasswords: secrets.rpcPasswords,
          backupPassword: secrets.backupPassword,
          rolloutAfter: previousGate,
        },
        opts,
      );
      previousGate = deployed.rolloutGate;
      Object.assign(outputs, {
        rpcUrl: deployed.rpcUrl,
        loadBalancerAddress: deployed.loadBalancerAddress,
        namespace: deployed.namespace,
        podName: deployed.podName,
        containerName: deployed.containerName,
      });
    }
    if (node.target === 'ssh' && genesis) {
      const deployed = new (remotePath().RemoteNode)(
        node.name,
        {
          node,
          privateKey: identity?.privateKey,
          sshLogin: sshLoginOf(settings, secrets, node.name),
          genesis,
          enode: identity?.enode,
          address: identity?.address,
          rpcPasswords: secrets.rpcPasswords,
          backupPassword: secrets.backupPassword,
          backupS3Keys: secrets.backupS3Keys,
          metricsToken: secrets.metricsToken,
          rollout: {
            after: previousGate,
            nextNodes,
            stack: settings.stack,
            gateTimeoutSeconds: settings.rollout.gateTimeoutSeconds,
          },
        },
        opts,
      );
      previousGate = deployed.rolloutGate;
      Object.assign(outputs, {
        rpcUrl: deployed.rpcUrl,
        serviceName: deployed.serviceName,
        nodeHome: deployed.nodeHome,
        tlsCertificateSha256: deployed.tlsCertificateSha256,
        tlsPublicKeyPin: deployed.tlsPublicKeyPin,
      });
      if (!identity && deployed.machinePublicKey) {
        identity = new NodeIdentity(identityName, { publicKey: deployed.machinePublicKey, ...endpoint }, opts);
      }
    }
    if (!identity) throw new Error(`node ${node.name}: no identity (key custody ${node.keyCustody})`);
    declared[node.name] = { ...identityOutputs(node, identity), ...outputs };
  }
  // The outputs in the stack's order.
  const nodes = Object.fromEntries(settings.nodes.map((node) => [node.name, declared[node.name]]));
  return { network: settings.network.name, nodes };
}

/** The cluster's provider and namespaces, when the stack has Kubernetes nodes. */
/** How `pulumi up` logs in to an SSH node's machine: the agent, or the stored key the loader required. */
function sshLoginOf(settings: StackSettings, secrets: StackSecretInputs, nodeName: string): SshLogin {
  if (settings.sshAuthentication === 'agent') return { agent: true };
  if (secrets.sshPrivateKey === undefined) {
    throw new Error(`node ${nodeName}: ${SSH_AUTHENTICATION_KEY} is privateKey but ${SSH_PRIVATE_KEY_KEY} is not set`);
  }
  return { privateKey: secrets.sshPrivateKey };
}

function declareCluster(settings: StackSettings) {
  const kubernetesNodes = settings.nodes.filter((n): n is KubernetesNodeSettings => n.target === 'kubernetes');
  if (kubernetesNodes.length === 0) return undefined;
  return clusterPath().declareCluster(settings.kubeContext, kubernetesNodes);
}

function identityOutputs(node: NodeSettings, identity: NodeIdentity): NodeOutputs {
  const request = pulumi.all([identity.enode, identity.address]).apply(([enode, address]) =>
    permissioningRequest({
      network: node.network,
      nodeType: node.typenode,
      nodeName: node.nodeName,
      email: node.nodeEmail,
      enode,
      address,
    }),
  );
  return {
    typenode: node.typenode,
    target: node.target,
    enode: identity.enode,
    address: identity.address,
    publicKey: identity.publicKey,
    permissioningRequest: request,
    reachableFromOutside: reachableFromOutside(describeNode(node)),
  };
}

/**
 * The package's public API (`import { ClusterNode } from 'lacchain-besu-node'`): a LACChain Besu node as a component
 * of your own Pulumi program, on your cluster (ClusterNode) or on a machine over SSH (MachineNode), with the
 * arguments a stack file and a values file or inventory take (docs/settings.md), checked the same way; and the
 * nodes of a stack file as this project's own `pulumi up` declares them (deployStackFile, index.ts).
 */
export type { BesuNode } from './besuNode';
export { ClusterNode } from './clusterNode';
export type { ClusterDeploy, ClusterDeployArgs, ClusterNodeArgs } from './clusterNode';
export { MachineNode } from './machineNode';
export type { MachineConnection, MachineNodeArgs } from './machineNode';
export type {
  DeployValues,
  InventoryValues,
  LoadBalancerValues,
  NetworkName,
  NodeArgs,
  NodeEntry,
  NodeSecrets,
  NodeSecretValues,
  SharedSettings,
} from './nodeSettings';
export { deployStackFile } from './stackFile';
export type { NodeOutputs, StackOutputs } from '../program';
export type { PermissioningRequest } from '../core/permissioning';
export type { NodeType } from '../core/catalog/nodeTypes';
export type { ReachableFromOutside } from '../core/node/exposure';

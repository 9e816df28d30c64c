/**
 * MachineNode: a Besu node on a machine of yours over SSH, from your own Pulumi program. Its arguments are an SSH
 * node's inventory and a stack file's node entry and shared settings, checked by the same loader (nodeSettings.ts);
 * the machine's connection and its static IP may be what your program makes (an instance's address, its key pair).
 * What it declares is what `pulumi up` of a stack file declares for such a node (program.ts,
 * components/remoteNode.ts), under it.
 */
import * as pulumi from '@pulumi/pulumi';
import { BesuNode } from './besuNode';
import { declareNode, nodeOutput } from './declareNode';
import { InventoryValues, NodeArgs, NodeRequest, NodeSecrets, NodeSecretValues } from './nodeSettings';

/** How `pulumi up` reaches the machine (the inventory's `host`, `port`, `user`, `host_key`). */
export interface MachineConnection {
  /** The address this machine uses to reach the remote one. */
  host: string;
  /** The SSH port. Default 22. */
  port?: number;
  /** The login user; any other user than root needs passwordless sudo. Default the inventory's. */
  user?: string;
  /** The machine's SSH host key (`ssh-ed25519 AAAA…`); any other key is refused. */
  hostKey?: string;
  /** The private key to log in with; without it, your ssh agent (SSH_AUTH_SOCK). */
  privateKey?: string;
}

/** The arguments of a MachineNode. */
export interface MachineNodeArgs extends NodeArgs {
  /** How to reach the machine. */
  connection: pulumi.Input<MachineConnection>;
  /** The machine's static public IPv4, advertised to peers (the inventory's `node_ip`). Default: `connection.host`. */
  nodeIp?: pulumi.Input<string>;
  /** The rest of the inventory (docs/settings.md: node_name, node_email, node_release_version, os, ...). */
  inventory: Omit<InventoryValues, 'host' | 'port' | 'user' | 'host_key' | 'node_ip'>;
  /** The node key to keep, RPC passwords, the backup password, the metrics token. */
  secrets?: Omit<NodeSecrets, 'sshPrivateKey'>;
}

/** The values a MachineNode's arguments hold once your program has made them. */
export interface MachineNodeValues {
  connection: MachineConnection;
  nodeIp?: string;
  secrets: NodeSecretValues;
}

/** What a MachineNode's arguments say, as the one-node stack file (its inventory in it) the loader reads. */
export function machineNodeRequest(
  name: string,
  args: Omit<MachineNodeArgs, 'connection' | 'nodeIp' | 'secrets'>,
  values: MachineNodeValues,
): NodeRequest {
  const { connection } = values;
  return {
    component: 'MachineNode',
    name,
    network: args.network,
    entry: {
      ...args.node,
      name,
      typenode: args.typenode,
      target: 'ssh',
      inventory: {
        ...args.inventory,
        host: connection.host,
        node_ip: values.nodeIp ?? connection.host,
        ...(connection.port !== undefined ? { port: connection.port } : {}),
        ...(connection.user !== undefined ? { user: connection.user } : {}),
        ...(connection.hostKey !== undefined ? { host_key: connection.hostKey } : {}),
      },
    },
    shared: args.shared,
    secrets: { ...values.secrets, sshPrivateKey: connection.privateKey },
  };
}

/** A Besu node on a machine over SSH. */
export class MachineNode extends BesuNode {
  /** The systemd service and home folder of the node. */
  readonly serviceName: pulumi.Output<string | undefined>;
  readonly nodeHome: pulumi.Output<string | undefined>;
  /** The proxy's TLS certificate fingerprint and public key pin: pin them. */
  readonly tlsCertificateSha256: pulumi.Output<string | undefined>;
  readonly tlsPublicKeyPin: pulumi.Output<string | undefined>;

  constructor(name: string, args: MachineNodeArgs, opts?: pulumi.ComponentResourceOptions) {
    // Declared once the values your program makes are known: a preview of a new machine shows the node after it.
    const declared = (self: BesuNode) =>
      pulumi
        .all([pulumi.output(args.connection), pulumi.output(args.nodeIp), pulumi.output(args.secrets ?? {})])
        .apply(([connection, nodeIp, secrets]) => {
          const request = machineNodeRequest(name, args, { connection, nodeIp, secrets: secrets as NodeSecretValues });
          return declareNode(request, { parent: self });
        });
    super('lacchain:index:MachineNode', name, declared, opts);
    this.serviceName = nodeOutput(this.declared, 'serviceName');
    this.nodeHome = nodeOutput(this.declared, 'nodeHome');
    this.tlsCertificateSha256 = nodeOutput(this.declared, 'tlsCertificateSha256');
    this.tlsPublicKeyPin = nodeOutput(this.declared, 'tlsPublicKeyPin');
    this.registerNodeOutputs({ rpcUrl: this.rpcUrl });
  }
}

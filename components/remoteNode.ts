/**
 * RemoteNode: one Besu node on a remote machine, provisioned over SSH by running the steps of core/remote/steps.ts
 * in order, one remote.Command each. A step's standard input is its parameters followed by its script file, byte for
 * byte; nothing is sent through SSH environment requests (sshd refuses them). A step runs again only when its input
 * changes, so `pulumi up` with no change runs nothing on the machine.
 */
import * as command from '@pulumi/command';
import * as pulumi from '@pulumi/pulumi';
import { createHash } from 'crypto';
import { sha256Hex } from '../core/genesis';
import { nodePaths } from '../core/remote/paths';
import { stepCommand, stepInput, stepScript } from '../core/remote/shell';
import {
  BACKUP_PASSWORD_PARAMETER,
  BACKUP_S3_PARAMETERS,
  METRICS_TOKEN_PARAMETER,
  NODE_KEY_PARAMETER,
  RPC_CREDENTIALS_PARAMETER,
  remoteRpcUrl,
  remoteSteps,
} from '../core/remote/steps';
import { tlsIdentityOf } from '../core/remote/tlsIdentity';
import { machinePublicKeyOf } from '../core/remote/nodeKeyOutput';
import { formatEnode } from '../core/identity/nodeKey';
import { describeNode } from '../core/node/description';
import type { SshNodeSettings } from '../core/settings/model';
import { rpcCredentials } from './rpcCredentials';
import { backupPassword } from './backupPassword';
import { healthGate } from './healthGate';
import { RESTARTING_STEPS, ROLLOUT_FIRST_STEP } from '../core/remote/gate';
import { addressOfPublicKey } from '../core/identity/nodeKey';
import type { NodeArgs } from './nodeArgs';
import type { NodeRollout } from './nodeRollout';

export interface RemoteNodeArgs extends NodeArgs<SshNodeSettings> {
  /** How `pulumi up` logs in to the machine: the operator's ssh agent, or a stored private key (a secret). */
  sshLogin: SshLogin;
  /**
   * The enode the node must answer with once started, and the node address (written to data/nodeAddress). Absent for
   * a machine that makes its own key (machine custody, no `publicKey` pinned): read back from the node-key step.
   */
  enode?: pulumi.Input<string>;
  address?: pulumi.Input<string>;
  /** An S3 repository's keys (a secret). */
  backupS3Keys?: pulumi.Input<{ accessKeyId: string; secretAccessKey: string }>;
  /** The bearer token of the machine's metrics endpoint (a secret, `lacchain:metricsToken`); no endpoint without. */
  metricsToken?: pulumi.Input<string>;
  /** The rollout: what this node's restarting steps wait for (the node before it), and its own gate, if any. */
  rollout?: NodeRollout;
}

/** How `pulumi up` logs in to an SSH node's machine (`lacchain:sshAuthentication`). */
export type SshLogin = { agent: true } | { privateKey: pulumi.Input<string> };

/**
 * A Besu node on a remote machine.
 * @public (program.ts loads it with require, for stacks with SSH nodes only)
 */
export class RemoteNode extends pulumi.ComponentResource {
  /** The RPC URL through the TLS proxy (https on 443). */
  readonly rpcUrl: pulumi.Output<string>;
  /** The systemd service of the node. */
  readonly serviceName: pulumi.Output<string>;
  /** The node's home folder. */
  readonly nodeHome: pulumi.Output<string>;
  /** The SHA-256 fingerprint of the proxy's self-signed certificate, as the proxy step last printed it: pin it. */
  readonly tlsCertificateSha256: pulumi.Output<string | undefined>;
  /** Its public key's pin, `sha256//<base64>` (`curl --pinnedpubkey`). */
  readonly tlsPublicKeyPin: pulumi.Output<string | undefined>;
  /** Machine custody: the public key of the key the machine holds, as the node-key step read it back there. */
  readonly machinePublicKey: pulumi.Output<string> | undefined;
  /** What the next node of the rollout waits for: this node's health gate (none when no node comes after it). */
  readonly rolloutGate: pulumi.Resource | undefined;

  constructor(name: string, args: RemoteNodeArgs, opts?: pulumi.ComponentResourceOptions) {
    super('lacchain:index:RemoteNode', name, {}, opts);
    const { node } = args;
    const connection: command.types.input.remote.ConnectionArgs = {
      host: node.host,
      port: node.sshPort,
      user: node.user,
      // With the agent, the connection names no key and no socket: the command provider reads SSH_AUTH_SOCK when it
      // logs in, so the state holds neither the key nor a socket path that changes with each login session (a changed
      // connection would run every step again).
      ...('privateKey' in args.sshLogin ? { privateKey: pulumi.secret(args.sshLogin.privateKey) } : {}),
      ...(node.hostKey ? { hostKey: node.hostKey } : {}),
    };
    const genesis = pulumi.output(args.genesis);
    const description = describeNode(node);
    // What the node-key step reads back from a machine holding its own key: the enode the start step checks. The
    // steps are declared with a stand-in, replaced once that step exists (the start step comes after it).
    const readBack = pulumi.output('enode read back by the node-key step');
    const steps = remoteSteps(description, {
      genesis,
      genesisSha256: genesis.apply(sha256Hex),
      enode: args.enode !== undefined ? pulumi.output(args.enode) : readBack,
      address: pulumi.output(args.address ?? ''),
    });
    let machineEnode: pulumi.Output<string> | undefined;

    const auth = description.rpc.authentication;
    // The secret inputs of the node-key step: the node key, and the RPC credentials file with password authentication.
    const credentials =
      auth?.method === 'password' ? rpcCredentials(name, this, auth.users, args.rpcPasswords) : undefined;
    // And the backup repository's password, written to the machine's backup environment (root's, mode 0600).
    const password = backupPassword(args.backupPassword, args.privateKey);
    const s3Keys = pulumi.output(args.backupS3Keys);
    const metricsToken = pulumi.secret(pulumi.output(node.metricsEndpoint ? (args.metricsToken ?? '') : ''));
    // With machine custody there is no key to send, and the machine derives the password from its key unless the
    // stack gives one.
    const secretParameters = pulumi
      .all([args.privateKey ?? '', credentials ?? '', password ?? '', s3Keys, metricsToken])
      .apply(([key, text, backup, s3, token]): Record<string, string> => ({
        ...(key ? { [NODE_KEY_PARAMETER]: key } : {}),
        ...(credentials ? { [RPC_CREDENTIALS_PARAMETER]: text } : {}),
        ...(backup ? { [BACKUP_PASSWORD_PARAMETER]: backup } : {}),
        ...(s3
          ? {
              [BACKUP_S3_PARAMETERS.accessKeyId]: s3.accessKeyId,
              [BACKUP_S3_PARAMETERS.secretAccessKey]: s3.secretAccessKey,
            }
          : {}),
        ...(token ? { [METRICS_TOKEN_PARAMETER]: token } : {}),
      }));

    let machinePublicKey: pulumi.Output<string> | undefined;
    const readBackEnode = () => {
      if (!machineEnode) throw new Error(`node ${node.name}: the enode is read back before the node-key step exists`);
      return machineEnode;
    };
    let previous: command.remote.Command | undefined;
    let proxyStep: command.remote.Command | undefined;
    /** The triggers of the steps that restart Besu (node-key: new RPC credentials; start): the gate runs after them. */
    const restarts: pulumi.Output<string>[] = [];
    steps.forEach((step, index) => {
      const header = `lacchain-besu-node: step ${index + 1}/${steps.length} (${step.name}) of node ${node.name}`;
      const script = stepScript(step.scriptFile);
      const env = pulumi.all(
        Object.fromEntries(
          Object.entries(step.env).map(([key, value]) => [key, value === readBack ? readBackEnode() : value]),
        ),
      );
      // The trigger is a digest of the non-secret input: the step runs again exactly when that changes.
      let trigger: pulumi.Output<string> = env.apply((values) =>
        createHash('sha256')
          .update(stepInput(header, values, script))
          .digest('hex'),
      );
      if (step.takesNodeKey) {
        // The credentials and the backup password change without any non-secret input changing: they are in this
        // step's trigger too, so a new password runs it again. That trigger is secret, and made from the bcrypt
        // hashes, which carry the secret random salts, and from the backup password keyed with the node key: even
        // shown, it would not let anyone check a guessed password offline. No other step's trigger or input has
        // anything of either (the start step's CONFIG_DIGEST neither).
        trigger = pulumi.secret(
          pulumi
            .all([trigger, credentials ?? '', password ?? '', args.privateKey ?? '', s3Keys, metricsToken])
            .apply(([digest, text, backup, key, s3, token]) =>
              createHash('sha256')
                .update(digest)
                .update(text)
                .update(
                  createHash('sha256')
                    .update(key)
                    .update(backup)
                    .update(s3 ? `${s3.accessKeyId}\n${s3.secretAccessKey}` : '')
                    .update(token)
                    .digest('hex'),
                )
                .digest('hex'),
            ),
        );
      }
      const stdin = step.takesNodeKey
        ? pulumi.secret(
            pulumi
              .all([env, secretParameters])
              .apply(([values, secret]) => stepInput(header, { ...values, ...secret }, script)),
          )
        : env.apply((values) => stepInput(header, values, script));
      previous = new command.remote.Command(
        `${name}-${step.name}`,
        {
          connection,
          create: stepCommand(node.user),
          stdin,
          triggers: [trigger],
          addPreviousOutputInEnv: false,
          logging: step.takesNodeKey ? 'none' : 'stdoutAndStderr',
        },
        {
          parent: this,
          // From the first step that changes what the node runs on, after the node before it in the rollout is healthy.
          dependsOn: [
            ...(previous ? [previous] : []),
            ...(step.name === ROLLOUT_FIRST_STEP && args.rollout?.after ? [args.rollout.after] : []),
          ],
          additionalSecretOutputs: step.takesNodeKey ? ['stdout', 'stderr'] : [],
        },
      );
      if (RESTARTING_STEPS.includes(step.name)) restarts.push(trigger);
      if (step.name === 'proxy') proxyStep = previous;
      if (step.name === 'node-key' && node.keyCustody === 'machine') {
        // Only the public key is read back; the step prints nothing else of the key. Public, so not secret.
        const publicKey = pulumi.unsecret(previous.stdout.apply((stdout) => machinePublicKeyOf(stdout, node.name)));
        machinePublicKey = publicKey;
        machineEnode = publicKey.apply((key) => formatEnode(key, node.p2pHost, node.p2pPort));
      }
    });

    this.machinePublicKey = machinePublicKey;
    this.rolloutGate =
      args.rollout && args.rollout.nextNodes.length > 0
        ? healthGate(name, {
            connection,
            node,
            rollout: args.rollout,
            enode: args.enode !== undefined ? pulumi.output(args.enode) : readBackEnode(),
            address:
              args.address !== undefined ? pulumi.output(args.address) : machinePublicKey!.apply(addressOfPublicKey),
            restarts,
            after: previous!,
            parent: this,
          })
        : undefined;
    this.rpcUrl = pulumi.output(remoteRpcUrl(node));
    this.serviceName = pulumi.output(node.serviceName);
    this.nodeHome = pulumi.output(nodePaths(node).home);
    const tls = pulumi.output(proxyStep?.stdout).apply((stdout) => tlsIdentityOf(stdout));
    this.tlsCertificateSha256 = tls.apply((identity) => identity.certificateSha256);
    this.tlsPublicKeyPin = tls.apply((identity) => identity.publicKeyPin);
    this.registerOutputs({
      rpcUrl: this.rpcUrl,
      serviceName: this.serviceName,
      nodeHome: this.nodeHome,
      tlsCertificateSha256: this.tlsCertificateSha256,
      tlsPublicKeyPin: this.tlsPublicKeyPin,
    });
  }
}

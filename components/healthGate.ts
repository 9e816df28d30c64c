/**
 * The health gate of an SSH node in a rollout (core/remote/gate.ts, scripts/remote/gate.sh): a remote.Command after
 * the node's last step. Made (a first install) it only says so; updated, because a step that restarts Besu ran (its
 * digest is in the gate's input), it waits until the node is healthy again, and fails when it is not in time. The next
 * node of the rollout waits for it, so a failed gate leaves the nodes after it as they were.
 */
import * as command from '@pulumi/command';
import * as pulumi from '@pulumi/pulumi';
import { createHash } from 'crypto';
import { firstInstallCommand, GATE_SCRIPT, gateParameters } from '../core/remote/gate';
import { stepCommand, stepInput, stepScript } from '../core/remote/shell';
import type { SshNodeSettings } from '../core/settings/model';
import type { NodeRollout } from './nodeRollout';

/** What the gate of a node needs. */
export interface HealthGateArgs {
  connection: command.types.input.remote.ConnectionArgs;
  node: SshNodeSettings;
  rollout: NodeRollout;
  /** The enode and address the healthy node answers with. */
  enode: pulumi.Output<string>;
  address: pulumi.Output<string>;
  /** The triggers of the node's steps that restart Besu: a change of any runs the gate. */
  restarts: pulumi.Output<string>[];
  /** The node's last step. */
  after: pulumi.Resource;
  parent: pulumi.Resource;
}

/** The gate of node `name`. */
export function healthGate(name: string, args: HealthGateArgs): command.remote.Command {
  const { node, rollout } = args;
  // One digest of the restarting steps' triggers. The node-key step's is secret, and so is this digest (and the
  // gate's input, in the state): it is a function of the secrets, which a weak one (a backup password) would let
  // anyone check guesses against offline. The machine never writes it down (scripts/remote/gate.sh).
  const change = pulumi
    .all(args.restarts)
    .apply((triggers) => createHash('sha256').update(triggers.join('\n')).digest('hex'));
  const header = `lacchain-besu-node: the health gate of node ${node.name}`;
  const script = stepScript(GATE_SCRIPT);
  const stdin = pulumi.all([args.enode, args.address, change]).apply(([enode, address, digest]) =>
    stepInput(
      header,
      gateParameters(node, {
        stack: rollout.stack,
        nextNodes: rollout.nextNodes,
        timeoutSeconds: rollout.gateTimeoutSeconds,
        enode,
        address,
        change: digest,
      }),
      script,
    ),
  );
  return new command.remote.Command(
    `${name}-gate`,
    {
      connection: args.connection,
      create: firstInstallCommand(node.name),
      update: stepCommand(node.user),
      stdin,
      addPreviousOutputInEnv: false,
      logging: 'stdoutAndStderr',
    },
    { parent: args.parent, dependsOn: [args.after] },
  );
}

/**
 * `npm run node -- move`: an SSH node to another machine, with its key and its data (docs/moving.md). In order: the old
 * node stops and is kept from starting again; its last backup is taken; the backup (and, key custody machine, the key,
 * root to root) is carried to the new machine; the stack file names the new machine; `pulumi up` brings the node up
 * there, its start step restoring that backup before the node's first start; the new node's health is waited for; only
 * then is the old machine's service removed (its data kept). The old and the new node never run at once.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import { BACKUP_REASONS } from '../../core/catalog/backups';
import { configKey, DEFAULT_SERVICE_USER } from '../../core/catalog/defaults';
import { MACHINE_MOVE_FILES, MOVE_STEPS, MoveStep, MOVING_NODE_VARIABLE } from '../../core/catalog/move';
import { backupPaths } from '../../core/remote/backups';
import { companionServiceName } from '../../core/remote/companionService';
import { nodePaths } from '../../core/remote/paths';
import { shellQuote, stepCommand, stepInput, stepScript } from '../../core/remote/shell';
import { knownHostsLine, sshArguments } from '../../core/operations/clients';
import { lastMeaningfulLine } from '../../core/operations/reach';
import type { SshNodeSettings, StackSecrets } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import { moveEnded, MoveResult, movePlanLines, pipeClients, say } from './moveShared';
import { sayStep, waitForMovedNode, whatTheNodeSays, withCutLine } from './moveShared';
import {
  machineStopWords,
  STOP_LOOK_TIMEOUT_MS,
  StopReached,
  stopReachedLine,
  stopReachedOnMachine,
} from './moveStopReached';
import { nodeClient } from './nodeClient';
import type { NodeClient, SshOptions } from './nodeClientTypes';
import { runClient } from './process';
import * as os from 'os';
import * as path from 'path';

/** The script of the move's steps on either machine. */
const MOVE_SCRIPT = 'remote/move.sh';

/** What a move is given. */
export interface MoveRequest {
  stack: string;
  /** The node as the stack file says it runs now, and as it will run on the new machine. */
  from: SshNodeSettings;
  to: SshNodeSettings;
  /** The stack file, and its text with the node on the new machine (written before `pulumi up`). */
  configFile: string;
  movedText: string;
  ssh: SshOptions;
  /** A new key at the new place (`--new-key`): the old key is never carried there, the enode changes. */
  newKey?: boolean;
}

/** How the new machine is brought up: `pulumi up` of the stack file the move wrote. */
export interface MoveDeps {
  /** `newKey`: the node gets a new key there (`--new-key`). */
  bringUp: (stack: string, configFile: string, node: string, newKey?: boolean) => Promise<void>;
}

/** The ssh of one machine of the move: a pinned host key, the operator's own login, a session per command. */
export function machine(node: SshNodeSettings, ssh: SshOptions) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-move-'));
  let knownHostsFile: string | undefined;
  if (node.hostKey) {
    knownHostsFile = path.join(folder, 'known_hosts');
    fs.writeFileSync(knownHostsFile, knownHostsLine(node.host, node.sshPort, node.hostKey));
  } else if (!node.acceptAnyHostKey) {
    throw new ToolFailure(`node ${node.name}: no pinned SSH host key for ${node.host} (inventory host_key)`);
  }
  const args = [
    ...sshArguments({ keyFile: ssh.keyFile, options: ssh.options, knownHostsFile }),
    '-p',
    String(node.sshPort),
    `${node.user}@${node.host}`,
  ];
  const sudo = node.user === 'root' ? '' : 'sudo -n ';
  const where = `${node.user}@${node.host}:${node.sshPort}`;
  return {
    where,
    args,
    sudo,
    /** Runs a shell command; throws with its last line when it fails. */
    async run(command: string, what: string, input?: string, timeoutMs = 600_000) {
      const result = await runClient('ssh', [...args, command], input, timeoutMs);
      if (result.code !== 0) {
        throw new ToolFailure(`${what} on ${where} failed (exit ${result.code}): ${lastMeaningfulLine(result.stderr)}`);
      }
      return result.stdout;
    },
    /** Runs the move's script with `env` as root (a step: read whole before it runs). */
    step(env: Record<string, string>, what: string, timeoutMs?: number) {
      const input = stepInput(`npm run node: move of node ${node.name}`, env, stepScript(MOVE_SCRIPT));
      return this.run(stepCommand(node.user), what, input, timeoutMs);
    },
    dispose() {
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}
export type Machine = ReturnType<typeof machine>;

/** How long the new node may take to answer with its enode at the old head, after `pulumi up`. */
const HEALTH_WAIT_SECONDS = 120;

/** Waits for the node on its new machine (`target`): see waitForMovedNode. Returns the enode recorded there. */
export function waitForMovedMachine(
  client: NodeClient,
  headBefore: number | undefined,
  to: SshNodeSettings,
  target: Machine,
): Promise<string> {
  return waitForMovedNode(client, headBefore, {
    seconds: HEALTH_WAIT_SECONDS,
    what: 'service',
    noRecord: `the new machine has no enode record for node ${to.name}`,
    runs: `${to.serviceName} runs on ${target.where}`,
  });
}

/** The last step of a move off a machine: the old machine's service removed, its data kept. */
export async function removeOldService(old: Machine, from: SshNodeSettings): Promise<void> {
  await old.step(
    { ...moveParameters(from, 'remove'), BACKUP_UNIT: backupPaths(from).unit },
    "removing the old machine's service",
  );
  say(`  removed ${from.serviceName} from ${old.where}; its data stays in ${nodePaths(from).dataDir}`);
}

/**
 * How far the old machine's stop got, after a move ended in its stop step: one short look there (move.sh's `look`),
 * `unknown` when it does not answer.
 */
export async function stopReachedOn(old: Machine, from: SshNodeSettings): Promise<StopReached> {
  const said = await old
    .step(moveParameters(from, 'look'), 'looking at the old node', STOP_LOOK_TIMEOUT_MS)
    .catch(() => '');
  return stopReachedOnMachine(said);
}

/** Pipes one machine's command's output into another's, through this process's memory only (never its disk). */
function pipeBetween(from: Machine, fromCommand: string, to: Machine, toCommand: string, what: string) {
  return pipeClients(['ssh', [...from.args, fromCommand]], ['ssh', [...to.args, toCommand]], what);
}

/** The names of a node's units on a machine: its service and its companions'. */
function unitsOf(node: SshNodeSettings): string {
  return [node.serviceName, ...node.companions.map((c) => companionServiceName(node, c.name))].join(' ');
}

/** The parameters every action of the move's script takes (arriving, its identity's too). */
export function moveParameters(node: SshNodeSettings, action: string): Record<string, string> {
  return {
    STEP_NAME: 'move',
    MOVE_ACTION: action,
    SERVICE_NAME: node.serviceName,
    UNITS: unitsOf(node),
    MOVED_OUT_FILE: MACHINE_MOVE_FILES.movedOut(node.serviceName),
    MOVED_IN_FILE: MACHINE_MOVE_FILES.movedIn(node.serviceName),
    DROP_IN: MACHINE_MOVE_FILES.dropIn,
    ...(action === 'arrive' ? identityParameters(node) : {}),
  };
}

/**
 * The arrive action's identity parameters: the identity files an earlier stay of the node left on the new machine (in
 * its service user's data folder, and root's record of a machine key), set aside (root's only) so that its node-key
 * step takes in the carried key, writes the stack's, or makes a new one; with a new key (NEW_KEY yes, `--new-key`), a
 * key an earlier cut move carried there is deleted.
 */
function identityParameters(node: SshNodeSettings): Record<string, string> {
  const paths = nodePaths(node);
  return {
    NEW_KEY: 'no',
    IDENTITY_FILES: [paths.key, paths.enode, paths.nodeAddress].join(' '),
    KEY_RECORD_FILE: paths.machineKeyRecord,
    SERVICE_USER: DEFAULT_SERVICE_USER,
    INCOMING_KEY_FILE: MACHINE_MOVE_FILES.incomingKey(node.serviceName),
    KEYS_ASIDE_DIR: MACHINE_MOVE_FILES.keysAside(node.serviceName),
  };
}

/**
 * Why a node cannot move with a new key as its stack stands (one line), or undefined: a new key is made as for a new
 * node, by the node's own custody, so nothing may pin or import the old one, and the backups need a password that is
 * not derived from the key (the stack's key or the machine's): the new place restores the old place's last backup.
 */
export function newKeyRefusal(node: SshNodeSettings, secrets: Pick<StackSecrets, 'nodeKeys' | 'backupPassword'>) {
  if (node.keyCustody === 'stack' && secrets.nodeKeys[node.name] !== undefined) {
    return `--new-key: node ${node.name}'s key is imported in the stack file (${configKey('nodeKeys')}.${node.name}): remove it (pulumi config rm --path '${configKey('nodeKeys')}.${node.name}') and run move again, or move without --new-key`;
  }
  if (node.keyCustody === 'machine' && node.publicKey !== undefined) {
    return `--new-key: node ${node.name} pins its key (publicKey ${node.publicKey}): remove the pin from the stack file and run move again (pin the new public key after the move)`;
  }
  // Either custody: the last backup, carried to the new place, is encrypted with the old key's password.
  if (secrets.backupPassword === undefined) {
    return `--new-key: node ${node.name}'s backups are encrypted with a password derived from its key, which the new key cannot open: set ${configKey('backupPassword')} to the one in use first (docs/security.md#replacing-a-machines-key, step 1) and run move again`;
  }
  return undefined;
}

/** The lines of a move's plan, printed before it starts: a validator's says the two nodes never run at once. */
export function movePlan(request: Pick<MoveRequest, 'from' | 'to' | 'stack' | 'newKey'>): string[] {
  const { from, to } = request;
  return movePlanLines(
    {
      from,
      to,
      fromPlace: `${from.user}@${from.host}:${from.sshPort}`,
      toPlace: `${to.user}@${to.host}:${to.sshPort}`,
    },
    Object.values(MOVE_STEPS),
    'the old node is stopped before the new one first starts',
    request.newKey
      ? 'a new key at the new place (--new-key): the old key is never carried there and stays with the stopped old node, kept from starting; the enode changes: the network must permission the new one (the request is printed at the end)'
      : undefined,
  );
}

/**
 * The line a move cut at `step` ends with: which place is runnable and how to go on; at the stop, what the look at the
 * old machine saw the stop reach (`stopReached`, stopReachedOn: unknown when it did not answer).
 */
export function moveCutLine(stack: string, node: string, step: MoveStep, stopReached: StopReached = 'unknown'): string {
  const again = `npm run node -- move --stack ${stack} --node ${node}`;
  switch (step) {
    case 'stopOld':
    case 'lastBackup':
    case 'carry':
      return stopReachedLine(
        `the move stopped at "${MOVE_STEPS[step]}"`,
        step === 'stopOld' ? stopReached : 'kept',
        machineStopWords('the new machine runs nothing'),
        `run ${again} again with the same flags`,
      );
    case 'bringUp':
    case 'health':
      return `the move stopped at "${MOVE_STEPS[step]}": the old node is kept from starting, the new machine runs the node only once its data is restored; fix the cause above and run ${again} again with the same flags to go on`;
    case 'removeOld':
      return `the move stopped at "${MOVE_STEPS[step]}": the new node runs; run ${again} again to remove the old machine's service`;
  }
}

/** Runs a move, step by step; a failed step throws the line saying where it stopped and how to go on. */
export async function moveNode(request: MoveRequest, deps: MoveDeps): Promise<MoveResult> {
  const started = Date.now();
  const { from, to, stack } = request;
  const old = machine(from, request.ssh);
  const target = machine(to, request.ssh);
  let step: MoveStep = 'stopOld';
  try {
    // Before anything changes: both machines answer, and the new one runs no node of this service, unless an earlier
    // move of this node started it there (the old one marked moved out): then this run finishes that move.
    const running = (
      await target.run(`systemctl is-active ${shellQuote(to.serviceName)} || true`, 'looking at the new machine')
    ).trim();
    const movedOutFile = shellQuote(MACHINE_MOVE_FILES.movedOut(from.serviceName));
    const movedOut =
      (await old.run(`test -f ${movedOutFile} && echo moved || true`, 'looking at the old machine')).trim() === 'moved';
    if (running === 'active' && !movedOut) {
      throw new ToolFailure(
        `${to.serviceName} already runs on ${target.where}: refusing to move node ${from.name} there (two nodes, one key); stop it first`,
      );
    }
    const resumed = running === 'active';
    const oldClient = nodeClient(from, {
      stack,
      configFile: request.configFile,
      ssh: request.ssh,
    });
    const { oldEnode, headBefore } = await whatTheNodeSays(oldClient);
    movePlan(request).forEach(say);
    let stoppedAt = '';
    let backupId = '';
    if (resumed) say(`  ${to.serviceName} already runs on ${target.where}, the old node moved out: finishing the move`);
    else {
      sayStep(MOVE_STEPS, 'stopOld');
      const left = await old.step(
        { ...moveParameters(from, 'leave'), DESTINATION: target.where },
        'stopping the old node',
      );
      stoppedAt = /MOVE_STOPPED_AT=(\S+)/.exec(left)?.[1] ?? '';
      say(`  ${from.serviceName} stopped on ${old.where} at ${stoppedAt}`);

      step = 'lastBackup';
      sayStep(MOVE_STEPS, 'lastBackup');
      await oldClient.backups.take(BACKUP_REASONS.move, () => undefined);
      const backup = (await oldClient.backups.list()).filter((b) => b.reason === BACKUP_REASONS.move).pop();
      if (!backup) throw new ToolFailure(`the last backup of node ${from.name} is not in its repository's list`);
      backupId = backup.id;
      say(`  backup ${backup.id} (Besu ${backup.release}) in ${from.backups.repository}`);

      step = 'carry';
      sayStep(MOVE_STEPS, 'carry');
      const repository = from.backups.repository;
      if (repository.startsWith('/') && (repository !== to.backups.repository || from.host !== to.host)) {
        const parent = path.posix.dirname(to.backups.repository);
        await target.run(
          `${target.sudo}install -d -m 0755 -o root -g root ${shellQuote(parent)}`,
          'making the repository folder',
        );
        await pipeBetween(
          old,
          `${old.sudo}tar -C ${shellQuote(path.posix.dirname(repository))} -cf - ${shellQuote(path.posix.basename(repository))}`,
          target,
          `${target.sudo}tar -C ${shellQuote(parent)} --no-same-owner -xf - --transform ${shellQuote(`s,^${path.posix.basename(repository)},${path.posix.basename(to.backups.repository)},`)}`,
          'carrying the backup repository',
        );
        say(`  carried the repository to ${to.backups.repository} on ${target.where}`);
      } else {
        say(`  the repository ${repository} is reached from both machines: nothing to carry`);
      }
      if (request.newKey) {
        say(`  the old key is not carried (--new-key): the new machine gets a new one`);
      } else if (from.keyCustody === 'machine') {
        const incoming = MACHINE_MOVE_FILES.incomingKey(to.serviceName);
        const asServiceUser =
          from.user === 'root' ? `runuser -u ${DEFAULT_SERVICE_USER} -- ` : `sudo -n -u ${DEFAULT_SERVICE_USER} `;
        // Read as the service user (no link followed), written by root on the new machine, root's only: never on this
        // machine's disk, nor in the state.
        await pipeBetween(
          old,
          `${asServiceUser}dd if=${shellQuote(nodePaths(from).key)} iflag=nofollow,nonblock bs=200 count=1 status=none`,
          target,
          `${target.sudo}sh -c ${shellQuote(`umask 077 && install -d -m 0755 /etc/lacchain && cat >${incoming}.new && test -s ${incoming}.new && mv -f ${incoming}.new ${incoming}`)}`,
          'carrying the machine key',
        );
        say(`  carried the node key root to root (key custody machine)`);
      }
      await target.step(
        {
          ...moveParameters(to, 'arrive'),
          BACKUP_ID: backup.id,
          FROM_ENODE: oldEnode ?? '',
          NEW_KEY: request.newKey ? 'yes' : 'no',
        },
        'recording the backup to restore',
      );

      step = 'bringUp';
      sayStep(MOVE_STEPS, 'bringUp');
      const before = fs.readFileSync(request.configFile, 'utf8');
      if (before !== request.movedText) {
        fs.writeFileSync(`${request.configFile}.before-move`, before);
        fs.writeFileSync(request.configFile, request.movedText);
        say(`  ${request.configFile} names the new machine (the file before: ${request.configFile}.before-move)`);
      }
      await deps.bringUp(stack, request.configFile, from.name, request.newKey ?? false);
    }

    step = 'health';
    sayStep(MOVE_STEPS, 'health');
    const newClient = nodeClient(to, { stack, configFile: request.configFile, ssh: request.ssh });
    const expected = await waitForMovedMachine(newClient, headBefore, to, target);

    step = 'removeOld';
    sayStep(MOVE_STEPS, 'removeOld');
    await removeOldService(old, from);

    return moveEnded(to, { stoppedAt, backupId, headBefore, oldEnode, newEnode: expected, started });
  } catch (error) {
    const reached = step === 'stopOld' ? await stopReachedOn(old, from) : undefined;
    throw withCutLine(error, moveCutLine(stack, from.name, step, reached));
  } finally {
    old.dispose();
    target.dispose();
  }
}

/**
 * The URNs, in `pulumi stack --show-urns`' output, of the random bytes a node's stack-held key is made from (program.ts
 * names the identity `<node>-identity`, components/nodeIdentity.ts its bytes `<identity>-key`): replaced, they are a
 * new key, made as a new node's. None for a key the stack does not hold.
 */
export function stackKeyUrns(showUrns: string, node: string): string[] {
  const urns = showUrns.match(/urn:pulumi:\S+/g) ?? [];
  return urns.filter(
    (urn) => urn.includes('random:index/randomBytes:RandomBytes::') && urn.endsWith(`::${node}-identity-key`),
  );
}

/** Runs pulumi with `args`, its output the operator's; `env` added to this process's. */
function runPulumi(args: string[], env: Record<string, string> = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('pulumi', args, { stdio: 'inherit', env: { ...process.env, ...env } });
    child.on('error', (error) => reject(new ToolFailure(`cannot run pulumi: ${error.message}`)));
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new ToolFailure(`pulumi ${args.slice(0, 3).join(' ')} failed (exit ${code})`)),
    );
  });
}

/**
 * `pulumi up` of the stack file the move wrote: the engine brings the node up on the new machine; with a new key, the
 * stack-held key's random bytes replaced (a machine's key is made by the new machine itself).
 */
export async function pulumiUp(stack: string, configFile: string, node: string, newKey = false): Promise<void> {
  let replace: string[] = [];
  if (newKey) {
    const listed = await runClient('pulumi', ['stack', '--stack', stack, '--show-urns'], undefined, 120_000);
    if (listed.code !== 0) {
      throw new ToolFailure(`pulumi stack --stack ${stack} --show-urns failed: ${lastMeaningfulLine(listed.stderr)}`);
    }
    replace = stackKeyUrns(listed.stdout, node);
  }
  // The move's own run: its node may come up in its new place (core/node/place.ts), the old one being stopped.
  return runPulumi(
    [
      'up',
      '--stack',
      stack,
      '--yes',
      '--skip-preview',
      '--config-file',
      configFile,
      ...replace.flatMap((urn) => ['--replace', urn]),
    ],
    { [MOVING_NODE_VARIABLE]: node },
  );
}

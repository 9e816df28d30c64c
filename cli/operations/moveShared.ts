/**
 * What every move shares, whichever its places (machine to machine, into a cluster, out of one): its plan's lines,
 * the wait for the node at its new place, and the end: how long it took and the re-permissioning request.
 */
import { addressOfPublicKey, parseEnode } from '../../core/identity/nodeKey';
import { permissioningRequest, PermissioningRequest } from '../../core/permissioning';
import { withoutControlSequences } from '../../core/operations/terminalText';
import { durationText } from '../../core/operations/units';
import type { NodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import type { NodeClient } from './nodeClientTypes';
import { spawn } from 'child_process';
import { lastMeaningfulLine } from '../../core/operations/reach';

/** What a move did: when the old node stopped, the backup it carried, the enodes and the request, its time. */
export interface MoveResult {
  stoppedAt: string;
  backupId: string;
  headBefore: number | undefined;
  oldEnode: string | undefined;
  newEnode: string;
  /** When the enode changed: the request that removes the old one and adds the new one. */
  repermissioning?: RepermissioningRequest;
  seconds: number;
}

/** The re-permissioning request of a moved node: the enode to remove, the one to add, and where to send them. */
export interface RepermissioningRequest extends PermissioningRequest {
  /** The enode the network permissioned before the move: to remove. */
  removeEnode: string;
}

/** One line of the move's output, without control sequences. */
export function say(line: string): void {
  process.stdout.write(`${withoutControlSequences(line)}\n`);
}

/**
 * The lines of a move's plan, printed before it starts: where from and where to, its steps, that the two places never
 * run at once (`neverAtOnce`), a validator's warning, and `enodeLine` when given, else whether the address changes.
 */
export function movePlanLines(
  places: { from: NodeSettings; to: NodeSettings; fromPlace: string; toPlace: string },
  steps: readonly string[],
  neverAtOnce: string,
  enodeLine?: string,
): string[] {
  const { from, to } = places;
  const lines = [
    `node ${from.name} (${from.typenode}) moves from ${places.fromPlace} to ${places.toPlace}:`,
    ...steps.map((step, i) => `  ${i + 1}. ${step}`),
    `  ${neverAtOnce}: the two never run at once with the node's key`,
  ];
  if (from.typenode === 'validator') {
    lines.push(
      `  node ${from.name} is a validator: its key signs blocks, so it is never running in two places (two signers, one key)`,
    );
  }
  if (enodeLine !== undefined) {
    lines.push(`  ${enodeLine}`);
  } else if (from.p2pHost !== to.p2pHost || from.p2pPort !== to.p2pPort) {
    lines.push(
      `  the enode's address changes (${from.p2pHost}:${from.p2pPort} -> ${to.p2pHost}:${to.p2pPort}): the network must permission the new enode (the request is printed at the end)`,
    );
  }
  return lines;
}

/**
 * Waits up to `wait.seconds` for the node at its new place: running, answering with the enode recorded for it there,
 * at `headBefore` or above; says where it runs (`wait.runs`) and returns that enode. Throws `wait.noRecord` when no
 * enode is recorded there, or saying what it saw (`wait.what`: a machine's service, a pod) when the node does not come.
 */
export async function waitForMovedNode(
  client: NodeClient,
  headBefore: number | undefined,
  wait: { seconds: number; what: string; noRecord: string; runs: string },
): Promise<string> {
  const expected = await client.recordedEnode();
  if (!expected) throw new ToolFailure(wait.noRecord);
  const deadline = Date.now() + wait.seconds * 1000;
  for (;;) {
    const answered = await client
      .rpc('net_enode')
      .then(String)
      .catch(() => undefined);
    const { headBefore: head } = await whatTheNodeSays(client, { enode: false });
    const state = await client.serviceState();
    if (state.running && answered === expected && head !== undefined && head >= (headBefore ?? 0)) {
      say(`  ${wait.runs} as ${answered} at block ${head} (${headBefore ?? 'unknown'} before the move)`);
      return expected;
    }
    if (Date.now() > deadline) {
      throw new ToolFailure(
        `the new node did not come up healthy within ${wait.seconds} s (${wait.what} ${state.detail}, enode ${answered ?? 'none'}, head ${head ?? 'unknown'} of ${headBefore ?? 'unknown'})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * The end of a move: its result, the line saying how long it took (`where`: what to add to it), and, when the enode
 * changed, the re-permissioning request printed.
 */
export function moveEnded(
  to: NodeSettings,
  done: Omit<MoveResult, 'seconds' | 'repermissioning'> & { started: number },
  where = '',
): MoveResult {
  const { started, ...rest } = done;
  const seconds = (Date.now() - started) / 1000;
  const result: MoveResult = { ...rest, seconds };
  if (done.oldEnode && done.oldEnode !== done.newEnode) {
    result.repermissioning = repermissioningRequest(to, done.oldEnode, done.newEnode);
  }
  say(`node ${to.name} moved in ${durationText(seconds)}${where}`);
  if (result.repermissioning) {
    say('its enode changed: send this re-permissioning request (remove the old enode, add the new one):');
    say(JSON.stringify(result.repermissioning, null, 2));
  }
  return result;
}

/** The request of a moved node whose enode changed: as `npm run init` writes a new node's, and the enode to remove. */
export function repermissioningRequest(node: NodeSettings, oldEnode: string, newEnode: string): RepermissioningRequest {
  const nodeId = parseEnode(newEnode)?.nodeId;
  if (!nodeId) throw new ToolFailure(`not an enode: ${newEnode}`);
  return {
    removeEnode: oldEnode,
    ...permissioningRequest({
      network: node.network,
      nodeType: node.typenode,
      nodeName: node.nodeName,
      email: node.nodeEmail,
      enode: newEnode,
      address: addressOfPublicKey(`0x${nodeId}`),
    }),
  };
}

/** A client and its arguments. */
type ClientCommand = [client: string, args: string[]];

/**
 * Pipes one client's output into another's input (ssh, kubectl), through this process's memory only (never its
 * disk); fails naming `what`, both ends (exit codes, or the signal that ended one) and the last line either said. Once
 * the sink has ended, the source's output is read and dropped, and a sink that failed ends the source: it would
 * otherwise wait for ever on a pipe nobody reads (Node stops reading a source whose destination closed, and no write
 * fails when the sink ended between two writes).
 */
export function pipeClients(source: ClientCommand, sink: ClientCommand, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const from = spawn(source[0], source[1], { stdio: ['ignore', 'pipe', 'pipe'] });
    const to = spawn(sink[0], sink[1], { stdio: ['pipe', 'ignore', 'pipe'] });
    let said = '';
    from.stderr.on('data', (d: Buffer) => (said += d.toString()));
    to.stderr.on('data', (d: Buffer) => (said += d.toString()));
    // A connection cut part-way ends one side first: the pipe's write then fails (EPIPE), which the exit codes below
    // report; unhandled, it ended the whole command without the line saying how to go on.
    from.stdout.on('error', () => from.kill());
    to.stdin.on('error', () => from.kill());
    from.stdout.pipe(to.stdin);
    to.on('exit', (code) => {
      from.stdout.unpipe(to.stdin);
      from.stdout.resume();
      if (code !== 0) from.kill();
    });
    const ends: string[] = [];
    const done = (code: number | null, signal: NodeJS.Signals | null) => {
      ends.push(code === null ? String(signal) : String(code));
      if (ends.length < 2) return;
      if (ends.every((end) => end === '0')) resolve();
      else reject(new ToolFailure(`${what} failed (exit ${ends.join(', ')}): ${lastMeaningfulLine(said)}`));
    };
    from.on('close', done);
    to.on('close', done);
    from.on('error', reject);
    to.on('error', reject);
  });
}

/**
 * What a node says: the enode it was recorded with (unless `enode: false`) and its chain height, each when it
 * answers: the old node's before the move, the new one's while it comes up.
 */
export async function whatTheNodeSays(
  client: NodeClient,
  read = { enode: true },
): Promise<{ oldEnode: string | undefined; headBefore: number | undefined }> {
  const oldEnode = read.enode ? await client.recordedEnode().catch(() => undefined) : undefined;
  const headBefore = await client
    .rpc('eth_blockNumber')
    .then((hex) => Number.parseInt(String(hex), 16))
    .catch(() => undefined);
  return { oldEnode, headBefore };
}

/** Says a move's step `n/total words` as it begins (`steps`: the move's steps, in order). */
export function sayStep<Step extends string>(steps: Readonly<Record<Step, string>>, step: Step): void {
  const names = Object.keys(steps);
  say(`${names.indexOf(step) + 1}/${names.length} ${steps[step]}`);
}

/** The failure a cut move ends with: what went wrong, then the line saying which place runs and how to go on. */
export function withCutLine(error: unknown, cutLine: string): ToolFailure {
  const message = error instanceof Error ? error.message : String(error);
  return new ToolFailure(`${message}\n${cutLine}`);
}

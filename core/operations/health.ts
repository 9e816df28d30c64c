/**
 * The health check of a node (the seed's): is the service running, does it answer, has it peers, do blocks advance,
 * does its log show block imports, and is it the node the stack permissioned. Pure: observations in, verdicts out.
 */
import type { CompanionName } from '../catalog/companions';
import { MAX_HEAD_AGE_SECONDS } from '../catalog/health';
import { CauseObservations, CauseVerdict, diskVerdict, Fixes, noPeerVerdicts, permissioningVerdicts } from './causes';
import type { DiskUsage } from './disk';
import type { SyncState } from './rpc';

/** What was observed on the node. Undefined fields could not be observed. */
export interface Observations {
  /** Whether the service (systemd) or pod (Kubernetes) runs, and how the client describes it. */
  service: { running: boolean; detail: string };
  /** Why the RPC could not be asked, when it could not. */
  rpcError?: string;
  peerCount?: number;
  /** The block number at the start and at the end of the observation window. */
  blockFirst?: number;
  blockSecond?: number;
  windowSeconds: number;
  syncing?: SyncState;
  /** Age in seconds of the newest "Imported #" line of the log; undefined when there is none. */
  lastImportAgeSeconds?: number;
  reportedEnode?: string;
  /** The stack's enode, as the program recorded it. */
  expectedEnode?: string;
  /** The companion services the node must run (`lacchain:companions`), each running or not. */
  companions?: CompanionState[];
  /** The data's disk, when it could be read. */
  disk?: DiskUsage;
  /** What the causes of no peers are judged from (permissioning, address, ports, clock), when they were observed. */
  causes?: CauseObservations;
}

/** One companion service as observed: its name, whether it runs, and how the client describes it. */
export interface CompanionState {
  name: string;
  running: boolean;
  detail: string;
}

/** The verdict of one check. */
export interface Verdict {
  /** The check, or the name of a companion service. */
  check: 'service' | 'rpc' | 'peers' | 'block sync' | 'block imports' | 'enode' | CauseVerdict['check'] | CompanionName;
  ok: boolean;
  detail: string;
  /** The command or setting that fixes a failed check, when one does. */
  fix?: string;
}

/** A block import older than this means the log shows no recent sync (the head-stalled alert's window too). */
export const MAX_IMPORT_AGE_SECONDS = MAX_HEAD_AGE_SECONDS;

/** Every check's verdict; failed ones name their fix. */
export function evaluateHealth(o: Observations, fixes: Fixes): Verdict[] {
  const verdicts: Verdict[] = [{ check: 'service', ok: o.service.running, detail: o.service.detail }];
  if (o.rpcError !== undefined) {
    verdicts.push({ check: 'rpc', ok: false, detail: o.rpcError });
  } else {
    verdicts.push({ check: 'rpc', ok: true, detail: 'answers JSON-RPC' });
    verdicts.push(
      o.peerCount !== undefined && o.peerCount > 0
        ? { check: 'peers', ok: true, detail: `${o.peerCount} peers` }
        : { check: 'peers', ok: false, detail: `${o.peerCount ?? 'unknown'} peers: the node reaches no other node` },
    );
    verdicts.push(blockSync(o));
    if (o.causes !== undefined) verdicts.push(...permissioningVerdicts(o.causes, fixes));
  }
  verdicts.push(
    o.lastImportAgeSeconds === undefined
      ? { check: 'block imports', ok: false, detail: 'no block import in the recent log' }
      : {
          check: 'block imports',
          ok: o.lastImportAgeSeconds <= MAX_IMPORT_AGE_SECONDS,
          detail: `last block import ${Math.round(o.lastImportAgeSeconds)} s ago`,
        },
  );
  if (o.expectedEnode !== undefined || o.reportedEnode !== undefined) {
    const ok = o.expectedEnode !== undefined && o.reportedEnode === o.expectedEnode;
    verdicts.push({
      check: 'enode',
      ok,
      detail: ok
        ? `${o.reportedEnode}`
        : `the node answers ${o.reportedEnode ?? '(nothing)'} but the stack's enode is ${o.expectedEnode ?? '(not recorded)'}`,
      ...(ok || o.reportedEnode === undefined ? {} : { fix: fixes.nodeKey }),
    });
  }
  // A full disk can corrupt Besu's database: below the critical share the node is unhealthy.
  if (o.disk !== undefined) verdicts.push(diskVerdict(o.disk, fixes));
  if (o.causes !== undefined) verdicts.push(...noPeerVerdicts(o.causes, fixes));
  // The network's companion services are required: a writer without its relay signer breaks the gas model.
  for (const companion of o.companions ?? []) {
    verdicts.push({
      check: companion.name as CompanionName,
      ok: companion.running,
      detail: companion.running ? companion.detail : `${companion.detail}: required on this node, and not running`,
    });
  }
  return verdicts;
}

function blockSync(o: Observations): Verdict {
  if (o.blockFirst === undefined || o.blockSecond === undefined) {
    return { check: 'block sync', ok: false, detail: 'the block number could not be read' };
  }
  const behind = o.syncing
    ? `, syncing: ${o.syncing.highestBlock - o.syncing.currentBlock} blocks behind`
    : ', not syncing';
  const advanced = o.blockSecond > o.blockFirst;
  return {
    check: 'block sync',
    ok: advanced,
    detail: advanced
      ? `block ${o.blockFirst} -> ${o.blockSecond} in ${o.windowSeconds} s${behind}`
      : `block ${o.blockSecond} did not advance in ${o.windowSeconds} s${behind}`,
  };
}

/** True when every check passed. */
export function healthy(verdicts: Verdict[]): boolean {
  return verdicts.every((v) => v.ok);
}

/** The checks that fail only because a node has no peers (nothing to import, nothing to sync from). */
const FOLLOW_FROM_NO_PEERS: readonly Verdict['check'][] = ['peers', 'block sync', 'block imports'];

/**
 * True when the node fails only because it is not yet permissioned (and what follows: no peers, no blocks): a restart
 * cannot help, the network operator's answer to its permissioning request can.
 */
export function awaitingPermissioning(verdicts: Verdict[]): boolean {
  const failed = verdicts.filter((v) => !v.ok);
  const notPermissioned = failed.some((v) => v.check === 'permissioning' && v.fix !== undefined);
  return notPermissioned && failed.every((v) => v.check === 'permissioning' || FOLLOW_FROM_NO_PEERS.includes(v.check));
}

/** The recovery of a node that fails only because it is not yet permissioned. */
export const AWAITING_PERMISSIONING_RECOVERY =
  'recovery: the node is not yet permissioned, which a restart cannot change: send its permissioning request (the ' +
  "permissioning line's fix) and run the check again once the network operator has added it (it then says whether a restart is due).";

/** The recovery rule of the seed, for a node that failed a check. */
export function recoveryRule(restartCommand: string, supportContact: string): string {
  return (
    `recovery: restart the node (${restartCommand}, or run the check again with --fix). ` +
    `If a restart does not help, open a support request with ${supportContact}, giving the node's enode and this output.`
  );
}

/** The age in seconds of the newest block import in some log lines (Besu's "YYYY-MM-DD HH:MM:SS.mmm+00:00 | ... Imported #"). */
export function lastImportAge(logText: string, nowEpochSeconds: number): number | undefined {
  const lines = logText.split('\n').filter((l) => /Imported #/.test(l));
  const last = lines[lines.length - 1];
  if (!last) return undefined;
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?([+-]\d{2}:?\d{2}|Z)?/.exec(last);
  if (!match) return undefined;
  const zone = match[4] ? (match[4] === 'Z' ? 'Z' : match[4].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2')) : 'Z';
  const time = Date.parse(`${match[1]}T${match[2]}${match[3] ?? ''}${zone}`) / 1000;
  return Number.isNaN(time) ? undefined : Math.max(0, nowEpochSeconds - time);
}

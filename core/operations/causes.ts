/**
 * Why a node has no peers, each cause with what fixes it: whether the network permissioned it (and whether a restart
 * is due since), the address it really leaves from, 60606 TCP and UDP from outside, its clock, its key, its disk.
 * Pure: observations and the node's words for its fixes in, verdicts out.
 */
import { DISK_FREE, MAX_CLOCK_OFFSET_SECONDS } from '../catalog/health';
import { nodePaths } from '../remote/paths';
import type { NodeSettings } from '../settings/model';
import { diskText, DiskUsage, freeShare } from './disk';
import { permissioned, PermissioningAnswer, permissioningState } from './permissioning';

/** The commands and settings that fix each cause, in the node's own names. */
export interface Fixes {
  /** How to send the permissioning request. */
  request: string;
  /** The operator's restart command. */
  restart: string;
  /** How the stack's key goes back on the node. */
  nodeKey: string;
  /** The setting of the advertised p2p address. */
  p2pHost: string;
  /** What opens 60606 TCP and UDP. */
  p2pPort: string;
  /** What makes the clock right. */
  clock: string;
  /** What gives the data room. */
  disk: string;
}

/** The fixes, for one node of a stack. */
export function fixesFor(node: NodeSettings, stack: string): Fixes {
  const machine = node.target === 'ssh';
  return {
    request:
      `send the node's permissioning request (pulumi stack output nodes --stack ${stack} --json: ` +
      `${node.name}.permissioningRequest) to the network operator. ${node.network.permissioningProcedure}`,
    restart: `npm run node -- check --stack ${stack} --node ${node.name} --fix (or restart)`,
    nodeKey: machine
      ? `put the stack's key back: on the machine move ${nodePaths(node).key} away (keep it), run the node-key step ` +
        `again (pulumi up --replace $(pulumi stack --show-urns | grep -o 'urn:[^ ]*::${node.name}-node-key')), then ` +
        `npm run node -- restart --stack ${stack} --node ${node.name}`
      : `put the stack's key back in the Secret (pulumi up --replace ` +
        `$(pulumi stack --show-urns | grep -o 'urn:[^ ]*Secret::${node.name}-key')), then ` +
        `npm run node -- restart --stack ${stack} --node ${node.name}`,
    p2pHost: machine
      ? `set inventory.node_ip of node ${node.name} in ${node.settingsFile} to the address the machine leaves from (or have the NAT give the ` +
        `machine the enode's address), pulumi up, and send the new enode for permissioning`
      : `pin the pod to the worker whose address is the enode's (deploy.workerName in ${node.settingsFile}), or set ` +
        `deploy.p2p.host to the worker's address, pulumi up, and send the new enode for permissioning`,
    p2pPort: machine
      ? `open ${node.p2pPort} TCP and UDP to the machine in every firewall before it (the machine's own is the ` +
        `program's: pulumi up puts it back)`
      : `open ${node.p2pPort} TCP and UDP to the LoadBalancer's address (deploy.publicIP) in the cloud's firewall`,
    clock: machine
      ? 'turn on time synchronisation on the machine: sudo timedatectl set-ntp true (systemd-timesyncd or chrony)'
      : "synchronise the workers' clocks (the cluster's NTP)",
    disk: machine
      ? `give the node's filesystem room (a bigger disk), or move old files off it; Besu can corrupt its database on a full disk`
      : `grow the data volume (deploy.volumeSize in ${node.settingsFile}, if the storage class allows it)`,
  };
}

/** One check's verdict, with the fix when it failed. */
export interface CauseVerdict {
  check: 'permissioning' | 'restart' | 'p2p address' | 'p2p tcp' | 'p2p udp' | 'clock' | 'disk';
  ok: boolean;
  detail: string;
  fix?: string;
}

/** What the contract said: at the node's head, and at the head it had when it last started. */
export interface PermissioningObservation {
  /** At the node's head. */
  head: PermissioningAnswer;
  /** At the block that was the head when the node last started, when it could be read. */
  atStart?: PermissioningAnswer;
}

/** How the operator's machine saw the node's p2p port: connected (open), refused (closed), or no answer. */
export type ProbeResult = 'open' | 'refused' | 'no answer' | 'no refusal';

/** What the causes are judged from. */
export interface CauseObservations {
  /** The contract's answers, or why they could not be read. */
  permissioning?: PermissioningObservation | { error: string };
  peers?: number;
  syncing: boolean;
  /** While syncing: the network's head as the node's peers report it (eth_syncing's highestBlock). */
  highestBlock?: number;
  /** The enode's IP. */
  enodeIp: string;
  /**
   * The node moved to this place (`npm run node -- move`): the enode it had before, which the network permissioned,
   * and the one it has now.
   */
  moved?: { from: string; to: string };
  /** The addresses the node leaves from (the machine's source address, the pod's worker's), and how they were read. */
  egress?: { addresses: string[]; how: string };
  /** 60606 probed from the operator's machine. */
  tcp?: ProbeResult;
  udp?: ProbeResult;
  /** The node's clock minus the operator's, in seconds; and whether the machine says it is synchronised. */
  clock?: { offsetSeconds: number; synchronised?: boolean };
  disk?: DiskUsage;
}

/** The permissioning verdicts: the state, and whether a restart is due since the node was permissioned. */
export function permissioningVerdicts(o: CauseObservations, fixes: Fixes): CauseVerdict[] {
  if (o.permissioning === undefined) return [];
  if ('error' in o.permissioning) {
    return [{ check: 'permissioning', ok: false, detail: `cannot ask the contract: ${o.permissioning.error}` }];
  }
  const { head, atStart } = o.permissioning;
  const state = permissioningState(head, o.peers, o.syncing);
  const where = `at block ${head.block}, allowed to connect to ${head.allowed} of the network's ${head.of} bootnodes`;
  if (state === 'not permissioned' && o.syncing && (o.peers ?? 0) > 0) {
    // The contract is read at the node's own head, which a node syncing from genesis has not brought past its
    // permissioning yet. Peers let it in only because both ends are registered: it is permissioned at the network's
    // head. Nothing to fix: it catches up.
    const of = o.highestBlock === undefined ? '' : ` of ${o.highestBlock}`;
    return [
      {
        check: 'permissioning',
        ok: true,
        detail: `syncing (block ${head.block}${of}): connected to ${o.peers} peers, so permissioned at the network's head; the contract at the node's own head predates that (${where})`,
      },
    ];
  }
  if (state === 'not permissioned' && o.moved !== undefined && o.moved.from !== o.moved.to) {
    // A moved node whose enode changed: not a node without peers, but a request the network has not answered yet.
    return [
      {
        check: 'permissioning',
        ok: false,
        detail: `not yet permissioned at its new enode: the node moved here from ${o.moved.from} (${where})`,
        fix: `send the re-permissioning request npm run node -- move printed: remove ${o.moved.from}, add ${o.moved.to}. ${fixes.request}`,
      },
    ];
  }
  if (state === 'not permissioned') {
    return [{ check: 'permissioning', ok: false, detail: `not yet permissioned (${where})`, fix: fixes.request }];
  }
  const verdicts: CauseVerdict[] = [{ check: 'permissioning', ok: true, detail: `${state} (${where})` }];
  if (state === 'permissioned, no peers' && atStart !== undefined && !permissioned(atStart)) {
    verdicts.push({
      check: 'restart',
      ok: false,
      detail: `due: the node was permissioned after its last start (not yet at block ${atStart.block}) and has no peers`,
      fix: fixes.restart,
    });
  }
  return verdicts;
}

/** Seconds to a tenth with their sign (`+42.0`, `-1.5`), and `0.0` for what rounds to nothing (never `-0.0`). */
function signedTenths(seconds: number): string {
  const tenths = Math.round(seconds * 10);
  return `${tenths > 0 ? '+' : tenths < 0 ? '-' : ''}${(Math.abs(tenths) / 10).toFixed(1)}`;
}

/** The causes of no peers other than permissioning: address, ports, clock. Judged only when the node has no peers. */
export function noPeerVerdicts(o: CauseObservations, fixes: Fixes): CauseVerdict[] {
  if (o.peers === undefined || o.peers > 0) return [];
  const verdicts: CauseVerdict[] = [];
  if (o.egress !== undefined) verdicts.push(addressVerdict(o.enodeIp, o.egress, fixes));
  if (o.tcp !== undefined) verdicts.push(portVerdict('p2p tcp', o.tcp, o.enodeIp, fixes));
  if (o.udp !== undefined) verdicts.push(portVerdict('p2p udp', o.udp, o.enodeIp, fixes));
  if (o.clock !== undefined) {
    const off = Math.abs(o.clock.offsetSeconds);
    const ok = off <= MAX_CLOCK_OFFSET_SECONDS;
    const offset = `${signedTenths(o.clock.offsetSeconds)} s from this machine's`;
    const unsynchronised = o.clock.synchronised === false;
    const synchronised =
      o.clock.synchronised === undefined ? '' : unsynchronised ? ', not synchronised (NTP)' : ', synchronised';
    verdicts.push({
      check: 'clock',
      ok,
      detail: !ok
        ? `${offset}${synchronised}: more than ${MAX_CLOCK_OFFSET_SECONDS} s, peers drop its discovery packets and blocks`
        : unsynchronised
          ? `${offset}, within ${MAX_CLOCK_OFFSET_SECONDS} s for now, but not synchronised (NTP), so it drifts: ${fixes.clock}`
          : `${offset}${synchronised}`,
      ...(ok ? {} : { fix: fixes.clock }),
    });
  }
  return verdicts;
}

/** Private (RFC 1918) and shared (RFC 6598) IPv4 addresses: a node leaving from one is behind a NAT. */
export function privateIpv4(ip: string): boolean {
  const [a, b] = ip.split('.').map(Number);
  return a === 10 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b < 128);
}

/**
 * Whether the enode's address is the node's: one it leaves from, or, leaving from a private address, a public one (its
 * NAT's, which cannot be seen from the node). Only then is 60606 probed at it.
 */
export function enodeAddressIsTheNodes(enodeIp: string, egress: { addresses: string[] }): boolean {
  return egress.addresses.includes(enodeIp) || (!privateIpv4(enodeIp) && egress.addresses.every(privateIpv4));
}

/**
 * The enode's address against the ones the node leaves from. A node leaving from a private address is behind a NAT
 * whose public address cannot be seen from the node: that is not a finding (the probes from outside tell the rest).
 */
function addressVerdict(enodeIp: string, egress: { addresses: string[]; how: string }, fixes: Fixes): CauseVerdict {
  const leaves = egress.addresses.join(', ');
  if (egress.addresses.includes(enodeIp)) {
    return { check: 'p2p address', ok: true, detail: `the node leaves from ${enodeIp}, the enode's (${egress.how})` };
  }
  if (!privateIpv4(enodeIp) && egress.addresses.every(privateIpv4)) {
    return {
      check: 'p2p address',
      ok: true,
      detail: `the node leaves from ${leaves} (${egress.how}), behind a NAT: ${enodeIp} must be that NAT's address`,
    };
  }
  return {
    check: 'p2p address',
    ok: false,
    detail: `the enode says ${enodeIp} but the node leaves from ${leaves} (${egress.how}): the network allows the enode's address only (60606 not probed at an address the node does not leave from)`,
    fix: fixes.p2pHost,
  };
}

function portVerdict(check: 'p2p tcp' | 'p2p udp', result: ProbeResult, ip: string, fixes: Fixes): CauseVerdict {
  const protocol = check === 'p2p tcp' ? 'TCP' : 'UDP';
  const what: Record<ProbeResult, string> = {
    open: 'open from this machine',
    refused: 'refused from this machine: nothing listens there, or a firewall rejects it',
    'no answer': 'no answer from this machine: a firewall drops it, or the address is not the node',
    'no refusal': 'no refusal from this machine (a datagram is not answered: open, or dropped by a firewall)',
  };
  const ok = result === 'open' || result === 'no refusal';
  return {
    check,
    ok,
    detail: `${protocol} ${ip}: ${what[result]}`,
    ...(ok ? {} : { fix: fixes.p2pPort }),
  };
}

/** The disk: below the critical share of free space the node is unhealthy (Besu's database can break on a full disk). */
export function diskVerdict(disk: DiskUsage, fixes: Fixes): CauseVerdict {
  const ok = freeShare(disk) >= DISK_FREE.critical;
  return { check: 'disk', ok, detail: diskText(disk), ...(ok ? {} : { fix: fixes.disk }) };
}

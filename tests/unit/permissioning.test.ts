/**
 * Is the node permissioned, and why has it no peers: the permissioning call as Besu makes it (checked against an
 * independent ABI encoder from the npm registry, @metamask/abi-utils), the three states, and each cause with its fix.
 */
import { encode } from '@metamask/abi-utils';
import {
  CauseObservations,
  fixesFor,
  noPeerVerdicts,
  permissioningVerdicts,
  privateIpv4,
  enodeAddressIsTheNodes,
} from '../../core/operations/causes';
import { evaluateHealth, Observations } from '../../core/operations/health';
import {
  CONNECTION_ANSWERS,
  connectionAllowed,
  connectionAllowedData,
  enodeParts,
  ipBytes16,
  permissioningDestinations,
  permissioningState,
} from '../../core/operations/permissioning';
import { NETWORKS } from '../../core/catalog/networks';
import { permissioningRequest } from '../../core/permissioning';
import * as fs from 'fs';
import * as path from 'path';
import { PROJECT_DIR } from '../../core/projectDir';
import { MAX_CLOCK_OFFSET_SECONDS } from '../../core/catalog/health';
import { FIXES, healthyObservations, loadTestnet } from '../../testing/fixtures';

const NODE = `enode://${'ab'.repeat(32)}${'cd'.repeat(32)}@203.0.113.10:60606`;
const BOOTNODE = `enode://${'12'.repeat(64)}@198.51.100.7:60606`;

describe('the permissioning call, as Besu makes it (contract version 1)', () => {
  it('is connectionAllowed(bytes32,bytes32,bytes16,uint16,bytes32,bytes32,bytes16,uint16), selector 0x3620b1df', () => {
    const data = connectionAllowedData(enodeParts(NODE), enodeParts(BOOTNODE));
    expect(data.slice(0, 10)).toBe('0x3620b1df');
    expect(data.length).toBe(2 + 8 + 8 * 64);
  });

  it('encodes the same bytes as an independent ABI encoder (@metamask/abi-utils)', () => {
    const source = enodeParts(NODE);
    const destination = enodeParts(BOOTNODE);
    const independent = encode(
      ['bytes32', 'bytes32', 'bytes16', 'uint16', 'bytes32', 'bytes32', 'bytes16', 'uint16'],
      [
        `0x${source.id.slice(0, 64)}`,
        `0x${source.id.slice(64)}`,
        '0x00000000000000000000ffffcb00710a', // ::ffff:203.0.113.10
        60606,
        `0x${destination.id.slice(0, 64)}`,
        `0x${destination.id.slice(64)}`,
        '0x00000000000000000000ffffc6336407', // ::ffff:198.51.100.7
        60606,
      ],
    );
    expect(connectionAllowedData(source, destination)).toBe(`0x3620b1df${Buffer.from(independent).toString('hex')}`);
  });

  it('writes an IPv4 address as the IPv4-mapped IPv6 address', () => {
    expect(ipBytes16('10.0.0.1')).toBe('0x00000000000000000000ffff0a000001');
    expect(ipBytes16('255.255.255.255')).toBe('0x00000000000000000000ffffffffffff');
  });

  it('reads the enode (id, IP, port), and refuses one it cannot ask with', () => {
    expect(enodeParts(`${NODE}?discport=30301`)).toEqual({
      id: `${'ab'.repeat(32)}${'cd'.repeat(32)}`,
      ip: '203.0.113.10',
      port: 60606,
    });
    expect(() => enodeParts(`enode://${'ab'.repeat(64)}@node.example.org:60606`)).toThrow(/not an enode with an IPv4/);
    expect(() => enodeParts(`enode://${'ab'.repeat(64)}@300.0.0.1:60606`)).toThrow(/not an enode/);
    expect(() => enodeParts(`enode://${'ab'.repeat(63)}@10.0.0.1:60606`)).toThrow(/not an enode/);
  });

  it('reads the answer as Besu does: all ones allowed, 0x7f… refused, anything else an error', () => {
    expect(connectionAllowed(CONNECTION_ANSWERS.allowed)).toBe(true);
    expect(connectionAllowed(CONNECTION_ANSWERS.refused.toUpperCase().replace('0X', '0x'))).toBe(false);
    expect(() => connectionAllowed('0x')).toThrow(/neither allowed nor refused/);
    expect(() => connectionAllowed(`0x${'00'.repeat(32)}`)).toThrow(/neither allowed nor refused/);
  });

  it("asks for a connection to each of the network's bootnodes but not to itself", () => {
    const bootnodes = NETWORKS['open-protestnet'].bootnodes.bootnode;
    expect(permissioningDestinations(NODE, bootnodes)).toHaveLength(bootnodes.length);
    expect(permissioningDestinations(bootnodes[0], bootnodes)).toHaveLength(bootnodes.length - 1);
  });
});

const head = (allowed: number, block = 500) => ({ block, allowed, of: 2 });
const base: CauseObservations = { peers: 3, syncing: false, enodeIp: '203.0.113.10' };

describe('the three permissioning states', () => {
  it('not yet permissioned: the request is the fix', () => {
    expect(permissioningState(head(0), 0, false)).toBe('not permissioned');
    expect(permissioningVerdicts({ ...base, peers: 0, permissioning: { head: head(0) } }, FIXES)).toEqual([
      {
        check: 'permissioning',
        ok: false,
        detail: "not yet permissioned (at block 500, allowed to connect to 0 of the network's 2 bootnodes)",
        fix: FIXES.request,
      },
    ]);
  });

  it('permissioned but no peers, permissioned and syncing, in sync', () => {
    expect(permissioningState(head(1), 0, false)).toBe('permissioned, no peers');
    expect(permissioningState(head(2), 4, true)).toBe('permissioned, syncing');
    expect(permissioningState(head(2), 4, false)).toBe('in sync');
    const [verdict] = permissioningVerdicts({ ...base, permissioning: { head: head(2) } }, FIXES);
    expect(verdict).toEqual({
      check: 'permissioning',
      ok: true,
      detail: "in sync (at block 500, allowed to connect to 2 of the network's 2 bootnodes)",
    });
  });

  it("syncing from genesis with peers: permissioned at the network's head, whatever the contract says at its own", () => {
    // Freshly approved, syncing: its head is before the block that registered it.
    const syncing = { ...base, peers: 3, syncing: true, highestBlock: 90_000, permissioning: { head: head(0, 1200) } };
    expect(permissioningVerdicts(syncing, FIXES)).toEqual([
      {
        check: 'permissioning',
        ok: true,
        detail:
          "syncing (block 1200 of 90000): connected to 3 peers, so permissioned at the network's head; the contract at the node's own head predates that (at block 1200, allowed to connect to 0 of the network's 2 bootnodes)",
      },
    ]);
    // Without peers, or not syncing, the contract's answer stands.
    expect(permissioningVerdicts({ ...syncing, peers: 0 }, FIXES)[0].ok).toBe(false);
    expect(permissioningVerdicts({ ...syncing, syncing: false }, FIXES)[0].ok).toBe(false);
  });

  it('a restart is due when the node was permissioned after its last start and has no peers', () => {
    const after = { ...base, peers: 0, permissioning: { head: head(2), atStart: head(0, 420) } };
    expect(permissioningVerdicts(after, FIXES)[1]).toEqual({
      check: 'restart',
      ok: false,
      detail: 'due: the node was permissioned after its last start (not yet at block 420) and has no peers',
      fix: FIXES.restart,
    });
    // Already permissioned when it started: a restart is not what it needs.
    expect(
      permissioningVerdicts({ ...after, permissioning: { head: head(2), atStart: head(2, 420) } }, FIXES),
    ).toHaveLength(1);
    // With peers, nothing is due.
    expect(permissioningVerdicts({ ...after, peers: 2 }, FIXES)).toHaveLength(1);
  });

  it('an answer that could not be read is a failed check naming why', () => {
    expect(
      permissioningVerdicts({ ...base, permissioning: { error: 'eth_call: Method not enabled (-32604)' } }, FIXES),
    ).toEqual([
      { check: 'permissioning', ok: false, detail: 'cannot ask the contract: eth_call: Method not enabled (-32604)' },
    ]);
  });
});

describe('the causes of no peers, each with its fix', () => {
  const none = { ...base, peers: 0 };
  const failed = (o: CauseObservations) =>
    noPeerVerdicts(o, FIXES)
      .filter((v) => !v.ok)
      .map((v) => [v.check, v.fix]);

  it('are looked at only when the node has no peers', () => {
    expect(noPeerVerdicts({ ...base, tcp: 'refused', clock: { offsetSeconds: 60 } }, FIXES)).toEqual([]);
  });

  it("the enode's address is not the one the node leaves from", () => {
    const moved = { ...none, egress: { addresses: ['198.51.100.20'], how: 'the source of its route to 1.2.3.4' } };
    expect(failed(moved)).toEqual([['p2p address', FIXES.p2pHost]]);
    expect(noPeerVerdicts(moved, FIXES)[0].detail).toBe(
      "the enode says 203.0.113.10 but the node leaves from 198.51.100.20 (the source of its route to 1.2.3.4): the network allows the enode's address only (60606 not probed at an address the node does not leave from)",
    );
    // 60606 is probed only at an address that is the node's (one it leaves from, or behind a NAT a public one).
    expect(enodeAddressIsTheNodes('203.0.113.10', { addresses: ['198.51.100.20'] })).toBe(false);
    expect(enodeAddressIsTheNodes('10.0.0.5', { addresses: ['10.0.0.4'] })).toBe(false);
    expect(enodeAddressIsTheNodes('203.0.113.10', { addresses: ['203.0.113.10'] })).toBe(true);
    expect(enodeAddressIsTheNodes('203.0.113.10', { addresses: ['10.0.0.4'] })).toBe(true);
    expect(failed({ ...none, egress: { addresses: ['203.0.113.10'], how: 'x' } })).toEqual([]);
    // Behind a NAT the public address cannot be seen from the node: not a finding.
    const nat = noPeerVerdicts({ ...none, egress: { addresses: ['10.0.0.4'], how: 'x' } }, FIXES)[0];
    expect(nat.ok).toBe(true);
    expect(nat.detail).toMatch(/behind a NAT: 203.0.113.10 must be that NAT's address/);
    // Both private and different: the enode names another machine.
    expect(failed({ ...none, enodeIp: '10.0.0.5', egress: { addresses: ['10.0.0.4'], how: 'x' } })).toEqual([
      ['p2p address', FIXES.p2pHost],
    ]);
    expect(['10.1.2.3', '172.16.0.1', '172.31.255.1', '192.168.1.1', '100.64.0.1'].every(privateIpv4)).toBe(true);
    expect(['172.32.0.1', '203.0.113.10', '100.128.0.1', '11.0.0.1'].some(privateIpv4)).toBe(false);
  });

  it('60606 TCP or UDP closed from outside', () => {
    expect(failed({ ...none, tcp: 'open', udp: 'no refusal' })).toEqual([]);
    expect(failed({ ...none, tcp: 'refused', udp: 'no refusal' })).toEqual([['p2p tcp', FIXES.p2pPort]]);
    expect(failed({ ...none, tcp: 'no answer', udp: 'refused' })).toEqual([
      ['p2p tcp', FIXES.p2pPort],
      ['p2p udp', FIXES.p2pPort],
    ]);
    expect(noPeerVerdicts({ ...none, tcp: 'no answer' }, FIXES)[0].detail).toBe(
      'TCP 203.0.113.10: no answer from this machine: a firewall drops it, or the address is not the node',
    );
  });

  it(`the clock more than ${MAX_CLOCK_OFFSET_SECONDS} s off`, () => {
    expect(failed({ ...none, clock: { offsetSeconds: MAX_CLOCK_OFFSET_SECONDS - 0.5, synchronised: true } })).toEqual(
      [],
    );
    expect(failed({ ...none, clock: { offsetSeconds: -(MAX_CLOCK_OFFSET_SECONDS + 5), synchronised: false } })).toEqual(
      [['clock', FIXES.clock]],
    );
    expect(noPeerVerdicts({ ...none, clock: { offsetSeconds: 42.04, synchronised: false } }, FIXES)[0].detail).toBe(
      `+42.0 s from this machine's, not synchronised (NTP): more than ${MAX_CLOCK_OFFSET_SECONDS} s, peers drop its discovery packets and blocks`,
    );
  });

  const observed: Observations = { ...healthyObservations(NODE), peerCount: 0 };

  it("the key on the node is not the stack's, and the disk is low: each names its fix", () => {
    const verdicts = evaluateHealth(
      {
        ...observed,
        reportedEnode: BOOTNODE,
        disk: { dataBytes: 1, availableBytes: 1, sizeBytes: 100 },
        causes: { ...none, permissioning: { head: head(1) } },
      },
      FIXES,
    );
    expect(verdicts.filter((v) => !v.ok).map((v) => [v.check, v.fix])).toEqual([
      ['peers', undefined],
      ['enode', FIXES.nodeKey],
      ['disk', FIXES.disk],
    ]);
    expect(verdicts.find((v) => v.check === 'permissioning')!.detail).toMatch(/^permissioned, no peers/);
  });

  it("names the node's own commands and settings", () => {
    const settings = loadTestnet();
    for (const node of settings.nodes) {
      const fixes = fixesFor(node, 'testnet');
      expect(fixes.request).toContain(
        `pulumi stack output nodes --stack testnet --json: ${node.name}.permissioningRequest`,
      );
      expect(fixes.request).toContain(node.network.permissioningProcedure);
      expect(fixes.restart).toBe(`npm run node -- check --stack testnet --node ${node.name} --fix (or restart)`);
      expect(fixes.p2pHost).toContain(node.settingsFile);
      expect(fixes.nodeKey).toContain(node.target === 'ssh' ? `::${node.name}-node-key` : `Secret::${node.name}-key`);
    }
  });
});

describe('where the permissioning request goes (the catalog, the stack output, the README)', () => {
  const live = Object.values(NETWORKS).filter((n) => !n.deprecated);
  /** The addresses and pages a network's request goes to, as the catalog names them. */
  const destinations = (text: string) => text.match(/[\w.-]+@[\w.-]+\.\w+|https:\/\/\S+?(?=[),;]?(\s|$))/g) ?? [];

  it.each(live.map((n) => [n.name, n] as const))('%s: the request names where it is sent and how', (_, network) => {
    const request = permissioningRequest({
      network,
      nodeType: 'writer',
      nodeName: 'org-writer',
      email: 'ops@example.org',
      enode: 'enode://x',
      address: '0x0',
    });
    expect(request.procedure).toContain(network.permissioningProcedure);
    expect(request.procedure).toContain(network.permissioningRequestTo);
    expect(destinations(network.permissioningRequestTo).length).toBeGreaterThan(0);
  });

  it('the README names the same places, per network', () => {
    const readme = fs.readFileSync(path.join(PROJECT_DIR, 'README.md'), 'utf8');
    expect(NETWORKS['open-protestnet'].permissioningRequestTo).toContain('tech.support@lac-net.net');
    for (const network of live) {
      for (const place of destinations(network.permissioningRequestTo))
        expect({ place, in: readme.includes(place) }).toEqual({ place, in: true });
    }
  });
});

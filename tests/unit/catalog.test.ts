/**
 * The network catalog and Besu releases: the facts other code relies on.
 */
import { findNetwork, NETWORK_MENU, NETWORKS, networkOfStack } from '../../core/catalog/networks';
import { parseEnode } from '../../core/identity/nodeKey';
import { acceptedOptions, javaMajorFor, optionListRelease, unsupportedReason } from '../../core/catalog/besu';
import { NODE_TYPE_FACTS, UNSAFE_RPC_APIS } from '../../core/catalog/nodeTypes';

describe('networks', () => {
  it('maps stacks to networks and keeps the installer menu order', () => {
    expect(networkOfStack('testnet').networkId).toBe(648540);
    expect(networkOfStack('mainnet').networkId).toBe(648541);
    expect(NETWORK_MENU.map((n) => n.name)).toEqual(['mainnet-omega', 'open-protestnet', 'legacy-protestnet']);
    expect(findNetwork('open-protest-net')?.name).toBe('open-protestnet');
    expect(NETWORKS['legacy-protestnet'].deprecated).toMatch(/deprecated/);
  });

  it('holds well-formed bootnodes per node type', () => {
    for (const network of [NETWORKS['mainnet-omega'], NETWORKS['open-protestnet']]) {
      for (const list of Object.values(network.bootnodes)) {
        expect(list.length).toBeGreaterThan(0);
        for (const enode of list) expect(parseEnode(enode)).toMatchObject({ port: 60606 });
      }
    }
    expect(NETWORKS['mainnet-omega'].bootnodes.writer).toHaveLength(4);
    expect(NETWORKS['mainnet-omega'].bootnodes.validator).toHaveLength(6);
    expect(NETWORKS['mainnet-omega'].maxPeers.bootnode).toBe(250);
  });

  it('pins every genesis by a SHA-256 digest', () => {
    for (const network of Object.values(NETWORKS)) expect(network.genesis.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('never enables unsafe RPC APIs by default', () => {
    for (const facts of Object.values(NODE_TYPE_FACTS)) {
      for (const api of UNSAFE_RPC_APIS) expect(facts.rpcApis).not.toContain(api);
    }
    expect(NODE_TYPE_FACTS.validator.rpcApis).not.toContain('WEB3');
    expect(NODE_TYPE_FACTS.writer.rpcApis).toContain('WEB3');
  });
});

describe('Besu releases', () => {
  it('knows which releases can be deployed', () => {
    expect(unsupportedReason('23.4.1')).toBeUndefined();
    expect(unsupportedReason('25.5.9')).toBeUndefined();
    expect(unsupportedReason('25.6.0')).toMatch(/on-chain permissioning/);
    expect(unsupportedReason('1.3.5')).toMatch(/older/);
    expect(unsupportedReason('23.4')).toMatch(/not a release/);
  });
  it('picks the option list of the newest known release not newer than the version', () => {
    expect(optionListRelease('23.4.1')).toBe('23.4.1');
    expect(optionListRelease('23.10.2')).toBe('23.4.1');
    expect(optionListRelease('25.5.3')).toBe('25.5.0');
    expect(acceptedOptions('1.4.4').has('host-whitelist')).toBe(true);
    expect(acceptedOptions('1.4.4').has('host-allowlist')).toBe(false);
    expect(acceptedOptions('25.5.0').has('host-whitelist')).toBe(false);
  });
  it('names the Java each release needs', () => {
    expect([javaMajorFor('22.1.0'), javaMajorFor('23.4.1'), javaMajorFor('24.6.0')]).toEqual([11, 17, 21]);
  });
});

/**
 * config.toml per Besu release: only keys the release accepts, the right allowlist key, the catalog's facts.
 */
import { parse as parseToml } from 'smol-toml';
import { acceptedOptions, KNOWN_RELEASES } from '../../core/catalog/besu';
import { NETWORKS } from '../../core/catalog/networks';
import { NODE_TYPES, NodeType } from '../../core/catalog/nodeTypes';
import { besuConfig, renderConfigToml, BesuConfigInput } from '../../core/besu/configToml';

const input = (
  releaseVersion: string,
  typenode: NodeType = 'writer',
  network = NETWORKS['mainnet-omega'],
): BesuConfigInput => ({
  network,
  typenode,
  releaseVersion,
  nodeName: 'org-node',
  p2pHost: '190.113.0.10',
  p2pPort: 60606,
  rpcHosts: ['190.113.0.10', 'node.example.org'],
  paths: { dataPath: '/data', genesisFile: '/config/genesis.json', nodeKeyFile: '/key/key' },
});

// Every known release, and versions between them that take the older list.
const VERSIONS = [...KNOWN_RELEASES, '1.5.0', '21.1.2', '23.10.3', '24.3.0', '25.5.9'];

describe.each(VERSIONS)('Besu %s', (version) => {
  it.each(NODE_TYPES)('%s: every key is accepted by the release, and the text parses back', (typenode) => {
    for (const network of [NETWORKS['mainnet-omega'], NETWORKS['open-protestnet']]) {
      const config = besuConfig(input(version, typenode, network));
      for (const key of Object.keys(config)) expect(acceptedOptions(version).has(key)).toBe(true);
      expect(parseToml(renderConfigToml(input(version, typenode, network)))).toEqual(config);
    }
  });
});

describe('release differences', () => {
  it('uses host-whitelist before 1.5.2 and host-allowlist from 1.5.2', () => {
    expect(besuConfig(input('1.4.4'))['host-whitelist']).toEqual([
      'localhost',
      '127.0.0.1',
      '190.113.0.10',
      'node.example.org',
    ]);
    expect(besuConfig(input('1.4.4'))['host-allowlist']).toBeUndefined();
    expect(besuConfig(input('1.5.2'))['host-allowlist']).toBeDefined();
    expect(besuConfig(input('25.5.0'))['host-whitelist']).toBeUndefined();
  });

  it('pins FOREST storage where the release has the option, so an upgrade past 24.3.0 keeps the database', () => {
    expect(besuConfig(input('22.1.0'))['data-storage-format']).toBeUndefined();
    expect(besuConfig(input('23.4.1'))['data-storage-format']).toBe('FOREST');
    expect(besuConfig(input('24.3.0'))['data-storage-format']).toBe('FOREST');
  });

  it("gives a mainnet bootnode 250 peers and every node its type's bootnodes", () => {
    expect(besuConfig(input('23.4.1', 'bootnode'))['max-peers']).toBe(250);
    expect(besuConfig(input('23.4.1', 'writer'))['max-peers']).toBeUndefined();
    expect(besuConfig(input('23.4.1', 'writer'))['bootnodes']).toHaveLength(4);
    expect(besuConfig(input('23.4.1', 'validator'))['bootnodes']).toHaveLength(6);
  });

  it('never enables ADMIN, DEBUG or TXPOOL', () => {
    for (const typenode of NODE_TYPES) {
      const apis = besuConfig(input('23.4.1', typenode))['rpc-http-api'] as string[];
      expect(apis.filter((a) => ['ADMIN', 'DEBUG', 'TXPOOL'].includes(a))).toEqual([]);
    }
  });
});

/**
 * The options the network's Helm chart writes and its Ansible roles do not (issue 65 item 3), as settings: the stack's
 * `lacchain:besu` with a node's own `besu` over it, field by field; none set writes none (the nodes deployed so far
 * keep their config.toml); each is written as Besu reads it, the transaction pool's with `tx-pool="legacy"` from 23.10
 * (the layered pool, Besu's default there, refuses them; facts: besu-node.md), account permissioning with the
 * network's account contract; every key accepted by the release (an unknown key stops Besu).
 */
import * as yaml from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { acceptedOptions, HELM_CHART_OPTIONS } from '../../core/catalog/besu';
import { besuConfig, BesuConfigInput, renderConfigToml } from '../../core/besu/configToml';
import { loadStack } from '../../core/settings/load';
import { describeNode } from '../../core/node/description';
import { SettingsError } from '../../core/settings/problems';
import { memoryFiles, rawConfig, writerConfigInput } from '../../testing/fixtures';
import { kubernetesStack } from '../../testing/values';

const input = (releaseVersion: string, options?: BesuConfigInput['options']): BesuConfigInput =>
  writerConfigInput(releaseVersion, { options });

/** The Helm chart's values, as the settings give them. */
const HELM = { revertReason: true, accountPermissioning: true, ...HELM_CHART_OPTIONS };
const OPTION_KEYS = [
  'revert-reason-enabled',
  'tx-pool',
  'tx-pool-retention-hours',
  'tx-pool-max-size',
  'permissions-accounts-contract-enabled',
  'permissions-accounts-contract-address',
];

describe('config.toml', () => {
  it('writes none of them unless set, nor for false', () => {
    for (const options of [undefined, {}, { revertReason: false, accountPermissioning: false }]) {
      const config = besuConfig(input('23.4.1', options));
      expect(OPTION_KEYS.filter((key) => key in config)).toEqual([]);
    }
  });

  it.each(['1.3.6', '21.1.6', '23.4.1'])("Besu %s: the Helm chart's values, without tx-pool", (version) => {
    const config = besuConfig(input(version, HELM));
    expect(config).toMatchObject({
      'revert-reason-enabled': true,
      'tx-pool-retention-hours': 999,
      'tx-pool-max-size': 1024,
      'permissions-accounts-contract-enabled': true,
      'permissions-accounts-contract-address': '0x0000000000000000000000000000000000008888',
    });
    expect(config['tx-pool']).toBeUndefined();
  });

  it.each(['23.10.3', '24.1.0', '25.5.0'])(
    'Besu %s: the pool options with tx-pool="legacy", every key accepted',
    (version) => {
      const config = besuConfig(input(version, { txPoolMaxSize: 1024 }));
      expect(config).toMatchObject({ 'tx-pool': 'legacy', 'tx-pool-max-size': 1024 });
      expect(config['tx-pool-retention-hours']).toBeUndefined();
      expect(Object.keys(config).filter((key) => !acceptedOptions(version).has(key))).toEqual([]);
      expect(parseToml(tomlOf(version))).toMatchObject({ 'tx-pool': 'legacy', 'tx-pool-retention-hours': 999 });
    },
  );
});

/** The config.toml text of the Helm chart's values for `version`. */
const tomlOf = (version: string) => renderConfigToml(input(version, HELM));

describe('the settings', () => {
  const load = (extra: Record<string, unknown>, writerBesu?: Record<string, unknown>) => {
    const { config, files } = kubernetesStack('testnet', extra);
    if (writerBesu) (config['lacchain:nodes'] as Record<string, unknown>[])[0].besu = writerBesu;
    const texts = Object.fromEntries(Object.entries(files).map(([file, value]) => [file, yaml.dump(value)]));
    return loadStack('testnet', rawConfig(config), memoryFiles(texts)).settings.nodes;
  };

  it("carry none when none is set: a node's settings as before", () => {
    for (const node of load({})) expect(node.besu).toBeUndefined();
  });

  it("give every node the stack's, a node's own fields over them", () => {
    const nodes = load(
      { 'lacchain:besu': { revertReason: true, txPoolMaxSize: 1024 } },
      { txPoolMaxSize: 2048, accountPermissioning: true },
    );
    const byName = Object.fromEntries(nodes.map((node) => [node.name, node.besu]));
    expect(byName.writer).toEqual({ revertReason: true, txPoolMaxSize: 2048, accountPermissioning: true });
    expect(byName.validator).toEqual({ revertReason: true, txPoolMaxSize: 1024 });
    // What the node's description (both paths' renderers) writes into its config.toml.
    const writer = parseToml(describeNode(nodes.find((node) => node.name === 'writer')!).files.configToml);
    expect(writer).toMatchObject({ 'tx-pool-max-size': 2048, 'permissions-accounts-contract-enabled': true });
  });

  it('refuse what Besu would not take, naming the setting', () => {
    const refused = () => load({ 'lacchain:besu': { txPoolMaxSize: 0 } }, { revertReason: 'yes' });
    expect(refused).toThrow(SettingsError);
    expect(refused).toThrow(/lacchain:besu\.txPoolMaxSize: given 0; allowed: a whole number from 1 to 1000000/);
    expect(refused).toThrow(/lacchain:nodes\[0\]\.besu\.revertReason: given "yes"; allowed: true or false/);
  });
});

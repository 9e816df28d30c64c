/**
 * The stack that sets every setting, fed to the loader exactly as the engine hands it over (strings, JSON text,
 * secrets marked): it loads, and every setting reaches the model.
 */
import * as yaml from 'js-yaml';
import { loadStack } from '../../core/settings/load';
import { memoryFiles, rawConfig, KEY_ONE } from '../../testing/fixtures';
import { everySettingConfig, everySettingFiles } from '../fixtures/stacks/everySetting';

function loadEverySetting() {
  const files = Object.fromEntries(Object.entries(everySettingFiles()).map(([f, v]) => [f, yaml.dump(v)]));
  return loadStack('testnet', rawConfig(everySettingConfig()), memoryFiles(files));
}

describe('a stack that sets every setting', () => {
  it('is handed over as the engine does: strings, with the secret keys marked', () => {
    const raw = rawConfig(everySettingConfig());
    for (const value of Object.values(raw.values)) expect(typeof value).toBe('string');
    expect(raw.values['lacchain:allowKeyDeletion']).toBe('true');
    expect([...(raw.secretKeys ?? [])].sort()).toEqual([
      'lacchain:nodeKeys',
      'lacchain:rpcPasswords',
      'lacchain:sshPrivateKey',
    ]);
  });

  it('loads, every setting reaching the model', () => {
    const { settings, secrets } = loadEverySetting();
    expect(settings).toMatchObject({
      allowKeyDeletion: true,
      sshAuthentication: 'privateKey',
      kubeContext: 'org-cluster',
      supportContact: 'noc@example.org',
      genesisFile: '/project/genesis/open-protestnet.json',
    });
    const stackRpc = {
      apis: ['ETH', 'NET', 'WEB3', 'ADMIN'],
      exposure: 'internal',
      allowUnsafeApis: true,
      maxActiveConnections: 120,
      proxy: { maxBodySize: '2m', requestsPerSecond: 50, burst: 100 },
      authentication: { method: 'password', users: [{ name: 'reader', permissions: ['eth:*', 'net:*'] }] },
    };
    expect(settings.nodes[0].rpc).toMatchObject({
      ...stackRpc,
      key: 'lacchain:rpc',
      allowConsensusVotesFromOutside: false,
    });
    expect(settings.nodes[1].rpc).toMatchObject({
      ...stackRpc,
      key: 'lacchain:nodes[1].rpc',
      maxActiveConnections: 90,
      allowConsensusVotesFromOutside: true,
    });
    expect(settings.nodes[0]).toMatchObject({
      monitoring: {
        scraper: { namespace: 'monitoring', podLabels: { 'app.kubernetes.io/name': 'prometheus', tier: 'ops' } },
        prometheusOperator: true,
        resourceLabels: { release: 'kube-prometheus-stack' },
      },
      p2pPort: 30303,
      namespace: 'lacchain-org',
      storageClass: 'fast-ssd',
      volumeSize: '500Gi',
      releaseVersion: '24.1.0',
      imageDigest: `sha256:${'0123456789abcdef'.repeat(4)}`,
      proxyImageDigest: `sha256:${'fedcba9876543210'.repeat(4)}`,
    });
    expect(settings.nodes[1]).toMatchObject({
      sshPort: 2222,
      user: 'ubuntu',
      nodeHome: '/srv/lacchain',
      serviceName: 'besu-validator',
      allowBelowMinimumHardware: true,
    });
    expect(settings.companions).toEqual([
      {
        name: 'relay-signer',
        key: 'relaySigner',
        enabled: false,
        version: '1.0.2',
        releaseUrl: 'https://mirror.example.org/lacchain/gas-relay-signer-1.0.2',
        sha256: 'c3'.repeat(32),
        image: 'registry.example.org/lacchain/relay-signer:1.0.2',
        imageDigest: `sha256:${'a7'.repeat(32)}`,
        contract: '0x1111111111111111111111111111111111111111',
      },
      {
        name: 'rotation-validator',
        key: 'rotationValidator',
        enabled: false,
        version: '1.0.1',
        releaseUrl: 'https://mirror.example.org/lacchain/rotation-client-1.0.1',
        sha256: 'd4'.repeat(32),
        image: `registry.example.org/lacchain/rotation:1.0.1@sha256:${'e5'.repeat(32)}`,
        contract: '0x2222222222222222222222222222222222222222',
      },
      {
        name: 'ethstats',
        key: 'ethstats',
        enabled: false,
        image: 'registry.example.org/lacchain/ethstats-cli:2.5.3',
        imageDigest: `sha256:${'f6'.repeat(32)}`,
        serverUrl: 'wss://stats.example.org:3443/api',
      },
    ]);
    expect(settings.nodes.map((n) => n.companions)).toEqual([[], []]);
    expect(secrets.nodeKeys.writer).toBe(KEY_ONE);
    expect(secrets.rpcPasswords).toEqual({ reader: 'correct horse battery staple' });
  });
});

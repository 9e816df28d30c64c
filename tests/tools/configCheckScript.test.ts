/**
 * The config check of a cluster node's pod (scripts/kubernetes/check-config.sh, the pod's first init container,
 * docs/security.md#what-a-pod-reads), run for real on the files of a node's ConfigMap as the program declares it,
 * laid out as the kubelet mounts a ConfigMap (its entries, links into `..data`): the digest the StatefulSet names is
 * the one the script computes from the copy, so the program's own files pass and the pod reads them from its own
 * read-only copy; a ConfigMap whose key check is replaced by `exec "$@"`, whose config.toml points Besu at the raw
 * Secret, or that gained or lost an entry is refused, with one line saying why, and leaves no copy.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { POD_PATHS } from '../../core/catalog/kubernetes';
import { configMapManifest, podConfig, statefulSetManifest } from '../../core/kubernetes/manifests';
import { kubernetesNodeFiles } from '../../core/kubernetes/nodeFiles';
import { describeNode } from '../../core/node/description';
import { readScript } from '../../core/scripts';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { KEY_ONE_PUBLIC, loadTestnet, TEST_GENESIS, testGenesisText, validTestnetConfig } from '../../testing/fixtures';
import { workFolder } from '../../testing/workFolder';

const dir = workFolder('lacchain-config-check-');

/** The testnet writer with its key in the operator's Secret (the node whose pod runs the key check). */
function writer(): KubernetesNodeSettings {
  const config = validTestnetConfig();
  const nodes = config['lacchain:nodes'] as Record<string, unknown>[];
  Object.assign(nodes[0], { keyCustody: 'secret', keySecret: 'vault-writer-key', publicKey: `0x${KEY_ONE_PUBLIC}` });
  const settings = loadTestnet({ ...config, 'lacchain:backupPassword': 'a backup password of the operator' });
  const node = settings.nodes.find((n) => n.target === 'kubernetes') as KubernetesNodeSettings;
  return node;
}

/** What the test reads of the pod's spec. */
interface Container {
  name: string;
  command: string[];
  args?: string[];
  volumeMounts?: { name: string; readOnly?: boolean }[];
}
interface PodSpec {
  initContainers: Container[];
  containers: Container[];
  volumes: { name: string }[];
}

const node = writer();
const description = describeNode(node);
/** The node's ConfigMap (its genesis the test genesis) and StatefulSet, as the component declares them. */
function declared() {
  const nodeFiles = kubernetesNodeFiles(description, testGenesisText());
  const config = podConfig(node, nodeFiles, TEST_GENESIS.sha256);
  return {
    configMap: configMapManifest(node, nodeFiles, config),
    pod: statefulSetManifest(description, 'checksum', config).spec.template.spec as unknown as PodSpec,
    config,
  };
}

/** Lays `data` out as the kubelet mounts a ConfigMap: a timestamped folder, `..data` linking to it, an entry each. */
function mountConfigMap(data: Record<string, unknown>): string {
  const source = fs.mkdtempSync(path.join(dir, 'source-'));
  const payload = path.join(source, '..2026_12_07_03_00_00.000000001');
  fs.mkdirSync(payload);
  for (const [entry, text] of Object.entries(data)) fs.writeFileSync(path.join(payload, entry), String(text));
  fs.symlinkSync(path.basename(payload), path.join(source, '..data'));
  for (const entry of Object.keys(data)) fs.symlinkSync(path.join('..data', entry), path.join(source, entry));
  return source;
}

/** Runs the pod's first init container's command, as the StatefulSet gives it, on `source` into a new copy. */
function runConfigCheck(source: string) {
  const { pod, config } = declared();
  const check = pod.initContainers[0];
  expect(check.args).toEqual([POD_PATHS.configSourceDir, POD_PATHS.configDir, config.digest]);
  const copy = fs.mkdtempSync(path.join(dir, 'copy-'));
  const result = spawnSync(check.command[0], [...check.command.slice(1), source, copy, config.digest], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim(), copy };
}

describe('check-config.sh (the config check of a cluster node’s pod)', () => {
  it("is the StatefulSet's own command text, never a file of the ConfigMap, and every other container reads its copy read-only", () => {
    const { pod, configMap, config } = declared();
    const check = pod.initContainers[0];
    expect(check.name).toBe('writer-config-check');
    expect(check.command).toEqual(['/bin/sh', '-c', readScript('kubernetes/check-config.sh'), 'check-config']);
    expect(configMap).toMatchObject({ immutable: true, metadata: { name: config.configMap } });
    expect(config.configMap).toBe(`besu-node-writer-config-${config.digest.slice(0, 10)}`);
    expect(pod.volumes.filter((v) => v.name.startsWith('config'))).toEqual([
      { name: 'config-source', configMap: { name: config.configMap, defaultMode: 0o444 } },
      { name: 'config', emptyDir: { sizeLimit: '64Mi' } },
    ]);
    const mounts = [...pod.initContainers, ...pod.containers].flatMap((c) =>
      (c.volumeMounts ?? [])
        .filter((m) => m.name.startsWith('config'))
        .map((m) => `${c.name} ${m.name} ${m.readOnly ? 'ro' : 'rw'}`),
    );
    expect(mounts.filter((m) => m.includes('config-source'))).toEqual(['writer-config-check config-source ro']);
    expect(mounts.filter((m) => m.endsWith(' rw'))).toEqual(['writer-config-check config rw']);
  });

  it("passes the program's own files, copied read-only into the pod's folder, with one line naming the digest", () => {
    const { configMap, config } = declared();
    const result = runConfigCheck(mountConfigMap(configMap.data));
    expect([result.code, result.stdout, result.stderr]).toEqual([
      0,
      `lacchain: the pod's config is the one its StatefulSet names (digest ${config.digest})`,
      '',
    ]);
    expect(fs.readdirSync(result.copy).sort()).toEqual(Object.keys(configMap.data).sort());
    for (const [entry, text] of Object.entries(configMap.data)) {
      expect(fs.readFileSync(path.join(result.copy, entry), 'utf8')).toBe(String(text));
      expect(fs.statSync(path.join(result.copy, entry)).mode & 0o777).toBe(0o444);
    }
  });

  const tampered: [string, (data: Record<string, string>) => void][] = [
    ['the key check replaced by exec "$@"', (data) => void (data['check-node-key.sh'] = '#!/bin/sh\nexec "$@"\n')],
    [
      "config.toml's node-private-key-file pointed at the raw Secret",
      (data) =>
        void (data['config.toml'] = data['config.toml'].replace('"/etc/besu/key/key"', '"/etc/besu/secret-key/key"')),
    ],
    ['the start step replaced', (data) => void (data['start-node.sh'] = '#!/bin/sh\nexec "$@"\n')],
    ['an entry added', (data) => void (data['extra.sh'] = 'echo hi\n')],
    ['an entry removed', (data) => void delete data['start-companion.sh']],
  ];
  it.each(tampered)('refuses a ConfigMap with %s, in one line, and leaves no copy', (_what, tamper) => {
    const { configMap, config } = declared();
    const data = { ...configMap.data } as Record<string, string>;
    expect(data['config.toml']).toContain('node-private-key-file = "/etc/besu/key/key"');
    tamper(data);
    const result = runConfigCheck(mountConfigMap(data));
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^lacchain: the node's ConfigMap holds files of digest [0-9a-f]{64}, not the ${config.digest} its StatefulSet names \\(edited after pulumi up\\?\\): the node does not start \\(docs/security.md#what-a-pod-reads\\)$`,
        ),
      ),
    ]);
    expect(fs.readdirSync(result.copy)).toEqual([]);
  });
});

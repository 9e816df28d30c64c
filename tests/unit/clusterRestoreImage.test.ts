/**
 * A cluster restore or rollback switches Besu, which receives the node key, to the backup's release: by the registry
 * digest the stack pins for that release (the values file's deploy.imageDigest beside its releaseVersion), never by a
 * tag alone on a production network, where it is refused before the node is stopped. The command is built purely
 * (releaseImageChange) and issued by the cluster's backup client (clusterBackups); kubectl is a recorder here.
 */
import * as yaml from 'js-yaml';
import { clusterBackups } from '../../cli/operations/clusterBackups';
import { ToolFailure } from '../../cli/cli';
import { runClient } from '../../cli/operations/process';
import { NETWORKS } from '../../core/catalog/networks';
import { Backup, releaseImageChange } from '../../core/operations/backups';
import { loadStack } from '../../core/settings/load';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { memoryFiles, rawConfig, validTestnetConfig, validWriterValues } from '../../testing/fixtures';

jest.mock('../../cli/operations/process', () => ({ runClient: jest.fn() }));
const kubectl = runClient as jest.MockedFunction<typeof runClient>;

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const IN_USE = '25.5.0';
const OLDER = '24.1.0';
const ENODE = `enode://${'1'.repeat(128)}@190.113.0.10:60606`;

/** The stack's writer on the cluster, its values file's deploy section changed by `deploy`, on `network`'s rules. */
function writer(deploy: Record<string, unknown>, network: keyof typeof NETWORKS): KubernetesNodeSettings {
  const values = validWriterValues() as { deploy: Record<string, unknown> };
  values.deploy = { ...values.deploy, volumeSnapshotClass: 'csi-snapshots', ...deploy };
  const { settings } = loadStack(
    'testnet',
    rawConfig(validTestnetConfig(), 'Pulumi.testnet.yaml'),
    memoryFiles({ 'values/writer.yml': yaml.dump(values) }),
  );
  const node = settings.nodes.find((n) => n.target === 'kubernetes') as KubernetesNodeSettings;
  return { ...node, network: NETWORKS[network] };
}

describe("the image a cluster restore sets for the backup's release (releaseImageChange)", () => {
  it('is the release by the digest the values file pins for it, on every network', () => {
    for (const network of ['mainnet-omega', 'open-protestnet'] as const) {
      const change = releaseImageChange(writer({ releaseVersion: OLDER, imageDigest: DIGEST }, network), OLDER);
      expect(change).toEqual({
        kubectl: ['set', 'image', 'statefulset/besu-node-writer', `writer-besu=hyperledger/besu:${OLDER}@${DIGEST}`],
        image: `hyperledger/besu:${OLDER}@${DIGEST}`,
        pinned: true,
        line: `the node's StatefulSet now runs Besu ${OLDER} from hyperledger/besu:${OLDER}@${DIGEST}, the digest pinned in values/writer.yml`,
      });
    }
  });

  it.each([
    [
      "the values file pins another release's digest (a rollback before the file names the older release)",
      { releaseVersion: IN_USE, imageDigest: DIGEST },
      `values/writer.yml pins the digest of Besu ${IN_USE}, not ${OLDER}`,
    ],
    [
      'the values file names the release but pins no digest',
      { releaseVersion: OLDER },
      `values/writer.yml names Besu ${OLDER} but no deploy.imageDigest`,
    ],
  ])('is refused on mainnet when %s, saying which settings to add', (_, deploy, why) => {
    const change = releaseImageChange(writer(deploy, 'mainnet-omega'), OLDER);
    expect(change).toEqual({
      refused: `node writer: no digest of Besu ${OLDER}'s image is known (${why}), and on mainnet-omega Besu, which receives the node key, runs only from an image pinned by its digest: set in values/writer.yml, under deploy: releaseVersion: ${OLDER} and imageDigest: sha256:<the registry digest of hyperledger/besu:${OLDER}> (docs/kubernetes.md, "Pinning images"), then run this again; nothing was changed`,
    });
  });

  it('is the tag on a test network, with a warning naming the settings to add', () => {
    const change = releaseImageChange(
      writer({ releaseVersion: IN_USE, imageDigest: DIGEST }, 'open-protestnet'),
      OLDER,
    );
    expect(change).toMatchObject({
      kubectl: ['set', 'image', 'statefulset/besu-node-writer', `writer-besu=hyperledger/besu:${OLDER}`],
      pinned: false,
    });
    expect('line' in change && change.line).toBe(
      `warning: the node's StatefulSet now runs Besu ${OLDER} from hyperledger/besu:${OLDER}, a tag that can be moved (values/writer.yml pins the digest of Besu ${IN_USE}, not ${OLDER}): before the next pulumi up set in values/writer.yml, under deploy: releaseVersion: ${OLDER} and imageDigest: sha256:<the registry digest of hyperledger/besu:${OLDER}> (docs/kubernetes.md, "Pinning images")`,
    );
  });
});

describe("a cluster restore onto the backup's release, as kubectl is asked", () => {
  const backup: Backup = { id: 'besu-node-writer-backup-1', time: '', node: 'writer', release: OLDER, reason: 'x' };
  /** The node's other operations: it runs IN_USE until the image is set, then answers its recorded enode. */
  const access = () => {
    let release = IN_USE;
    return {
      withContext: (args: string[]) => args,
      head: async () => 10,
      enode: async () => ENODE,
      recordedEnode: async () => ENODE,
      release: async () => release,
      switchTo: (r: string) => (release = r),
    };
  };

  beforeEach(() => {
    kubectl.mockReset();
    kubectl.mockResolvedValue({ code: 0, stdout: '', stderr: '' });
  });

  it('sets Besu by the digest the stack pins for that release', async () => {
    const settings = writer({ releaseVersion: OLDER, imageDigest: DIGEST }, 'mainnet-omega');
    const backups = clusterBackups(settings, access());
    const lines: string[] = [];
    await backups.prepareRelease(OLDER);
    await backups.restore(backup, undefined, (line) => lines.push(line));
    const setImage = kubectl.mock.calls.map(([, args]) => args).filter((args) => args[0] === 'set');
    expect(setImage).toEqual([
      [
        'set',
        'image',
        'statefulset/besu-node-writer',
        `writer-besu=hyperledger/besu:${OLDER}@${DIGEST}`,
        '-n',
        settings.namespace,
      ],
    ]);
    expect(setImage[0][3]).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(lines).toContain(
      `the node's StatefulSet now runs Besu ${OLDER} from hyperledger/besu:${OLDER}@${DIGEST}, the digest pinned in values/writer.yml`,
    );
  });

  it('refuses on mainnet without a digest for that release before anything is stopped', async () => {
    const backups = clusterBackups(writer({ releaseVersion: IN_USE, imageDigest: DIGEST }, 'mainnet-omega'), access());
    await expect(backups.prepareRelease(OLDER)).rejects.toThrow(ToolFailure);
    await expect(backups.prepareRelease(OLDER)).rejects.toThrow(/imageDigest: sha256:<the registry digest/);
    expect(kubectl).not.toHaveBeenCalled();
  });

  it('lets a backup of the release in use be restored whatever the values file pins', async () => {
    const node = access();
    node.switchTo(OLDER);
    const backups = clusterBackups(writer({ releaseVersion: IN_USE }, 'mainnet-omega'), node);
    await expect(backups.prepareRelease(OLDER)).resolves.toBeUndefined();
    await backups.restore(backup, undefined, () => undefined);
    expect(kubectl.mock.calls.map(([, args]) => args[0])).not.toContain('set');
  });
});

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Key custody (`lacchain:nodes[i].keyCustody`, docs/security.md#key-custody) under the recording engine: what each
 * custody declares, what it never declares (the key, anywhere, when the stack does not hold it), the settings it
 * refuses, and the policy on it.
 */
import * as yaml from 'js-yaml';
import { NODE_PUBLIC_KEY_LINE } from '../../core/catalog/keyCustody';
import { KEY_SECRET_ANNOTATION } from '../../core/catalog/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { identityOfPublicKey, parsePublicKey, publicKeyHex } from '../../core/identity/nodeKey';
import { loadStack } from '../../core/settings/load';
import { Problem, SettingsError } from '../../core/settings/problems';
import { contextFromSettings } from '../../policy/expectations';
import type { PolicyResource } from '../../policy/inspect';
import { policyResources } from '../../policy/offline';
import { checkResources } from '../../policy/rules';
import { redact, settle, startRecording, unwrapSecrets } from '../../tools/recording/engine';
import { PROGRAM_TYPES } from '../../testing/pulumi';
import { declareProgram, Declared } from '../../testing/program';
import {
  KEY_ONE,
  KEY_ONE_ADDRESS,
  KEY_ONE_PUBLIC,
  memoryFiles,
  rawConfig,
  sshValidatorEntry,
  sshValidatorStack,
  TEST_COMPANIONS,
  validWriterValues,
  TEST_GENESIS,
} from '../../testing/fixtures';

/** The declared resources as the rules see them (as the offline plan writes them). */
const asPolicy = (declared: Declared): PolicyResource[] =>
  policyResources(
    declared.resources.map((r) => ({ type: r.type, name: r.name, options: r.options, inputs: redact(r.inputs) })),
  );

/** The public key a machine reports in these tests (the one of KEY_ONE, which the stack never holds here). */
const MACHINE_PUBLIC_KEY = `0x${KEY_ONE_PUBLIC.replace(/^0x/, '')}`;
const BACKUP_PASSWORD = 'a backup password of the operator';
/** The public key of another key than KEY_ONE, for a second node. */
const SECOND_PUBLIC_KEY = `0x${publicKeyHex(`0x${'0'.repeat(63)}2`).replace(/^0x/, '')}`;

/** The recording engine, giving a node-key step the output a machine holding KEY_ONE prints. */
const recorded = startRecording({
  project: 'lacchain-besu-node',
  stack: 'testnet',
  preview: false,
  knownTypes: PROGRAM_TYPES,
  outputsFor: (resource) =>
    resource.type === 'command:remote:Command' && resource.name.endsWith('-node-key')
      ? { stdout: `node-key: wrote /opt/besu/data/key\n${NODE_PUBLIC_KEY_LINE} ${MACHINE_PUBLIC_KEY}\n`, stderr: '' }
      : undefined,
});

const machineStack = (entry: Record<string, unknown> = {}) => {
  const config = sshValidatorStack({ ...sshValidatorEntry(), keyCustody: 'machine', ...entry });
  delete config['lacchain:nodeKeys'];
  return config;
};

const WRITER_VALUES = { 'values/writer.yml': yaml.dump(validWriterValues()) };
const secretStack = (entry: Record<string, unknown> = {}) => ({
  'lacchain:network': 'open-protestnet',
  'lacchain:nodes': [
    {
      name: 'writer',
      typenode: 'writer',
      target: 'kubernetes',
      keyCustody: 'secret',
      keySecret: 'vault-writer-key',
      keySecretEntry: 'nodekey',
      publicKey: MACHINE_PUBLIC_KEY,
      ...entry,
    },
  ],
  'lacchain:companions': structuredClone(TEST_COMPANIONS),
  'lacchain:backupPassword': BACKUP_PASSWORD,
});

/** Everything the declaration recorded, secrets unwrapped, and its outputs, as one text to search. */
async function everything(declared: Declared): Promise<string> {
  const outputs: Record<string, unknown> = {};
  for (const [name, node] of Object.entries(declared.outputs.nodes)) {
    outputs[name] = Object.fromEntries(
      await Promise.all(
        Object.entries(node).map(async ([key, value]) => [key, (await settle(value as any)).value] as const),
      ),
    );
  }
  return JSON.stringify({ resources: unwrapSecrets(declared.resources), outputs });
}

function problemsOf(config: Record<string, unknown>, files: Record<string, string> = {}): Problem[] {
  try {
    loadStack('testnet', rawConfig(config, 'Pulumi.testnet.yaml'), memoryFiles(files));
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
  throw new Error('expected the settings to be refused');
}

describe('keyCustody machine (SSH): the key is made on the machine and only its public key comes back', () => {
  let declared: Declared;
  const command = (step: string) =>
    unwrapSecrets(declared.resources.find((r) => r.name === `validator-${step}`)!.inputs) as Record<string, any>;
  beforeAll(async () => {
    declared = await declareProgram(recorded, 'testnet', machineStack(), {});
  });

  it('holds no private key: no random key material, no NODE_KEY sent, the key nowhere in what is recorded', async () => {
    expect(declared.resources.filter((r) => r.type.startsWith('random:'))).toEqual([]);
    expect(command('node-key').stdin).not.toMatch(/^(export )?NODE_KEY=/m);
    expect(command('node-key').stdin).toContain("export KEY_CUSTODY='machine'");
    // The backup password is derived on the machine: none is sent.
    expect(command('node-key').stdin).not.toMatch(/^(export )?BACKUP_PASSWORD=/m);
    const text = await everything(declared);
    expect(text).not.toContain(KEY_ONE.slice(2));
  });

  it('exports the identity the machine reports, and the start step checks the node answers with it', async () => {
    const outputs = declared.outputs.nodes.validator;
    const expected = identityOfPublicKey(MACHINE_PUBLIC_KEY, '190.51.100.7', 60606);
    expect((await settle(outputs.publicKey)).value).toBe(expected.publicKey);
    expect((await settle(outputs.enode)).value).toBe(expected.enode);
    expect((await settle(outputs.address)).value).toBe(KEY_ONE_ADDRESS);
    expect((await settle(outputs.enode)).secret).toBe(false);
    expect(command('start').stdin).toContain(`export EXPECTED_ENODE='${expected.enode}'`);
    // The node-key step writes the identity files from the key it holds; node-files gets no identity to write.
    expect(command('node-files').stdin).not.toContain('NODE_ENODE=');
    expect(command('node-key').stdin).toContain("export P2P_ENDPOINT='190.51.100.7:60606'");
  });

  it('sends the pinned public key, when the settings give one, and exports it before the machine answers', async () => {
    const pinned = await declareProgram(recorded, 'testnet', machineStack({ publicKey: MACHINE_PUBLIC_KEY }), {});
    const stdin = (
      unwrapSecrets(pinned.resources.find((r) => r.name === 'validator-node-key')!.inputs) as Record<string, any>
    ).stdin;
    expect(stdin).toContain(`export EXPECTED_PUBLIC_KEY='${MACHINE_PUBLIC_KEY}'`);
    expect((await settle(pinned.outputs.nodes.validator.address)).value).toBe(KEY_ONE_ADDRESS);
  });

  it('sends the operator backup password when set (the machine derives one only without it)', async () => {
    const config = { ...machineStack(), 'lacchain:backupPassword': BACKUP_PASSWORD };
    const withPassword = await declareProgram(recorded, 'testnet', config, {});
    const stdin = (
      unwrapSecrets(withPassword.resources.find((r) => r.name === 'validator-node-key')!.inputs) as Record<string, any>
    ).stdin;
    // A plain shell variable of the step, never exported (core/remote/secretParameters.ts).
    expect(stdin).toContain(`\nBACKUP_PASSWORD='${BACKUP_PASSWORD}'\n`);
    expect(stdin).not.toContain('export BACKUP_PASSWORD=');
  });
});

/**
 * The key check's arguments: Besu, the Secret's key, the node's publicKey, the Secret and entry, the checked copy,
 * the pod's config.toml (whose node-private-key-file must be the checked copy).
 */
const CHECK_ARGUMENTS = [
  '/opt/besu/bin/besu',
  '/etc/besu/secret-key/key',
  MACHINE_PUBLIC_KEY,
  'vault-writer-key',
  'nodekey',
  '/etc/besu/key/key',
  '/etc/besu/config/config.toml',
];

describe("keyCustody secret (Kubernetes): the operator's Secret is mounted, never made or read", () => {
  let declared: Declared;
  beforeAll(async () => {
    declared = await declareProgram(recorded, 'testnet', secretStack(), WRITER_VALUES);
  });
  const statefulSet = () =>
    unwrapSecrets(declared.resources.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet')!.inputs) as any;

  it('declares no key Secret and no key material; the pod mounts the named entry as the key file', () => {
    const secrets = declared.resources.filter((r) => r.type === 'kubernetes:core/v1:Secret');
    expect(secrets.map((s) => (s.inputs as any).metadata.name)).not.toContain('besu-node-writer-key');
    expect(secrets.map((s) => (s.inputs as any).metadata.name)).not.toContain('vault-writer-key');
    expect(declared.resources.filter((r) => r.type.startsWith('random:'))).toEqual([]);
    const set = statefulSet();
    expect(set.spec.template.spec.volumes.find((v: any) => v.name === 'key')).toEqual({
      name: 'key',
      secret: { secretName: 'vault-writer-key', defaultMode: 0o440, items: [{ key: 'nodekey', path: 'key' }] },
    });
    expect(set.metadata.annotations[KEY_SECRET_ANNOTATION]).toBe('vault-writer-key');
    // Only the key check reads the Secret: no container takes the key from it in its environment.
    const variables = set.spec.template.spec.containers.flatMap((c: any) => c.env ?? []);
    expect(variables.filter((v: any) => v.valueFrom?.secretKeyRef)).toEqual([]);
    const pod = set.spec.template.spec;
    const mountsOf = (volume: string) =>
      [...pod.initContainers, ...pod.containers].flatMap((c: any) =>
        (c.volumeMounts ?? []).filter((m: any) => m.name === volume).map((m: any) => [c.name, m.mountPath]),
      );
    // Mounted in the key check alone: not in Besu's container (docs/security.md#what-a-pod-reads).
    expect(mountsOf('key')).toEqual([['writer-key-check', '/etc/besu/secret-key']]);
  });

  it('gives every container the checked copy of the key, a memory volume only the check writes, where they read the key', () => {
    const pod = statefulSet().spec.template.spec;
    expect(pod.volumes.find((v: any) => v.name === 'checked-key')).toEqual({
      name: 'checked-key',
      emptyDir: { medium: 'Memory', sizeLimit: '1Mi' },
    });
    const mounts = [...pod.initContainers, ...pod.containers].flatMap((c: any) =>
      (c.volumeMounts ?? [])
        .filter((m: any) => m.name === 'checked-key')
        .map((m: any) => [c.name, m.mountPath, m.readOnly ?? false]),
    );
    expect(mounts).toEqual([
      ['writer-key-check', '/etc/besu/key', false],
      ['writer-besu', '/etc/besu/key', true],
      ['writer-relay-signer', '/etc/besu/key', true],
    ]);
    // The relay signer reads the checked copy into its environment (start-companion.sh), refusing without one.
    const signer = pod.containers.find((c: any) => c.name === 'writer-relay-signer');
    expect(signer).toMatchObject({
      command: ['/bin/sh', '/etc/besu/config/start-companion.sh'],
      args: ['/opt/lacchain/gas-relay-signer/gas-relay-signer', 'WRITER_KEY', '/etc/besu/key/key'],
    });
    // No container's log tail goes to the pod's status, but the key check's own lines.
    const fallback = [...pod.initContainers, ...pod.containers]
      .filter((c: any) => c.terminationMessagePolicy === 'FallbackToLogsOnError')
      .map((c: any) => c.name);
    expect(fallback).toEqual(['writer-key-check']);
  });

  it('starts Besu on the checked copy: the start step, which refuses a missing key, never the Secret', () => {
    const pod = statefulSet().spec.template.spec;
    const besu = pod.containers.find((c: any) => c.name === 'writer-besu');
    expect(besu).toMatchObject({
      command: ['/bin/sh', '/etc/besu/config/start-node.sh'],
      args: ['/opt/besu/bin/besu', '/etc/besu/key/key', '/etc/besu/config/config.toml'],
    });
    expect(besu.terminationMessagePolicy).toBeUndefined();
  });

  it('exports the identity of the given public key, and keeps the backup password the operator set', async () => {
    const outputs = declared.outputs.nodes.writer;
    expect((await settle(outputs.enode)).value).toBe(`enode://${KEY_ONE_PUBLIC.replace(/^0x/, '')}@190.113.0.10:60606`);
    expect((await settle(outputs.address)).value).toBe(KEY_ONE_ADDRESS);
    const backup = declared.resources.find((r) => (r.inputs as any).metadata?.name === 'besu-node-writer-backup');
    expect(JSON.stringify(unwrapSecrets(backup!.inputs))).toContain(BACKUP_PASSWORD);
  });

  it("checks the mounted key before Besu starts: an init container on Besu's pinned image compares it with publicKey", () => {
    const pod = statefulSet().spec.template.spec;
    const besu = pod.containers.find((c: any) => c.name === 'writer-besu');
    const check = pod.initContainers.find((c: any) => c.name === 'writer-key-check');
    expect(check).toMatchObject({
      image: besu.image,
      command: ['/bin/sh', '/etc/besu/config/check-node-key.sh'],
      args: CHECK_ARGUMENTS,
      terminationMessagePolicy: 'FallbackToLogsOnError',
    });
    expect(check.volumeMounts.map((m: any) => [m.name, m.readOnly ?? false])).toEqual([
      ['config', true],
      ['key', true],
      ['checked-key', false],
      ['besu-tmp', false],
    ]);
    // Before Besu, after the config check (its script is the checked copy's) and the release bump's backup.
    expect(pod.initContainers.indexOf(check)).toBe(2);
    const configMap = unwrapSecrets(
      declared.resources.find((r) => r.type === 'kubernetes:core/v1:ConfigMap' && r.name.endsWith('writer-config'))!
        .inputs,
    ) as any;
    expect(configMap.data['check-node-key.sh']).toContain('besu_binary" --data-path');
    expect(configMap.data['start-companion.sh']).toContain('export "$2=$key"');
  });

  it('has no key check for a key the stack holds (its enode is computed from the key itself)', async () => {
    const stackCustody = await declareProgram(
      recorded,
      'testnet',
      {
        ...secretStack({
          keyCustody: undefined,
          keySecret: undefined,
          keySecretEntry: undefined,
          publicKey: undefined,
        }),
        'lacchain:nodeKeys': { writer: KEY_ONE },
      },
      WRITER_VALUES,
    );
    const set = unwrapSecrets(
      stackCustody.resources.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet')!.inputs,
    ) as any;
    expect(set.spec.template.spec.initContainers.map((c: any) => c.name)).not.toContain('writer-key-check');
  });

  it('passes the policy; one that mounts another Secret, or declares the operator Secret, fails it', () => {
    // The program's genesis in these tests is the project's test genesis.
    const settings = contextFromSettings(declared.loaded.settings);
    const context = { ...settings, network: { ...settings.network!, genesis: TEST_GENESIS } };
    const resources = asPolicy(declared);
    expect(checkResources(resources, context).filter((v) => !v.advisory)).toEqual([]);
    const set = resources.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet')!;
    const tampered = structuredClone(set);
    (tampered.inputs as any).spec.template.spec.volumes.find((v: any) => v.name === 'key').secret.secretName = 'other';
    const declaredSecret = {
      ...structuredClone(set),
      type: 'kubernetes:core/v1:Secret',
      inputs: { metadata: { name: 'vault-writer-key', labels: (set.inputs as any).metadata.labels } },
    };
    const found = checkResources([tampered, declaredSecret], context).filter(
      (v) => v.policy === 'key-secret-referenced',
    );
    expect(found.map((v) => v.message)).toEqual([
      expect.stringContaining('its key volume mounts Secret "other", not vault-writer-key'),
      expect.stringContaining('the program declares Secret vault-writer-key'),
    ]);
  });
});

describe('the settings of a custody are checked against the node', () => {
  const keyOf = (problems: Problem[]) => problems.map((p) => [p.key, p.allowed]);

  it('refuses machine custody on a Kubernetes node, and secret custody on an SSH node', () => {
    expect(keyOf(problemsOf(secretStack({ keyCustody: 'machine' }), WRITER_VALUES))).toContainEqual([
      'lacchain:nodes[0].keyCustody',
      expect.stringContaining('stack or secret for a kubernetes node'),
    ]);
    expect(keyOf(problemsOf(machineStack({ keyCustody: 'secret' })))).toEqual(
      expect.arrayContaining([
        ['lacchain:nodes[0].keyCustody', expect.stringContaining('stack or machine for a ssh node')],
      ]),
    );
  });

  it('refuses secret custody without its Secret or public key, and a public key that is not a point', () => {
    const missing = problemsOf(secretStack({ keySecret: undefined, publicKey: undefined }), WRITER_VALUES);
    expect(missing.map((p) => p.key).sort()).toEqual(['lacchain:nodes[0].keySecret', 'lacchain:nodes[0].publicKey']);
    const offCurve = `0x${'1'.repeat(128)}`;
    expect(parsePublicKey(offCurve)).toBeUndefined();
    expect(problemsOf(secretStack({ publicKey: offCurve }), WRITER_VALUES).map((p) => p.key)).toEqual([
      'lacchain:nodes[0].publicKey',
    ]);
    expect(problemsOf(secretStack({ keySecret: 'Not_A_Name' }), WRITER_VALUES).map((p) => p.key)).toEqual([
      'lacchain:nodes[0].keySecret',
    ]);
  });

  it('refuses a secret-custody node without lacchain:backupPassword (no password can be derived)', () => {
    const config = secretStack();
    delete (config as Record<string, unknown>)['lacchain:backupPassword'];
    expect(keyOf(problemsOf(config, WRITER_VALUES))).toEqual([
      ['lacchain:backupPassword', expect.stringContaining('keyCustody secret')],
    ]);
  });

  it('refuses an imported key for a node whose key is not the stack', () => {
    const config = { ...machineStack(), 'lacchain:nodeKeys': { validator: KEY_ONE } };
    expect(keyOf(problemsOf(config))).toEqual([
      ['lacchain:nodeKeys.validator', expect.stringContaining('no imported key for a node with keyCustody machine')],
    ]);
  });

  it('refuses the Secret fields with another custody', () => {
    const config = sshValidatorStack({ ...sshValidatorEntry(), keySecret: 'x', publicKey: MACHINE_PUBLIC_KEY });
    expect(problemsOf(config).map((p) => p.key)).toEqual([
      'lacchain:nodes[0].keySecret',
      'lacchain:nodes[0].publicKey',
    ]);
  });

  describe('two nodes never run under one key', () => {
    /** The stack's writer beside a second cluster node `other` (its own values file, address and worker). */
    const twoNodes = (other: Record<string, unknown>) => {
      const config = secretStack();
      config['lacchain:nodes'].push({ name: 'other', typenode: 'writer', target: 'kubernetes', ...other } as any);
      const otherValues = validWriterValues() as any;
      otherValues.deploy.p2p.host = '190.113.0.11';
      otherValues.deploy.publicIP = '190.113.0.11';
      return problemsOf(
        {
          ...config,
          'lacchain:nodes': config['lacchain:nodes'].map((n: any) => ({ ...n, values: `values/${n.name}.yml` })),
        },
        { 'values/writer.yml': WRITER_VALUES['values/writer.yml'], 'values/other.yml': yaml.dump(otherValues) },
      );
    };

    it('refuses a second node reading the same entry of the same Secret', () => {
      expect(
        keyOf(
          twoNodes({
            keyCustody: 'secret',
            keySecret: 'vault-writer-key',
            keySecretEntry: 'nodekey',
            publicKey: SECOND_PUBLIC_KEY,
          }),
        ),
      ).toEqual([
        [
          'lacchain:nodes[1].keySecretEntry',
          expect.stringContaining('node writer reads entry nodekey of Secret vault-writer-key in namespace'),
        ],
      ]);
    });

    it('refuses a second node giving the same publicKey', () => {
      expect(
        keyOf(twoNodes({ keyCustody: 'secret', keySecret: 'vault-other-key', publicKey: MACHINE_PUBLIC_KEY })),
      ).toEqual([['lacchain:nodes[1].publicKey', expect.stringContaining('node writer gives the same one')]]);
    });

    it("refuses a keySecret that is another node's own key Secret (the program's, holding that node's key)", () => {
      const config = secretStack({ keySecret: 'besu-node-other-key' });
      config['lacchain:nodes'].push({ name: 'other', typenode: 'writer', target: 'kubernetes' } as any);
      const otherValues = validWriterValues() as any;
      otherValues.deploy.p2p.host = '190.113.0.11';
      otherValues.deploy.publicIP = '190.113.0.11';
      const problems = problemsOf(
        {
          ...config,
          'lacchain:nodes': config['lacchain:nodes'].map((n: any) => ({ ...n, values: `values/${n.name}.yml` })),
        },
        { 'values/writer.yml': WRITER_VALUES['values/writer.yml'], 'values/other.yml': yaml.dump(otherValues) },
      );
      expect(keyOf(problems)).toEqual([
        ['lacchain:nodes[0].keySecret', expect.stringContaining('the key Secret the program keeps for node other')],
      ]);
    });

    it('takes two nodes with their own Secrets and keys', () => {
      expect(() =>
        twoNodes({ keyCustody: 'secret', keySecret: 'vault-other-key', publicKey: SECOND_PUBLIC_KEY }),
      ).toThrow('expected the settings to be refused');
    });
  });

  it('keeps stack custody as the default: nothing changes for a stack that names none', () => {
    const { settings } = loadStack('testnet', rawConfig(sshValidatorStack(), 'Pulumi.testnet.yaml'), memoryFiles({}));
    expect(settings.nodes[0].keyCustody).toBe('stack');
  });
});

describe('the mainnet advisory on a validator whose key is in the state', () => {
  it('tells what machine custody would give, without failing', async () => {
    // A validator's settings, on the mainnet network (the policy reads the network from the context).
    const { settings } = loadStack('testnet', rawConfig(sshValidatorStack(), 'Pulumi.testnet.yaml'), memoryFiles({}));
    const context = { ...contextFromSettings(settings), network: NETWORKS['mainnet-omega'] };
    const keyStep: PolicyResource = {
      type: 'command:remote:Command',
      name: 'validator-node-key',
      inputs: {},
      options: { protect: false, parent: 'validator' },
    };
    const found = checkResources([keyStep], context).filter((v) => v.policy === 'validator-key-custody');
    expect(found).toEqual([
      expect.objectContaining({
        advisory: true,
        message: expect.stringContaining('keyCustody machine would keep it on its machine only'),
      }),
    ]);
    const machine = {
      ...contextFromSettings({
        ...settings,
        nodes: settings.nodes.map((n) => ({ ...n, keyCustody: 'machine' as const })),
      }),
      network: NETWORKS['mainnet-omega'],
    };
    expect(checkResources([keyStep], machine).filter((v) => v.policy === 'validator-key-custody')).toEqual([]);
  });
});

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The policy rules on the offline plan: `npm run plan` checks what it recorded with the pack's rules, writes
 * DIR/policy.json, prints each violation and exits 1 — after writing everything else, its output unchanged.
 */
import { REMOTE_STEP_NAMES } from '../../core/remote/steps';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { networkOfStack } from '../../core/catalog/networks';
import { loadStack } from '../../core/settings/load';
import { readFileFromDisk, readStackConfigFile } from '../../core/settings/settingsFiles';
import { planGenesisPlaceholder } from '../../policy/inspect';
import { checkPlan, plannedStepInputs } from '../../policy/offline';
import { RULES } from '../../policy/rules';
import {
  sshValidatorEntry,
  TEST_BACKUP_IMAGE_DIGESTS,
  TEST_COMPANIONS,
  TEST_KEY_IMAGE_DIGESTS,
} from '../../testing/fixtures';
import { completedExample, exampleAsGiven, pinnedExample, writeProject } from '../../testing/examples';
import { valuesFor } from '../../testing/values';
import { planWorkspace } from '../../testing/planWorkspace';

const { work, plan, project } = planWorkspace('lacchain-policy-plan-');

const read = (out: string, file: string) => JSON.parse(fs.readFileSync(path.join(out, file), 'utf8'));

/** The advisory a mainnet validator with keyCustody stack gets (policy/rules/keyCustody.ts). */
const ADVICE_TO_VALIDATOR =
  /^policy warning: \[validator-key-custody, advisory\] Secret validator-key: validator validator keeps the key that signs blocks in the stack's state \(keyCustody stack\).* keyCustody secret would keep it in the operator's Kubernetes Secret/;

describe.each(['testnet', 'mainnet'] as const)('the example stack %s', (stack) => {
  it('complies with its images pinned as its comments ask: exit 0, nothing on standard error, no violation', () => {
    const config = pinnedExample(stack, fs.mkdtempSync(path.join(work, 'example-')));
    const result = plan(['--stack', stack, '--config', config]);
    // Only the advice to a mainnet validator whose key is in the state (keyCustody stack, the default), a warning.
    const advice = stack === 'mainnet' ? [ADVICE_TO_VALIDATOR] : [];
    expect(result.code).toBe(0);
    expect(result.stderr.split('\n').filter(Boolean)).toEqual(advice.map((a) => expect.stringMatching(a)));
    expect(read(result.out, 'policy.json')).toEqual({
      policyPack: 'lacchain-node',
      policies: RULES.map((r) => r.name),
      violations: advice.map(() => expect.objectContaining({ policy: 'validator-key-custody', advisory: true })),
    });
  });
});

describe('the example stacks as given, their images by tag (no digest: the operator pins the ones they checked)', () => {
  /** The (node, container, image) of each finding of the image pinning rules, and whether it fails the plan. */
  const findings = (out: string) =>
    read(out, 'policy.json').violations.map((v: { policy: string; name: string; message: string }) => [
      v.policy,
      v.name,
      /container (\S+) (?:receives the node key|touches the node's data) .*image (\S+?),? /.exec(v.message)?.slice(1),
    ]);

  /** The example stack's files as shipped, its example nodes in, in a folder of their own: its stack file. */
  const asGiven = (stack: 'testnet' | 'mainnet') =>
    writeProject(stack, exampleAsGiven(stack), fs.mkdtempSync(path.join(work, 'as-given-')));
  /** The same files as an operator completes them, addresses given (images by tag unless pinned): its stack file. */
  const completed = (stack: 'testnet' | 'mainnet') =>
    writeProject(stack, completedExample(stack, { pin: false }), fs.mkdtempSync(path.join(work, 'example-')));

  it.each(['testnet', 'mainnet'])(
    '%s as shipped: refused, holding no node, naming the command that adds one',
    (stack) => {
      const result = plan(['--stack', stack]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `Pulumi.${stack}.yaml: lacchain:nodes: given []; allowed: a list of at least one node: the stack holds none yet; \`npm run init -- --stack ${stack}\` adds yours`,
      );
      expect(fs.readdirSync(result.out)).toEqual([]);
    },
  );

  it('testnet, its addresses given: plans, warning about the writer, its relay signer and the init containers on its data running from a tag', () => {
    const result = plan(['--stack', 'testnet', '--config', completed('testnet')]);
    expect(result.code).toBe(0);
    expect(findings(result.out)).toEqual([
      ['node-key-images-by-tag', 'writer-node', ['backup-before-release-change', 'restic/restic:0.18.1']],
      ['node-key-images-by-tag', 'writer-node', ['writer-companion-state', 'hyperledger/besu:23.4.1']],
      ['node-key-images-by-tag', 'writer-node', ['writer-besu', 'hyperledger/besu:23.4.1']],
      ['node-key-images-by-tag', 'writer-node', ['writer-relay-signer', 'lacnetnetworks/relay-signer-lacchain:1.0.2']],
    ]);
    const warning = (container: string) =>
      expect.stringMatching(
        new RegExp(`^policy warning: \\[node-key-images-by-tag, advisory\\] .* container ${container} `),
      );
    expect(result.stderr.split('\n').filter(Boolean)).toEqual(
      ['backup-before-release-change', 'writer-companion-state', 'writer-besu', 'writer-relay-signer'].map(warning),
    );
  });

  it.each([
    ['testnet', [['values/writer.yml', '203.0.113.10']]],
    [
      'mainnet',
      [
        ['values/validator.yml', '203.0.113.20'],
        ['values/bootnode.yml', '203.0.113.21'],
      ],
    ],
  ] as const)(
    "%s: refused before anything is planned, its values files' documentation addresses named",
    (stack, given) => {
      const result = plan(['--stack', stack, '--config', asGiven(stack)]);
      expect(result.code).toBe(2);
      const network = networkOfStack(stack).name;
      const refused = (file: string, key: string, ip: string) =>
        `${file}: ${key}: given "${ip}", a documentation address (203.0.113.0/24); allowed: on ${network}, `;
      for (const [file, ip] of given) {
        expect(result.stderr).toContain(refused(file, 'deploy.publicIP', ip));
        expect(result.stderr).toContain(refused(file, 'deploy.p2p.host', ip));
      }
      expect(fs.readdirSync(result.out)).toEqual([]);
    },
  );

  it('mainnet, its public addresses given: fails the policy on Besu, the rotation client and restic, after writing the whole plan', () => {
    const result = plan(['--stack', 'mainnet', '--config', completed('mainnet')]);
    expect(result.code).toBe(1);
    // In the order the resources were registered, which the nodes' asynchronous identities decide: compared sorted.
    expect(findings(result.out).sort()).toEqual(
      [
        ['node-key-images-pinned', 'validator-node', ['validator-besu', 'hyperledger/besu:23.4.1']],
        [
          'node-key-images-pinned',
          'validator-node',
          ['validator-rotation-validator', 'lacnetnetworks/rotation-lacchain:1.0.0'],
        ],
        ['node-key-images-pinned', 'bootnode-node', ['bootnode-besu', 'hyperledger/besu:23.4.1']],
        // Advice, not a failure: the validator's key is in the state (keyCustody stack).
        ['validator-key-custody', 'validator-key', undefined],
        // The init containers on the data volume: the backup before a release change, the companions' state folders.
        ...['validator', 'bootnode'].flatMap((node) => [
          ['node-key-images-pinned', `${node}-node`, ['backup-before-release-change', 'restic/restic:0.18.1']],
          ['node-key-images-pinned', `${node}-node`, [`${node}-companion-state`, 'hyperledger/besu:23.4.1']],
        ]),
      ].sort(),
    );
    expect(result.stderr).toMatch(
      /^policy violation: \[node-key-images-pinned\] StatefulSet validator-node: container validator-besu receives the node key but runs image hyperledger\/besu:23.4.1 by tag: pin it by its registry digest/m,
    );
    expect(fs.readdirSync(result.out).sort()).toEqual(['kubernetes', 'policy.json', 'resources.json', 'rollout.txt']);
  });
});

describe('a stack the settings allow but the policy refuses', () => {
  // lacchain:allowKeyDeletion lets `pulumi destroy` delete the key Secret: valid settings, and exactly what a
  // reviewer must see, since the node's permissioned identity would go with it.
  const config = project(
    {
      'lacchain:network': 'open-protestnet',
      'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
      'lacchain:allowKeyDeletion': true,
      'lacchain:companions': { relaySigner: { imageDigest: TEST_KEY_IMAGE_DIGESTS.relaySigner } },
    },
    {
      'values/writer.yml': valuesFor('testnet', 'writer', {
        imageDigest: TEST_KEY_IMAGE_DIGESTS.besu,
        ...TEST_BACKUP_IMAGE_DIGESTS,
      }),
    },
  );
  const result = plan(['--stack', 'testnet', '--config', config]);

  it('prints each violation and exits 1', () => {
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        'policy violation: [node-key-secret-kept] Secret writer-key (the node key) is not kept on delete ' +
          "(retainOnDelete): deleting it loses the node's permissioned identity (set lacchain:allowKeyDeletion back to false)",
        '',
      ].join('\n'),
    );
  });

  it('still writes the whole plan, the violations in policy.json, and prints the outputs', () => {
    expect(fs.readdirSync(result.out).sort()).toEqual(['kubernetes', 'policy.json', 'resources.json']);
    expect(read(result.out, 'policy.json').violations).toEqual([
      expect.objectContaining({
        policy: 'node-key-secret-kept',
        type: 'kubernetes:core/v1:Secret',
        name: 'writer-key',
      }),
    ]);
    expect(JSON.parse(result.stdout).nodes.writer.podName).toBe('besu-node-writer-0');
  });
});

describe('the policy step of the plan, on recorded resources altered as a bad change would alter them', () => {
  const config = project({
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [
      { name: 'writer', typenode: 'writer', target: 'kubernetes' },
      sshValidatorEntry({ node_name: 'val' }),
    ],
    'lacchain:sshPrivateKey': { secure: 'v1:AAAA' },
    'lacchain:companions': {
      ...structuredClone(TEST_COMPANIONS),
      relaySigner: { ...TEST_COMPANIONS.relaySigner, imageDigest: TEST_KEY_IMAGE_DIGESTS.relaySigner },
    },
  });
  fs.mkdirSync(path.join(path.dirname(config), 'values'));
  fs.writeFileSync(
    path.join(path.dirname(config), 'values', 'writer.yml'),
    yaml.dump(
      valuesFor('testnet', 'writer', { imageDigest: TEST_KEY_IMAGE_DIGESTS.besu, ...TEST_BACKUP_IMAGE_DIGESTS }),
    ),
  );
  const result = plan(['--stack', 'testnet', '--config', config]);
  const settings = loadStack('testnet', readStackConfigFile(config), readFileFromDisk).settings;
  const planned = () => JSON.parse(fs.readFileSync(path.join(result.out, 'resources.json'), 'utf8')) as any[];
  const values = {
    validator: {
      genesis: planGenesisPlaceholder(settings.network),
      enode: '[known after pulumi up]',
      address: '[known after pulumi up]',
    },
  };

  it('passes as planned', () => {
    expect(result.code).toBe(0);
    expect(checkPlan(planned(), settings, plannedStepInputs(settings, values)).violations).toEqual([]);
  });

  it('finds a Besu release without permissioning in the StatefulSet', () => {
    const resources = planned();
    resources.find((r) => r.name === 'writer-node').inputs.spec.template.spec.containers[0].image =
      `hyperledger/besu:25.6.0@${TEST_KEY_IMAGE_DIGESTS.besu}`;
    expect(checkPlan(resources, settings).violations.map((v) => [v.policy, v.name])).toEqual([
      ['besu-version-supports-permissioning', 'writer-node'],
    ]);
  });

  it('checks an SSH step whose input is known only after pulumi up on the parameters the plan writes for it', () => {
    const resources = planned();
    const files = resources.find((r) => r.name === 'validator-node-files');
    // The generated identity is part of the step's input, so the recorded input is unknown until pulumi up.
    expect(files.inputs.stdin).toBe('[known after pulumi up]');
    const inputs = plannedStepInputs(settings, values);
    expect(inputs['validator-node-files']).toBe(
      fs.readFileSync(path.join(result.out, 'remote', 'validator', '04-node-files.env'), 'utf8'),
    );
    // A bad change: the validator's RPC, inside by default, bound to every address with ADMIN.
    inputs['validator-node-files'] = inputs['validator-node-files']
      .replace('rpc-http-api = [ "ETH",', 'rpc-http-api = [ "ADMIN", "ETH",')
      .replace('rpc-http-host = "127.0.0.1"', 'rpc-http-host = "0.0.0.0"');
    expect(checkPlan(resources, settings, inputs).violations.map((v) => [v.policy, v.name, v.message])).toEqual([
      ['rpc-safe-on-public-ports', 'validator-node-files', expect.stringContaining('enables ADMIN')],
      ['rpc-safe-on-public-ports', 'validator-node-files', expect.stringContaining('enables IBFT')],
    ]);
    expect(checkPlan(resources, settings).violations).toEqual([]);
  });
});

describe('the plan of an SSH node without a pinned host key', () => {
  const stack = (inventory: Record<string, unknown>) => {
    const entry = sshValidatorEntry(inventory);
    delete (entry.inventory as Record<string, unknown>).host_key;
    return project({
      'lacchain:network': 'open-protestnet',
      'lacchain:nodes': [entry],
      'lacchain:sshPrivateKey': { secure: 'v1:AAAA' },
      'lacchain:companions': structuredClone(TEST_COMPANIONS),
    });
  };

  it("flags the operator's explicit opt-out on a test network, as a warning that does not fail the plan", () => {
    const result = plan(['--stack', 'testnet', '--config', stack({ accept_any_host_key: true })]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^policy warning: \[ssh-host-key-opt-out, advisory\] remote step preflight of node validator .*accept_any_host_key/m,
    );
    expect(result.stderr).not.toContain('policy violation');
    const flagged = read(result.out, 'policy.json').violations.filter((v: { advisory?: boolean }) => v.advisory);
    expect(flagged).toHaveLength(REMOTE_STEP_NAMES.length);
  });

  it('refuses it without the opt-out, before planning anything', () => {
    const result = plan(['--stack', 'testnet', '--config', stack({})]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/inventory\.host_key: missing; allowed: the machine's SSH host key/);
  });
});

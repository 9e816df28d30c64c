/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * index.ts as `pulumi up` runs it: the settings come from the engine's config; bad settings, or a genesis that is not
 * the pinned one, end the run with a plain message (a RunError: no stack trace) before anything is declared.
 */
import type * as pulumi from '@pulumi/pulumi';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { contextFromSettings } from '../../policy/expectations';
import { policyResources } from '../../policy/offline';
import { checkResources, failingViolations, formatViolation } from '../../policy/rules';
import { SECRET_CONFIG_KEYS } from '../../core/settings/schema';
import {
  sshValidatorEntry,
  sshValidatorStack,
  TEST_BACKUP_IMAGE_DIGESTS,
  TEST_COMPANIONS,
  TEST_GENESIS_FILE,
  TEST_KEY_IMAGE_DIGESTS,
  testGenesisText,
  testPublicIp,
} from '../../testing/fixtures';
import { declareProgram, Declared } from '../../testing/program';
import { flush, recordProgram } from '../../testing/pulumi';
import { valuesFor } from '../../testing/values';
import { redact, type RecordedResource } from '../../tools/recording/engine';
import { workFolder } from '../../testing/workFolder';

/**
 * Loads index.ts in a fresh module registry with the engine's config set as `pulumi up` gives it, for `stack`. With
 * `genesis`, the network's genesis is that text (the real ones cannot be fetched here), as if it matched its pin.
 */
function loadProgram(config: Record<string, unknown>, stack = 'testnet', genesis?: string) {
  let program: () => Promise<unknown> = async () => undefined;
  let engine: typeof pulumi | undefined;
  let resources: RecordedResource[] = [];
  jest.isolateModules(() => {
    resources = (require('../../testing/pulumi') as typeof import('../../testing/pulumi')).recordProgram(stack);
    if (genesis === undefined) jest.dontMock('../../core/genesis');
    else {
      jest.doMock('../../core/genesis', () => ({
        ...jest.requireActual('../../core/genesis'),
        loadGenesis: async () => genesis,
      }));
    }
    engine = require('@pulumi/pulumi') as typeof pulumi;
    engine.runtime.setAllConfig(
      Object.fromEntries(Object.entries(config).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
      // The settings that must be secrets, as `pulumi config set --secret` sets them.
      Object.keys(config).filter((key) => (SECRET_CONFIG_KEYS as readonly string[]).includes(key)),
    );
    program = require('../../index');
  });
  return { program, engine: engine!, resources };
}

describe('index.ts', () => {
  const cwd = process.cwd();
  // A project whose writer has a values file made for the tests (the stock one gives example addresses, refused).
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-index-project-'));
  fs.mkdirSync(path.join(project, 'values'));
  fs.writeFileSync(path.join(project, 'values', 'writer.yml'), yaml.dump(valuesFor('testnet', 'writer')));
  beforeAll(() => process.chdir(project));
  afterAll(() => {
    process.chdir(cwd);
    fs.rmSync(project, { recursive: true, force: true });
  });

  it('ends the run with every settings problem, declaring nothing', async () => {
    const { program, engine, resources } = loadProgram({
      'lacchain:network': 'mainnet-omega',
      'lacchain:nodes': [{ name: 'Writer', typenode: 'writer', target: 'kubernetes' }],
    });
    const error = await program().catch((e: unknown) => e);
    expect(engine.RunError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'the settings of stack testnet cannot be deployed:\n' +
        'Pulumi.testnet.yaml: lacchain:network: given "mainnet-omega"; allowed: open-protestnet: stack testnet deploys to open-protestnet; mainnet-omega belongs to another stack\n' +
        'Pulumi.testnet.yaml: lacchain:nodes[0].name: given "Writer"; allowed: a name of lowercase letters, digits and hyphens, starting with a letter, at most 40 characters',
    );
    expect(resources).toEqual([]);
  });

  describe("mainnet's mandatory policy rules, on every run (no policy pack)", () => {
    const work = workFolder('lacchain-index-');
    const FIX =
      'pin it by its registry digest (values file deploy.imageDigest for Besu, lacchain:companions.<companion>.imageDigest for a companion; docs/kubernetes.md, "Pinning images")';
    const RULES_BROKEN =
      'the settings of stack mainnet cannot be deployed: they break mandatory policy rules (checked on every pulumi up, before anything is created or changed):';

    /** A mainnet validator on a cluster: its values file (outside the project), more stack settings. */
    function validatorStack(deploy: Record<string, unknown> = {}, config: Record<string, unknown> = {}) {
      const values = path.join(fs.mkdtempSync(path.join(work, 'stack-')), 'validator.yml');
      fs.writeFileSync(values, yaml.dump(valuesFor('mainnet', 'validator', deploy)));
      return {
        values,
        config: {
          'lacchain:network': 'mainnet-omega',
          'lacchain:nodes': [{ name: 'validator', typenode: 'validator', target: 'kubernetes', values }],
          ...config,
        },
      };
    }
    /** The resources a stack declares as the pack sees them (secrets hidden, as in the offline plan). */
    const packResources = (declared: Declared) =>
      policyResources(
        declared.resources.map((r) => ({ type: r.type, name: r.name, options: r.options, inputs: redact(r.inputs) })),
      );
    const PINNED = {
      deploy: {
        imageDigest: TEST_KEY_IMAGE_DIGESTS.besu,
        backupImageDigest: TEST_BACKUP_IMAGE_DIGESTS.backupImageDigest,
      },
      config: {
        'lacchain:companions': { rotationValidator: { imageDigest: TEST_KEY_IMAGE_DIGESTS.rotationValidator } },
      },
    };

    it('a key-holding image by tag: ends the run before any resource, naming the rule, the image and the fix', async () => {
      const { program, engine, resources } = loadProgram(validatorStack().config, 'mainnet', testGenesisText());
      const error = await program().catch((e: unknown) => e);
      expect(engine.RunError.isInstance(error)).toBe(true);
      expect((error as Error).message).toBe(
        [
          RULES_BROKEN,
          `[node-key-images-pinned] StatefulSet validator-node: container backup-before-release-change touches the node's data (it mounts the data volume) but runs image restic/restic:0.18.1 by tag: pin it by its registry digest (values file deploy.backupImageDigest; docs/kubernetes.md, "Pinning images")`,
          `[node-key-images-pinned] StatefulSet validator-node: container validator-companion-state touches the node's data (it mounts the data volume) but runs image hyperledger/besu:23.4.1 by tag: pin it by its registry digest (values file deploy.imageDigest; docs/kubernetes.md, "Pinning images")`,
          `[node-key-images-pinned] StatefulSet validator-node: container validator-besu receives the node key but runs image hyperledger/besu:23.4.1 by tag: ${FIX}`,
          `[node-key-images-pinned] StatefulSet validator-node: container validator-rotation-validator receives the node key but runs image lacnetnetworks/rotation-lacchain:1.0.0 by tag: ${FIX}`,
        ].join('\n'),
      );
      await flush();
      expect(resources).toEqual([]);
    });

    it("the pack's own words: each line is a failing violation the pack finds on the resources the stack declares", async () => {
      const { values, config } = validatorStack();
      const declared = await declareProgram(recordProgram('mainnet'), 'mainnet', config, {
        [path.relative('/project', values)]: fs.readFileSync(values, 'utf8'),
      });
      const found = failingViolations(
        checkResources(packResources(declared), contextFromSettings(declared.loaded.settings)),
        // The tests' genesis is not mainnet's (index.ts refuses that one itself, before the rules).
      ).filter((v) => v.policy !== 'genesis-digest-pinned');
      const { program } = loadProgram(config, 'mainnet', testGenesisText());
      const lines = ((await program().catch((e: unknown) => e)) as Error).message.split('\n').slice(1);
      expect(lines.sort()).toEqual(found.map(formatViolation).sort());
    });

    it("an SSH validator opted into consensus votes from outside: the pack's words on its node-files step", async () => {
      const entry = sshValidatorEntry({ node_ip: testPublicIp(7) });
      const rpc = { exposure: 'public', apis: ['ETH', 'NET', 'IBFT'], allowConsensusVotesFromOutside: true };
      const config = sshValidatorStack(
        { ...entry, rpc },
        {
          'lacchain:network': 'mainnet-omega',
          'lacchain:companions': { ...TEST_COMPANIONS, rotationValidator: { enabled: false } },
        },
      );
      const declared = await declareProgram(recordProgram('mainnet'), 'mainnet', config, {});
      const found = failingViolations(
        checkResources(packResources(declared), contextFromSettings(declared.loaded.settings)),
      ).filter((v) => v.policy !== 'genesis-digest-pinned');
      expect(found.map((v) => v.policy)).toEqual(['rpc-safe-on-public-ports']);
      const { program, engine, resources } = loadProgram(config, 'mainnet', testGenesisText());
      const error = await program().catch((e: unknown) => e);
      expect(engine.RunError.isInstance(error)).toBe(true);
      expect((error as Error).message.split('\n')).toEqual([RULES_BROKEN, ...found.map(formatViolation)]);
      expect(found[0].message).toMatch(
        /^remote step node-files of node validator \(validator-node-files\): RPC over HTTP/,
      );
      await flush();
      expect(resources).toEqual([]);
    });

    it('the same stack, its images pinned: every resource declared', async () => {
      const { config } = validatorStack(PINNED.deploy, PINNED.config);
      const { program, resources } = loadProgram(config, 'mainnet', testGenesisText());
      const outputs = (await program()) as { nodes: Record<string, unknown> };
      expect(Object.keys(outputs.nodes)).toEqual(['validator']);
      await flush();
      const set = resources.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet');
      expect(set?.name).toBe('validator-node');
    });

    it("a backup schedule's kubectl by tag: ends the run naming each step and the setting that pins it", async () => {
      const scheduled = { ...PINNED.config, 'lacchain:backups': { schedule: 'daily' } };
      const { config } = validatorStack(PINNED.deploy, scheduled);
      const { program, engine, resources } = loadProgram(config, 'mainnet', testGenesisText());
      const error = await program().catch((e: unknown) => e);
      expect(engine.RunError.isInstance(error)).toBe(true);
      expect((error as Error).message.split('\n')).toEqual([
        RULES_BROKEN,
        ...['stop-node', 'node-stopped', 'start-node'].map(
          (step) =>
            `[node-key-images-pinned] CronJob validator-backup-schedule: container ${step} touches the node's data (a step of the node's backups) but runs image registry.k8s.io/kubectl:v1.36.3 by tag: pin it by its registry digest (values file deploy.kubectlImageDigest; docs/kubernetes.md, "Pinning images")`,
        ),
      ]);
      await flush();
      expect(resources).toEqual([]);
      // Pinned, the schedule is declared.
      const pinned = validatorStack(
        { ...PINNED.deploy, kubectlImageDigest: TEST_BACKUP_IMAGE_DIGESTS.kubectlImageDigest },
        scheduled,
      );
      const run = loadProgram(pinned.config, 'mainnet', testGenesisText());
      await run.program();
      await flush();
      expect(run.resources.map((r) => r.name)).toContain('validator-backup-schedule');
    });

    it('an operator opting a validator into consensus votes from outside: ends the run, naming the rule', async () => {
      const rpc = { exposure: 'public', apis: ['ETH', 'NET', 'IBFT'], allowConsensusVotesFromOutside: true };
      const { config } = validatorStack(PINNED.deploy, {
        ...PINNED.config,
        'lacchain:companions': { rotationValidator: { enabled: false } },
      });
      const withRpc = { ...config, 'lacchain:nodes': [{ ...config['lacchain:nodes'][0], rpc }] };
      const { program, engine, resources } = loadProgram(withRpc, 'mainnet', testGenesisText());
      const error = await program().catch((e: unknown) => e);
      expect(engine.RunError.isInstance(error)).toBe(true);
      expect((error as Error).message.split('\n')).toEqual([
        RULES_BROKEN,
        expect.stringMatching(
          /^\[rpc-safe-on-public-ports\] ConfigMap validator-config: RPC over HTTP \(0\.0\.0\.0:4545, publicly reachable\) enables IBFT \(rpc-http-api\): whoever reaches it can vote on validators \(ibft_proposeValidatorVote, ibft_discardValidatorVote\)$/,
        ),
      ]);
      await flush();
      expect(resources).toEqual([]);
    });

    it('a private address as the p2p host: ends the run naming the file, the key, the value and what is allowed', async () => {
      const { values, config } = validatorStack(
        { ...PINNED.deploy, p2p: { host: '10.0.0.5', port: 60606 } },
        PINNED.config,
      );
      const { program, engine, resources } = loadProgram(config, 'mainnet', testGenesisText());
      const error = await program().catch((e: unknown) => e);
      expect(engine.RunError.isInstance(error)).toBe(true);
      expect((error as Error).message).toBe(
        'the settings of stack mainnet cannot be deployed:\n' +
          `${values}: deploy.p2p.host: given "10.0.0.5", a private address (10.0.0.0/8); allowed: on mainnet-omega, a public IPv4 address that peers reach and the network permissions (it is in the enode): not in a private (10/8, 172.16/12, 192.168/16), shared (100.64/10), loopback, link-local (169.254/16), unspecified, benchmarking (198.18/15) or documentation (192.0.2/24, 198.51.100/24, 203.0.113/24) range`,
      );
      await flush();
      expect(resources).toEqual([]);
    });

    it('testnet: the same validator, its images by tag and its address private, is declared', async () => {
      const values = path.join(fs.mkdtempSync(path.join(work, 'testnet-')), 'validator.yml');
      fs.writeFileSync(
        values,
        yaml.dump(valuesFor('testnet', 'validator', { publicIP: '10.0.0.5', p2p: { host: '10.0.0.5', port: 60606 } })),
      );
      const { program, resources } = loadProgram(
        {
          'lacchain:network': 'open-protestnet',
          'lacchain:nodes': [{ name: 'validator', typenode: 'validator', target: 'kubernetes', values }],
        },
        'testnet',
        testGenesisText(),
      );
      const outputs = (await program()) as { nodes: Record<string, unknown> };
      expect(Object.keys(outputs.nodes)).toEqual(['validator']);
      await flush();
      expect(resources.some((r) => r.name === 'validator-node')).toBe(true);
    });
  });

  it('ends the run when the genesis is not the pinned one, showing both digests, declaring nothing', async () => {
    const { program, engine, resources } = loadProgram({
      'lacchain:network': 'open-protestnet',
      'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
      'lacchain:genesisFile': TEST_GENESIS_FILE,
    });
    const error = await program().catch((e: unknown) => e);
    expect(engine.RunError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /does not match the pinned digest: expected sha256 bba4833b\w{56}, got sha256 66b3b52f\w{56}/,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(resources).toEqual([]);
  });
});

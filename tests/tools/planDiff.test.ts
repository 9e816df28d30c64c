/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The plan diff: the pure comparison of two plans (cli/plan/diff.ts), then `npm run plan -- --diff BASE_DIR` for a
 * release bump on both paths and `--diff-ref REF` for a bootnode change in the catalog, run as a reviewer runs them.
 */
import { RELEASE_ARCHIVE_SHA256, releaseSources } from '../../core/catalog/besu';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { diffPlans, diffValues, formatDiff, isEmptyDiff, lineChanges, PlannedResource } from '../../cli/plan/diff';
import { KEY_ONE, sshValidatorEntry, TEST_COMPANIONS } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';
import { completedExample, stockStackWithExamples, writeProject } from '../../testing/examples';
import { writerProject } from '../../testing/projects';
import { planWorkspace } from '../../testing/planWorkspace';

const { work, plan, project } = planWorkspace('lacchain-diff-');

const resource = (type: string, name: string, inputs: unknown, options: Record<string, unknown> = {}) => ({
  type,
  name,
  inputs,
  options: { protect: false, retainOnDelete: false, ...options },
});

describe('diffPlans', () => {
  const base: PlannedResource[] = [
    resource('kubernetes:apps/v1:StatefulSet', 'writer-node', {
      metadata: { labels: { 'app.kubernetes.io/version': '23.4.1' } },
      spec: { containers: [{ image: 'hyperledger/besu:23.4.1' }, { image: 'nginx' }] },
    }),
    resource('kubernetes:core/v1:ConfigMap', 'writer-config', { data: { 'config.toml': 'a = 1\nb = 2\nc = 3\n' } }),
    resource('kubernetes:core/v1:Secret', 'writer-key', { stringData: '[secret]' }, { protect: true }),
    resource('kubernetes:core/v1:Service', 'old-service', { spec: { type: 'LoadBalancer' } }),
  ];
  const next: PlannedResource[] = [
    resource('kubernetes:apps/v1:StatefulSet', 'writer-node', {
      metadata: { labels: { 'app.kubernetes.io/version': '23.4.2' } },
      spec: { containers: [{ image: 'hyperledger/besu:23.4.2' }] },
    }),
    resource('kubernetes:core/v1:ConfigMap', 'writer-config', {
      data: { 'config.toml': 'a = 1\nb = 20\nc = 3\nd = 4\n' },
    }),
    resource('kubernetes:core/v1:Secret', 'writer-key', { stringData: '[secret]' }, { protect: false }),
    resource('kubernetes:core/v1:Service', 'new-service', { spec: { type: 'LoadBalancer' } }),
  ];

  it('finds what is created, changed and deleted, with the path of every changed field', () => {
    const diff = diffPlans(base, next);
    expect(diff.created).toEqual([{ type: 'kubernetes:core/v1:Service', name: 'new-service' }]);
    expect(diff.deleted).toEqual([{ type: 'kubernetes:core/v1:Service', name: 'old-service' }]);
    expect(diff.unchanged).toBe(0);
    expect(diff.changed.map((c) => [c.name, c.fields.map((f) => f.path)])).toEqual([
      [
        'writer-node',
        ['metadata.labels["app.kubernetes.io/version"]', 'spec.containers[0].image', 'spec.containers[1]'],
      ],
      ['writer-config', ['data["config.toml"]']],
      ['writer-key', ['options.protect']],
    ]);
    const removed = diff.changed[0].fields[2];
    expect(removed).toEqual({ path: 'spec.containers[1]', before: { image: 'nginx' } });
    expect(diff.changed[1].fields[0].lines).toEqual({
      added: 2,
      removed: 1,
      lines: ['- b = 2', '+ b = 20', '+ d = 4'],
    });
  });

  it('finds nothing between equal plans', () => {
    const diff = diffPlans(base, structuredClone(base));
    expect(isEmptyDiff(diff)).toBe(true);
    expect(diff.unchanged).toBe(4);
    expect(formatDiff(diff, 'plan-base')).toBe('plan diff against plan-base: no changes (4 resources)\n');
  });

  it('prints one line per resource and field, and the changed lines of a text', () => {
    expect(formatDiff(diffPlans(base, next), 'plan-base')).toBe(
      [
        'plan diff against plan-base: 1 to create, 3 to change, 1 to delete, 0 unchanged',
        '+ kubernetes:core/v1:Service new-service',
        '~ kubernetes:apps/v1:StatefulSet writer-node: metadata.labels["app.kubernetes.io/version"]: "23.4.1" -> "23.4.2"',
        '~ kubernetes:apps/v1:StatefulSet writer-node: spec.containers[0].image: "hyperledger/besu:23.4.1" -> "hyperledger/besu:23.4.2"',
        '~ kubernetes:apps/v1:StatefulSet writer-node: spec.containers[1]: {"image":"nginx"} -> (absent)',
        '~ kubernetes:core/v1:ConfigMap writer-config: data["config.toml"]: 2 lines changed (+2 -1)',
        '    - b = 2',
        '    + b = 20',
        '    + d = 4',
        '~ kubernetes:core/v1:Secret writer-key: options.protect: true -> false',
        '- kubernetes:core/v1:Service old-service',
        '',
      ].join('\n'),
    );
  });

  it('aligns changed lines in order, and compares values of different kinds', () => {
    expect(lineChanges('x\ny\nz', 'x\nY\nz\nw').lines).toEqual(['- y', '+ Y', '+ w']);
    expect(lineChanges('same', 'same')).toEqual({ added: 0, removed: 0, lines: [] });
    expect(diffValues({ a: [1] }, { a: { 0: 1 } }, '')).toEqual([{ path: 'a', before: [1], after: { 0: 1 } }]);
    expect(diffValues(undefined, { a: 1 }, 'options')).toEqual([{ path: 'options', after: { a: 1 } }]);
  });
});

const writerStack = (deploy: Record<string, unknown> = {}) => writerProject(work, { deploy });

const sshStack = (inventory: Record<string, unknown> = {}) =>
  project({
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [sshValidatorEntry(inventory)],
    'lacchain:sshPrivateKey': { secure: 'v1:AAAA' },
    'lacchain:companions': structuredClone(TEST_COMPANIONS),
  });

/**
 * A testnet writer's plan output without the warnings it must end with: the init containers on its data (restic's
 * backup before a release change, the companions' state folders) and Besu and the relay signer, which get the node
 * key, run from an image tag, which testnet flags (node-key-images-by-tag) without failing the plan.
 */
function withoutTagWarnings(stderr: string): string {
  const warning =
    /^policy warning: \[node-key-images-by-tag, advisory\] StatefulSet writer-node: container (\S+) .*\n/gm;
  expect([...stderr.matchAll(warning)].map((m) => m[1])).toEqual([
    'backup-before-release-change',
    'writer-companion-state',
    'writer-besu',
    'writer-relay-signer',
  ]);
  return stderr.replace(warning, '');
}

/** Plans the testnet stack file `before`, then `after` with --diff against that plan (`extra` arguments to both): both plan. */
function planBump(before: string, after: string, extra: string[] = []) {
  const base = plan(['--stack', 'testnet', '--config', before, ...extra]);
  expect(base.code).toBe(0);
  const bumped = plan(['--stack', 'testnet', '--config', after, ...extra, '--diff', base.out]);
  expect(bumped.code).toBe(0);
  return { base, bumped };
}

const diffJson = (out: string) => JSON.parse(fs.readFileSync(path.join(out, 'diff.json'), 'utf8'));

describe('plan --diff BASE_DIR: a release bump', () => {
  it('on Kubernetes changes only the StatefulSet: the images and the pod version label', () => {
    const { base, bumped } = planBump(writerStack(), writerStack({ releaseVersion: '23.4.2' }));
    const diff = diffJson(bumped.out);
    expect(diff).toMatchObject({ base: base.out, created: [], deleted: [] });
    expect(diff.changed).toEqual([
      {
        type: 'kubernetes:apps/v1:StatefulSet',
        name: 'writer-node',
        fields: [
          {
            path: 'spec.template.metadata.labels["app.kubernetes.io/version"]',
            before: '23.4.1',
            after: '23.4.2',
          },
          {
            path: 'spec.template.spec.containers[0].image',
            before: 'hyperledger/besu:23.4.1',
            after: 'hyperledger/besu:23.4.2',
          },
          // The metrics relay runs in Besu's image.
          {
            path: 'spec.template.spec.containers[1].image',
            before: 'hyperledger/besu:23.4.1',
            after: 'hyperledger/besu:23.4.2',
          },
          // The config check (the pod's first init container) runs Besu's image.
          {
            path: 'spec.template.spec.initContainers[0].image',
            before: 'hyperledger/besu:23.4.1',
            after: 'hyperledger/besu:23.4.2',
          },
          // The backup before a release change knows the release the pod runs.
          {
            path: 'spec.template.spec.initContainers[1].env[0].value',
            before: '23.4.1',
            after: '23.4.2',
          },
          // The init container that makes the companions' state folders runs Besu's image.
          {
            path: 'spec.template.spec.initContainers[2].image',
            before: 'hyperledger/besu:23.4.1',
            after: 'hyperledger/besu:23.4.2',
          },
        ],
      },
    ]);
    expect(withoutTagWarnings(bumped.stderr)).toBe(
      [
        `plan diff against ${base.out}: 0 to create, 1 to change, 0 to delete, ${diff.unchanged} unchanged`,
        '~ kubernetes:apps/v1:StatefulSet writer-node: spec.template.metadata.labels["app.kubernetes.io/version"]: "23.4.1" -> "23.4.2"',
        '~ kubernetes:apps/v1:StatefulSet writer-node: spec.template.spec.containers[0].image: "hyperledger/besu:23.4.1" -> "hyperledger/besu:23.4.2"',
        '~ kubernetes:apps/v1:StatefulSet writer-node: spec.template.spec.containers[1].image: "hyperledger/besu:23.4.1" -> "hyperledger/besu:23.4.2"',
        '~ kubernetes:apps/v1:StatefulSet writer-node: spec.template.spec.initContainers[0].image: "hyperledger/besu:23.4.1" -> "hyperledger/besu:23.4.2"',
        '~ kubernetes:apps/v1:StatefulSet writer-node: spec.template.spec.initContainers[1].env[0].value: "23.4.1" -> "23.4.2"',
        '~ kubernetes:apps/v1:StatefulSet writer-node: spec.template.spec.initContainers[2].image: "hyperledger/besu:23.4.1" -> "hyperledger/besu:23.4.2"',
        '',
      ].join('\n'),
    );
    expect(fs.readFileSync(path.join(bumped.out, 'diff.txt'), 'utf8')).toBe(withoutTagWarnings(bumped.stderr));
    // The plan's own output is unchanged: the outputs as JSON on standard output.
    expect(JSON.parse(bumped.stdout).nodes.writer.podName).toBe('besu-node-writer-0');
  });

  it("on an SSH node changes only the preflight's check, the release and start steps", () => {
    const keyFile = path.join(work, 'validator.key');
    fs.writeFileSync(keyFile, KEY_ONE);
    const { bumped } = planBump(sshStack(), sshStack({ node_release_version: '23.4.4' }), ['--node-key-file', keyFile]);
    const diff = diffJson(bumped.out);
    expect(diff.changed.map((c: any) => [c.name, c.fields.map((f: any) => f.path)])).toEqual([
      ['validator-preflight', ['stdin', 'triggers[0]']],
      ['validator-release', ['stdin', 'triggers[0]']],
      ['validator-start', ['stdin', 'triggers[0]']],
    ]);
    // The preflight checks again that the machine can run the release (its Java).
    expect(diff.changed[0].fields[0].lines.lines).toEqual([
      "- export BESU_VERSION='23.4.1'",
      "+ export BESU_VERSION='23.4.4'",
    ]);
    // The release's published sources in order (core/catalog/besu.ts releaseSources): the JFrog URL its changelog
    // gives, then GitHub's asset.
    const urls = (v: string) => [
      `export RELEASE_URL='${releaseSources(v)[0]}'`,
      `export RELEASE_FALLBACK_URLS='https://github.com/hyperledger/besu/releases/download/${v}/besu-${v}.tar.gz'`,
    ];
    // The archive's digest comes from the catalog: the release the reviewer sees is the one that will be checked.
    const digest = (v: string) => `export RELEASE_SHA256='${RELEASE_ARCHIVE_SHA256[v]}'`;
    expect(diff.changed[1].fields[0].lines.lines).toEqual([
      "- export BESU_VERSION='23.4.1'",
      ...urls('23.4.1').map((line) => `- ${line}`),
      `- ${digest('23.4.1')}`,
      "+ export BESU_VERSION='23.4.4'",
      ...urls('23.4.4').map((line) => `+ ${line}`),
      `+ ${digest('23.4.4')}`,
    ]);
    expect(diff.changed[2].fields[0].lines.lines).toEqual([
      "- export BESU_VERSION='23.4.1'",
      "+ export BESU_VERSION='23.4.4'",
    ]);
    expect(bumped.stderr).toContain('~ command:remote:Command validator-release: stdin: 4 lines changed (+4 -4)');
  });

  it('on an SSH node whose key is known only at pulumi up, lists the start step as restarting the node', () => {
    const { base, bumped } = planBump(sshStack(), sshStack({ node_release_version: '23.4.4' }));
    const diff = diffJson(bumped.out);
    expect(diff.changed.map((c: any) => [c.name, c.fields.map((f: any) => f.path)])).toEqual([
      ['validator-preflight', ['stdin', 'triggers[0]']],
      ['validator-release', ['stdin', 'triggers[0]']],
      ['validator-start', ['restarts the node (its input is known at pulumi up; its parameters)']],
    ]);
    expect(diff.changed[2].fields[0].lines.lines).toEqual([
      "- export BESU_VERSION='23.4.1'",
      "+ export BESU_VERSION='23.4.4'",
    ]);
    expect(bumped.stderr).toContain(`plan diff against ${base.out}: 0 to create, 3 to change, 0 to delete`);
    expect(bumped.stderr).toContain(
      '~ command:remote:Command validator-start: restarts the node (its input is known at pulumi up; its parameters): 1 line changed (+1 -1)',
    );
  });

  it('needs a plan folder, and one base only', () => {
    const empty = fs.mkdtempSync(path.join(work, 'empty-'));
    const missing = plan(['--stack', 'testnet', '--config', writerStack(), '--diff', empty]);
    expect([missing.code, missing.stderr]).toEqual([
      2,
      expect.stringContaining(`--diff ${empty}: no resources.json there`),
    ]);
    const both = plan(['--stack', 'testnet', '--diff', empty, '--diff-ref', 'HEAD']);
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining('--diff and --diff-ref: give one')]);
  });
});

/** A git repository holding a copy of the project (its files as they are now), sharing its node_modules. */
function projectRepository(): string {
  const dir = fs.mkdtempSync(path.join(work, 'repo-'));
  const listed = spawnSync('git', ['-C', PROJECT_DIR, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    const from = path.join(PROJECT_DIR, file);
    if (!fs.existsSync(from) || fs.statSync(from).isDirectory()) continue;
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.copyFileSync(from, path.join(dir, file));
  }
  const git = (...args: string[]) => {
    const result = spawnSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.org', ...args], {
      cwd: dir,
      encoding: 'utf8',
    });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  };
  // The stack file with its example writer in and its values completed, as an operator who added it has them (the
  // stock stack holds no node; the stock values give example addresses).
  for (const [file, text] of Object.entries(completedExample('testnet', { pin: false }))) {
    fs.writeFileSync(path.join(dir, file), text);
  }
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  fs.symlinkSync(path.join(PROJECT_DIR, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

describe('plan --diff-ref REF: a bootnode change', () => {
  it("shows the changed bootnodes line of config.toml, the new ConfigMap's name, and the pod switched to it", () => {
    const repo = projectRepository();
    expect(fs.readFileSync(path.join(repo, 'Pulumi.testnet.yaml'), 'utf8')).toBe(stockStackWithExamples('testnet'));
    const catalog = path.join(repo, 'core/catalog/networks.ts');
    const text = fs.readFileSync(catalog, 'utf8');
    const before = 'bootnodes: { writer: [o.O1, o.O2],';
    expect(text).toContain(before);
    fs.writeFileSync(catalog, text.replace(before, 'bootnodes: { writer: [o.O1],'));

    const result = plan(['--stack', 'testnet', '--diff-ref', 'HEAD'], { cwd: repo });
    expect(result.code).toBe(0);
    const diff = diffJson(result.out);
    expect(diff).toMatchObject({ base: 'git ref HEAD', created: [], deleted: [] });
    expect(diff.changed.map((c: any) => [c.name, c.fields.map((f: any) => f.path)])).toEqual([
      // A new ConfigMap (immutable, named by its content), which the StatefulSet switches to: its name and digest.
      ['writer-config', ['data["config.toml"]', 'metadata.annotations["lacchain.net/config-digest"]', 'metadata.name']],
      [
        'writer-node',
        [
          'spec.template.metadata.annotations["lacchain.net/config-checksum"]',
          'spec.template.spec.initContainers[0].args[2]',
          'spec.template.spec.volumes[0].configMap.name',
        ],
      ],
    ]);
    const lines = diff.changed[0].fields[0].lines;
    expect(lines).toMatchObject({ added: 1, removed: 1 });
    expect(lines.lines[0]).toMatch(
      /^- bootnodes = \[ "enode:\/\/2ef018.*@34.74.49.181:60606", "enode:\/\/6c1b74.*@35.196.67.163:60606" \]$/,
    );
    expect(lines.lines[1]).toMatch(/^\+ bootnodes = \[ "enode:\/\/2ef018.*@34.74.49.181:60606" \]$/);
    // The copy has no build of its edited sources: the launcher says it runs them through ts-node, on its first line.
    const note = /^the program is not built: running the TypeScript sources through ts-node .*\n/;
    expect(result.stderr).toMatch(note);
    expect(withoutTagWarnings(result.stderr.replace(note, ''))).toMatch(
      /^plan diff against git ref HEAD: 0 to create, 2 to change, 0 to delete, \d+ unchanged\n~ kubernetes:core\/v1:ConfigMap writer-config: data\["config.toml"\]: 1 line changed \(\+1 -1\)\n {4}- bootnodes = .*\n {4}\+ bootnodes = .*\n~ kubernetes:core\/v1:ConfigMap writer-config: metadata.annotations\["lacchain.net\/config-digest"\]: "\w{64}" -> "\w{64}"\n~ kubernetes:core\/v1:ConfigMap writer-config: metadata.name: "besu-node-writer-config-\w{10}" -> "besu-node-writer-config-\w{10}"\n~ kubernetes:apps\/v1:StatefulSet writer-node: spec.template.metadata.annotations\["lacchain.net\/config-checksum"\]: "\w+" -> "\w+"\n~ kubernetes:apps\/v1:StatefulSet writer-node: spec.template.spec.initContainers\[0\].args\[2\]: "\w{64}" -> "\w{64}"\n~ kubernetes:apps\/v1:StatefulSet writer-node: spec.template.spec.volumes\[0\].configMap.name: "besu-node-writer-config-\w{10}" -> "besu-node-writer-config-\w{10}"\n$/,
    );
  }, 120_000);

  it('says what to do when the stack file is not committed: the ref holds other settings', () => {
    const repo = projectRepository();
    // The shipped stack file committed, the operator's node added since and not committed.
    const stackFile = path.join(repo, 'Pulumi.testnet.yaml');
    const operators = fs.readFileSync(stackFile, 'utf8');
    fs.copyFileSync(path.join(PROJECT_DIR, 'Pulumi.testnet.yaml'), stackFile);
    const git = (...args: string[]) =>
      spawnSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.org', ...args], { cwd: repo });
    git('commit', '-q', '-am', 'the shipped stack');
    fs.writeFileSync(stackFile, operators);
    const result = plan(['--stack', 'testnet', '--diff-ref', 'HEAD'], { cwd: repo });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the plan at HEAD failed (exit 2)');
    expect(result.stderr).toContain(
      'Pulumi.testnet.yaml and values at HEAD are not as in your folder: --diff-ref plans the files as committed. ' +
        'Commit the stack and values files (or keep a copy of them), or plan before a change ' +
        '(npm run plan -- --stack testnet --out plan-before/) and compare with --diff plan-before/ (docs/upgrades.md)',
    );
  }, 120_000);

  it('refuses a ref that is not a commit', () => {
    const example = completedExample('testnet', { pin: false });
    const config = writeProject('testnet', example, fs.mkdtempSync(path.join(work, 'completed-')));
    const result = plan(['--stack', 'testnet', '--config', config, '--diff-ref', 'no-such-ref-anywhere']);
    expect([result.code, result.stderr]).toEqual([
      1,
      expect.stringContaining('--diff-ref no-such-ref-anywhere: not a commit'),
    ]);
    expect(fs.readdirSync(result.out)).toEqual([]);
  });
});

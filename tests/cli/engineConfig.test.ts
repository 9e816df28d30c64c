/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The engine's own view of the config: the real Pulumi CLI runs an Automation API inline program (through --client,
 * no language host) that registers no resource and runs the program's settings loader, as `pulumi up` does before
 * declaring anything. On the example stacks, on a stack that sets every setting (its secrets set with
 * `config set --secret [--path]`) and on a stack with bad values, the engine's result must equal what the offline
 * reader and the unit tests' helpers (testing/fixtures.ts, rawConfig) make of the same stack.
 */
import * as path from 'path';
import * as yaml from 'js-yaml';
import type { Stack } from '@pulumi/pulumi/automation';
import { loadPulumiStack } from '../../components/pulumiSettings';
import { loadStack, LoadedStack } from '../../core/settings/load';
import { SettingsError } from '../../core/settings/problems';
import { readFileFromDisk, readStackConfigFile } from '../../core/settings/settingsFiles';
import { engineConfigOf, secretSettings, validTestnetConfig, validWriterValues } from '../../testing/fixtures';
import { everySettingConfig, everySettingFiles } from '../fixtures/stacks/everySetting';
import { cliSuite, inlineStack, projectCopy, readingBack, setConfigs } from './pulumiCli';
import { completedExample } from '../../testing/examples';

jest.setTimeout(10 * 60 * 1000);
const suite = cliSuite("The engine's view of the config (real Pulumi CLI)");

/** What the inline program reports: the loaded settings and secrets, or the settings problems. */
interface EngineResult {
  loaded?: LoadedStack;
  problems?: string;
}

/** The stack file's mapping without its secrets, and the secrets as `config set --secret` arguments. */
function splitSecrets(config: Record<string, unknown>) {
  const plain: Record<string, unknown> = {};
  const secrets: { key: string; value: string; path: boolean }[] = [];
  for (const [key, value] of Object.entries(config)) {
    const secure = (v: unknown): v is { secure: string } => typeof v === 'object' && v !== null && 'secure' in v;
    if (secure(value)) secrets.push({ key, value: value.secure, path: false });
    else if (typeof value === 'object' && value !== null && Object.values(value).some(secure)) {
      for (const [sub, v] of Object.entries(value))
        secrets.push({ key: `${key}.${sub}`, value: (v as any).secure, path: true });
    } else plain[key] = value;
  }
  return { plain, secrets };
}

suite("the engine's view of the config", () => {
  const state = projectCopy();
  const projects: { remove(): void }[] = [];

  afterAll(() => {
    for (const p of projects) p.remove();
    state.remove();
  });

  /** A project folder with a stack file (YAML as written) and extra files; secrets set through the CLI. */
  async function stackOf(
    stackName: string,
    files: Record<string, string>,
    secrets: ReturnType<typeof splitSecrets>['secrets'] = [],
  ) {
    const project = projectCopy(files);
    projects.push(project);
    const stack = await inlineStack(stackName, project.dir, state.dir, async (): Promise<EngineResult> => {
      try {
        return { loaded: loadPulumiStack(project.dir) };
      } catch (error) {
        return { problems: (error as Error).message };
      }
    });
    // One run of the CLI for the secrets set by path, one for the rest.
    for (const byPath of [true, false]) {
      const set = secrets.filter((s) => s.path === byPath).map((s) => [s.key, { value: s.value, secret: true }]);
      await setConfigs(stack, Object.fromEntries(set), byPath);
    }
    return { stack, dir: project.dir };
  }

  async function engineResult(stack: Stack): Promise<EngineResult> {
    const { outputs } = await readingBack(stack, { outputs: 'values', summary: false }).up();
    return Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, v.value])) as EngineResult;
  }

  const offline = (stackName: string, dir: string) =>
    loadStack(stackName, readStackConfigFile(path.join(dir, `Pulumi.${stackName}.yaml`)), readFileFromDisk);
  /** Settings as JSON, the stack file named as the engine names it. */
  const comparable = (loaded: LoadedStack, stackName: string) =>
    JSON.parse(JSON.stringify({ ...loaded, settings: { ...loaded.settings, configFile: `Pulumi.${stackName}.yaml` } }));

  it.each(['testnet', 'mainnet'] as const)(
    'the example stack %s, completed, loads under the engine as the offline reader loads it',
    async (name) => {
      // As an operator completes it (testing/examples.ts): mainnet refuses its documentation addresses and, on every
      // run, the images that receive the node key by tag.
      const { stack, dir } = await stackOf(name, completedExample(name));
      const result = await engineResult(stack);
      expect(result.problems).toBeUndefined();
      expect(result.loaded).toEqual(comparable(offline(name, dir), name));
    },
  );

  it('the stack with every setting loads under the engine as the unit tests feed it', async () => {
    const config = everySettingConfig();
    const { plain, secrets } = splitSecrets(config);
    const files = Object.fromEntries(Object.entries(everySettingFiles()).map(([f, v]) => [f, yaml.dump(v)]));
    const { stack, dir } = await stackOf(
      'testnet',
      { ...files, 'Pulumi.testnet.yaml': yaml.dump({ config: plain }) },
      secrets,
    );
    const result = await engineResult(stack);
    expect(result.problems).toBeUndefined();
    // The unit tests' helper hands the same mapping over as it believes the engine does.
    const unit = loadStack(
      'testnet',
      { file: 'Pulumi.testnet.yaml', baseDir: dir, ...engineConfigOf(config) },
      readFileFromDisk,
    );
    expect(result.loaded).toEqual(comparable(unit, 'testnet'));
    expect(result.loaded?.settings.allowKeyDeletion).toBe(true);
  });

  it('bad values get the same messages under the engine as in the unit tests', async () => {
    const config: Record<string, unknown> = validTestnetConfig();
    (config['lacchain:nodes'] as any[])[1].inventory.port = 70000;
    config['lacchain:allowKeyDeletion'] = 'yes';
    config['lacchain:rpc'] = { exposure: 'everywhere' };
    const { plain, secrets } = splitSecrets({
      ...config,
      'lacchain:sshPrivateKey': { secure: config['lacchain:sshPrivateKey'] },
    });
    const values = yaml.dump(validWriterValues());
    const { stack, dir } = await stackOf(
      'testnet',
      { 'Pulumi.testnet.yaml': yaml.dump({ config: plain }), 'values/writer.yml': values },
      secrets,
    );
    const result = await engineResult(stack);
    const expected = [
      'Pulumi.testnet.yaml: lacchain:nodes[1].inventory.port: given 70000; allowed: a whole number from 1 to 65535',
      'Pulumi.testnet.yaml: lacchain:allowKeyDeletion: given "yes"; allowed: true or false',
      'Pulumi.testnet.yaml: lacchain:rpc.exposure: given "everywhere"; allowed: one of public, tls-only, internal',
    ];
    expect(result.problems?.split('\n').slice(1).sort()).toEqual([...expected].sort());
    let unit = '';
    try {
      // The SSH key was set with --secret above.
      const asSet = engineConfigOf(secretSettings(config));
      loadStack('testnet', { file: 'Pulumi.testnet.yaml', baseDir: dir, ...asSet }, readFileFromDisk);
    } catch (error) {
      unit = (error as SettingsError).message;
    }
    expect(unit.split('\n').sort()).toEqual([...expected].sort());
  });

  it('refuses secrets written in plain text under the engine, by key and inside a mapping', async () => {
    const config: Record<string, unknown> = validTestnetConfig();
    // The SSH key written in plain text; one node key set with --secret, the other in plain text beside it.
    config['lacchain:nodeKeys'] = { validator: `0x${'0'.repeat(63)}2` };
    const { stack } = await stackOf(
      'testnet',
      {
        'Pulumi.testnet.yaml': yaml.dump({ config }),
        'values/writer.yml': yaml.dump(validWriterValues()),
      },
      [{ key: 'lacchain:nodeKeys.writer', value: `0x${'0'.repeat(63)}1`, path: true }],
    );
    const result = await engineResult(stack);
    const plainText = 'a value in plain text (not shown): it would be kept unencrypted in the file and in the state';
    expect(result.problems?.split('\n').slice(1).sort()).toEqual([
      `Pulumi.testnet.yaml: lacchain:nodeKeys.validator: ${plainText}; allowed: a secret: pulumi config set --secret --path 'lacchain:nodeKeys.validator' < node.key`,
      `Pulumi.testnet.yaml: lacchain:sshPrivateKey: ${plainText}; allowed: a secret: pulumi config set --secret lacchain:sshPrivateKey < ~/.ssh/id_ed25519`,
    ]);
    expect(result.problems).not.toContain('BEGIN OPENSSH');
  });
});

/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * index.ts as `pulumi up` runs it: the settings come from the engine's config; bad settings, or a genesis that is not
 * the pinned one, end the run with a plain message (a RunError: no stack trace) before anything is declared.
 */
import type * as pulumi from '@pulumi/pulumi';
import { TEST_GENESIS_FILE } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';
import type { RecordedResource } from '../../tools/recording/engine';

/** Loads index.ts in a fresh module registry with the engine's config set as `pulumi up` gives it. */
function loadProgram(config: Record<string, unknown>) {
  let program: () => Promise<unknown> = async () => undefined;
  let engine: typeof pulumi | undefined;
  let resources: RecordedResource[] = [];
  jest.isolateModules(() => {
    resources = (require('../../testing/pulumi') as typeof import('../../testing/pulumi')).recordProgram('testnet');
    engine = require('@pulumi/pulumi') as typeof pulumi;
    engine.runtime.setAllConfig(
      Object.fromEntries(Object.entries(config).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
    );
    program = require('../../index');
  });
  return { program, engine: engine!, resources };
}

describe('index.ts', () => {
  const cwd = process.cwd();
  beforeAll(() => process.chdir(PROJECT_DIR));
  afterAll(() => process.chdir(cwd));

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

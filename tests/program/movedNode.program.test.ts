/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * index.ts refuses a `pulumi up` whose stack file moved a node (another machine) since the last run, pointing at
 * `npm run node -- move` (docs/moving.md): the last run's `nodes` output, read back through a StackReference to the
 * stack itself, names another place. Decided before any node's resource is declared (only that read is); the move's
 * own run (MOVING_NODE_VARIABLE naming the node) goes through, as does a run where nothing moved.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import type * as pulumi from '@pulumi/pulumi';
import { MOVING_NODE_VARIABLE } from '../../core/catalog/move';
import { nodePlace } from '../../core/node/place';
import { SECRET_CONFIG_KEYS } from '../../core/settings/schema';
import { KEY_ONE, loadTestnet, sshValidatorStack, testGenesisText } from '../../testing/fixtures';
import { valuesFor } from '../../testing/values';
import { flush } from '../../testing/pulumi';
import type { RecordedResource } from '../../tools/recording/engine';

/** Every registration of a run reached the engine (before the next test installs another). */
const settled = () => new Promise((resolve) => setTimeout(resolve, 1000));

/** index.ts with the engine's config, its last run's `nodes` output as `lastNodes`. */
function loadProgram(config: Record<string, unknown>, lastNodes: unknown) {
  let program: () => Promise<Record<string, unknown>> = async () => ({});
  let engine: typeof pulumi | undefined;
  let resources: RecordedResource[] = [];
  jest.isolateModules(() => {
    resources = (require('../../testing/pulumi') as typeof import('../../testing/pulumi')).recordProgram(
      'testnet',
      (resource) =>
        resource.type === 'pulumi:pulumi:StackReference'
          ? { outputs: lastNodes === undefined ? {} : { nodes: lastNodes }, secretOutputNames: [] }
          : undefined,
    );
    jest.doMock('../../core/genesis', () => ({
      ...jest.requireActual('../../core/genesis'),
      loadGenesis: async () => testGenesisText(),
    }));
    engine = require('@pulumi/pulumi') as typeof pulumi;
    engine.runtime.setAllConfig(
      Object.fromEntries(Object.entries(config).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
      Object.keys(config).filter((key) => (SECRET_CONFIG_KEYS as readonly string[]).includes(key)),
    );
    program = require('../../index');
  });
  return { program, engine: engine!, resources };
}

describe('a node moved in the stack file without npm run node -- move', () => {
  const config = sshValidatorStack();
  const here = nodePlace(loadTestnet(config).nodes[0]);
  const elsewhere = 'ssh operator@190.51.100.99:22';
  afterEach(() => delete process.env[MOVING_NODE_VARIABLE]);

  /** Expects index.ts with `stackConfig`, its last run having `node` at `elsewhere`, refused in one line. */
  async function expectRefused(stackConfig: Record<string, unknown>, node: string, to: string) {
    const { program, engine, resources } = loadProgram(stackConfig, { [node]: { place: elsewhere } });
    const error = await program().catch((e: unknown) => e);
    expect(engine.RunError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      `node ${node} changed place in the stack file (${elsewhere} -> ${to}): pulumi up would start it there while ` +
        `it still runs at ${elsewhere} (two nodes, one key); move it with npm run node -- move --stack testnet --node ${node}`,
    );
    await flush();
    // Nothing declared but the read of the last outputs.
    expect(resources.map((r) => r.type)).toEqual(['pulumi:pulumi:StackReference']);
  }

  it('is refused in one line pointing at move, before any node resource is declared', async () => {
    await expectRefused(config, 'validator', here);
  });

  it('is refused on a stack of cluster nodes only, whose last run had the node on a machine', async () => {
    // The writer's entry written as a pod's by hand, `move` not run: the last run's outputs had it on a machine.
    const entry = { name: 'writer', typenode: 'writer', target: 'kubernetes' };
    const clusterOnly: Record<string, unknown> = {
      ...sshValidatorStack(entry),
      'lacchain:nodeKeys': { writer: KEY_ONE },
    };
    delete clusterOnly['lacchain:sshPrivateKey'];
    const inPod = nodePlace(loadTestnet(clusterOnly).nodes[0]);
    // Its values file made for the tests (the project's own gives example addresses, refused).
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-moved-'));
    const values = path.join(work, 'writer.yml');
    fs.writeFileSync(values, yaml.dump(valuesFor('testnet', 'writer')));
    try {
      await expectRefused({ ...clusterOnly, 'lacchain:nodes': [{ ...entry, values }] }, 'writer', inPod);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it("the move's own run goes through, and records the new place", async () => {
    process.env[MOVING_NODE_VARIABLE] = 'validator';
    const { program } = loadProgram(config, { validator: { place: elsewhere } });
    const outputs = (await program()) as { nodes: Record<string, { place: string }> };
    expect(outputs.nodes.validator.place).toBe(here);
    await settled();
  });

  it('a run where the node stayed, or a stack never deployed, goes through', async () => {
    for (const last of [{ validator: { place: here } }, undefined]) {
      const { program, resources } = loadProgram(config, last);
      await program();
      await settled();
      expect(resources.some((r) => r.type === 'command:remote:Command')).toBe(true);
    }
  });
});

/**
 * How `pulumi up` runs the program: through `@pulumi/pulumi/cmd/run` with ts-node, as the language host starts it,
 * against the engine stand-in (tools/programRun). ts-node must only transpile (type checks belong to `npm run build`;
 * `pulumi up` runs the program twice), and a stack loads only the provider SDKs its nodes use.
 */
import { runProgram } from '../../tools/programRun/run';
import { PROJECT_DIR } from '../../testing/run';
import { FAKE_SSH_KEY, TEST_GENESIS_FILE, sshValidatorEntry, TEST_COMPANIONS } from '../../testing/fixtures';

jest.setTimeout(120_000);

const run = (nodes: unknown[], extra: Record<string, string> = {}) =>
  runProgram({
    dir: PROJECT_DIR,
    stack: 'testnet',
    config: { 'lacchain:network': 'open-protestnet', 'lacchain:nodes': JSON.stringify(nodes), ...extra },
    secretKeys: Object.keys(extra),
    genesisFile: TEST_GENESIS_FILE,
  });

describe('the program as pulumi up runs it', () => {
  it('an SSH-only stack: transpiled only, @pulumi/kubernetes never loaded', async () => {
    const result = await run([sshValidatorEntry()], {
      'lacchain:sshPrivateKey': FAKE_SSH_KEY,
      'lacchain:companions': JSON.stringify(TEST_COMPANIONS),
    });
    expect(result.outputs.runtime).toEqual({ loadedSdks: ['command', 'random'], typeChecked: false });
    expect(result.resources).toBeGreaterThan(5);
  });

  it('a cluster-only stack with an imported key: neither @pulumi/command nor @pulumi/random loaded', async () => {
    const result = await run([{ name: 'writer', typenode: 'writer', target: 'kubernetes' }], {
      'lacchain:nodeKeys': JSON.stringify({ writer: `0x${'0'.repeat(63)}1` }),
    });
    expect(result.outputs.runtime).toEqual({ loadedSdks: ['kubernetes'], typeChecked: false });
  });
});

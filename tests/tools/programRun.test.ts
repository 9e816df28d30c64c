/**
 * How `pulumi up` runs the program: through `@pulumi/pulumi/cmd/run` as the language host starts it (Pulumi.yaml's
 * `typescript: false`: main.js), against the engine stand-in (tools/programRun). The program runs from its build
 * (made by npm install) while it is current, from its sources through ts-node, transpiling only, when they are newer;
 * a stack loads only the provider SDKs its nodes use.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { ProgramRunError, runProgram } from '../../tools/programRun/run';
import { ensureBuilt, PROJECT_DIR } from '../../testing/run';
import {
  FAKE_SSH_KEY,
  TEST_GENESIS_FILE,
  sshValidatorEntry,
  TEST_COMPANIONS,
  TEST_BACKUP_IMAGE_DIGESTS,
  TEST_KEY_IMAGE_DIGESTS,
} from '../../testing/fixtures';
import { valuesFor } from '../../testing/values';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(120_000);

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { staleBuild } = require('../../launcher.js') as { staleBuild(dir: string, entry: string): string | undefined };

beforeAll(() => {
  ensureBuilt();
});

const run = (nodes: unknown[], extra: Record<string, string> = {}, throughTsNode = false) =>
  runProgram({
    dir: PROJECT_DIR,
    stack: 'testnet',
    config: { 'lacchain:network': 'open-protestnet', 'lacchain:nodes': JSON.stringify(nodes), ...extra },
    secretKeys: Object.keys(extra),
    genesisFile: TEST_GENESIS_FILE,
    throughTsNode,
  });

describe('the program as pulumi up runs it', () => {
  const work = workFolder('lacchain-program-run-');
  /** The cluster writer, its values file outside the project (the stock one gives example addresses, refused). */
  const writer = () => {
    const values = path.join(work, 'writer.yml');
    fs.writeFileSync(values, yaml.dump(valuesFor('testnet', 'writer')));
    return { name: 'writer', typenode: 'writer', target: 'kubernetes', values };
  };
  it('an SSH-only stack: transpiled only, @pulumi/kubernetes never loaded', async () => {
    const result = await run([sshValidatorEntry()], {
      'lacchain:sshPrivateKey': FAKE_SSH_KEY,
      'lacchain:companions': JSON.stringify(TEST_COMPANIONS),
    });
    expect(result.outputs.runtime).toEqual({ compiled: true, loadedSdks: ['command', 'random'], typeChecked: false });
    expect(result.resources).toBeGreaterThan(5);
  });

  it('a cluster-only stack with an imported key: neither @pulumi/command nor @pulumi/random loaded', async () => {
    const result = await run([writer()], {
      'lacchain:nodeKeys': JSON.stringify({ writer: `0x${'0'.repeat(63)}1` }),
    });
    expect(result.outputs.runtime).toEqual({ compiled: true, loadedSdks: ['kubernetes'], typeChecked: false });
  });

  it('the same outputs through ts-node, transpiling only, as from the build', async () => {
    const nodes = [writer()];
    const built = await run(nodes);
    const sources = await run(nodes, {}, true);
    expect(sources.outputs.runtime).toEqual({
      compiled: false,
      loadedSdks: ['kubernetes', 'random'],
      typeChecked: false,
    });
    expect(sources.outputs.nodes).toEqual(built.outputs.nodes);
  });
});

describe("mainnet's mandatory rules, on every run of the program (no policy pack)", () => {
  const work = workFolder('lacchain-program-run-');

  /**
   * A mainnet validator on a cluster (its values file outside the project), its images that receive the key or touch
   * its data pinned or not.
   */
  const runValidator = (pinned: boolean) => {
    const valuesFile = path.join(work, `validator-${pinned ? 'pinned' : 'by-tag'}.yml`);
    const deploy = pinned ? { imageDigest: TEST_KEY_IMAGE_DIGESTS.besu, ...TEST_BACKUP_IMAGE_DIGESTS } : {};
    fs.writeFileSync(valuesFile, yaml.dump(valuesFor('mainnet', 'validator', deploy)));
    const companions = { rotationValidator: { imageDigest: TEST_KEY_IMAGE_DIGESTS.rotationValidator } };
    return runProgram({
      dir: PROJECT_DIR,
      stack: 'mainnet',
      config: {
        'lacchain:network': 'mainnet-omega',
        'lacchain:nodes': JSON.stringify([
          { name: 'validator', typenode: 'validator', target: 'kubernetes', values: valuesFile },
        ]),
        ...(pinned ? { 'lacchain:companions': JSON.stringify(companions) } : {}),
      },
      secretKeys: [],
      genesisFile: TEST_GENESIS_FILE,
    });
  };

  it('a key-holding image by tag: the run ends before any resource, naming the rule, the image and the fix', async () => {
    const error = await runValidator(false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProgramRunError);
    const fix =
      'pin it by its registry digest (values file deploy.imageDigest for Besu, lacchain:companions.<companion>.imageDigest for a companion; docs/kubernetes.md, "Pinning images")';
    expect((error as ProgramRunError).errors).toEqual([
      'the settings of stack mainnet cannot be deployed: they break mandatory policy rules (checked on every pulumi up, before anything is created or changed):\n' +
        `[node-key-images-pinned] StatefulSet validator-node: container backup-before-release-change touches the node's data (it mounts the data volume) but runs image restic/restic:0.18.1 by tag: pin it by its registry digest (values file deploy.backupImageDigest; docs/kubernetes.md, "Pinning images")\n` +
        `[node-key-images-pinned] StatefulSet validator-node: container validator-companion-state touches the node's data (it mounts the data volume) but runs image hyperledger/besu:23.4.1 by tag: pin it by its registry digest (values file deploy.imageDigest; docs/kubernetes.md, "Pinning images")\n` +
        `[node-key-images-pinned] StatefulSet validator-node: container validator-besu receives the node key but runs image hyperledger/besu:23.4.1 by tag: ${fix}\n` +
        `[node-key-images-pinned] StatefulSet validator-node: container validator-rotation-validator receives the node key but runs image lacnetnetworks/rotation-lacchain:1.0.0 by tag: ${fix}`,
    ]);
    // Only the stack itself, which the language host registers before the program runs.
    expect((error as ProgramRunError).resources.map((r) => r.type)).toEqual(['pulumi:pulumi:Stack']);
  });

  it('the same stack, its images pinned: every resource declared', async () => {
    const result = await runValidator(true);
    expect(result.resources).toBeGreaterThan(10);
    expect(Object.keys(result.outputs.nodes as object)).toEqual(['validator']);
  });
});

describe('main.js runs the build only while it is current', () => {
  const project = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-launcher-'));
    fs.mkdirSync(path.join(dir, 'core'));
    fs.writeFileSync(path.join(dir, 'index.ts'), '');
    fs.writeFileSync(path.join(dir, 'core', 'x.ts'), '');
    return dir;
  };
  const build = (dir: string, at: Date) => {
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'bin', 'index.js'), '');
    fs.writeFileSync(path.join(dir, 'bin', '.built'), '');
    fs.utimesSync(path.join(dir, 'bin', '.built'), at, at);
  };

  it('no build: the sources', () => {
    expect(staleBuild(project(), 'index')).toBe('the program is not built');
  });

  it('a build newer than every source: the build', () => {
    const dir = project();
    build(dir, new Date(Date.now() + 60_000));
    expect(staleBuild(dir, 'index')).toBeUndefined();
  });

  it('a source edited after the build: the sources', () => {
    const dir = project();
    build(dir, new Date(Date.now() - 60_000));
    expect(staleBuild(dir, 'index')).toBe('the build in bin/ is older than the sources');
  });
});

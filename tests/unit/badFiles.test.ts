/**
 * Files that are not settings files: a folder, a huge file, a YAML alias bomb, a private key or a system file given
 * by mistake. Each gets one line naming the file, quickly and in bounded memory, never a stack trace, and never shows
 * the file's contents. The genesis too: a local copy that is a folder, and a download that never answers.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { loadStack } from '../../core/settings/load';
import { SettingsError } from '../../core/settings/problems';
import { readFileFromDisk, readStackConfigFile, MAX_SETTINGS_FILE_BYTES } from '../../core/settings/settingsFiles';
import { GenesisError, loadGenesis } from '../../core/genesis';
import { rawConfig, TEST_GENESIS, validTestnetConfig, validWriterValues } from '../../testing/fixtures';
import { workFolder } from '../../testing/workFolder';

const dir = workFolder('lacchain-badfiles-');

const PRIVATE_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n';
const SHADOW = 'root:$6$saltsalt$c2VjcmV0aGFzaA:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n';
/** Nine levels of ten aliases each: 10^9 values once followed. */
const ALIAS_BOMB = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdefghi'.split('').map((l, i) => {
    const prev = 'abcdefghi'[i];
    return `${l}: &${l} [${Array(10).fill(`*${prev}`).join(',')}]`;
  }),
].join('\n');

/** The problems of a testnet stack whose writer values file is `values/writer.yml` under `dir`, written by `write`. */
function valuesProblems(write: (file: string) => void): string {
  const project = fs.mkdtempSync(path.join(dir, 'project-'));
  fs.mkdirSync(path.join(project, 'values'));
  write(path.join(project, 'values', 'writer.yml'));
  try {
    loadStack('testnet', { ...rawConfig(validTestnetConfig()), baseDir: project }, readFileFromDisk);
  } catch (error) {
    if (error instanceof SettingsError) return error.message;
    throw error;
  }
  throw new Error('expected the settings to be refused');
}

describe('a values file that is not a settings file', () => {
  it.each([
    ['a folder', (f: string) => fs.mkdirSync(f), 'a file that is a folder, not a file'],
    [
      'a huge file',
      (f: string) => fs.writeFileSync(f, 'x'.repeat(MAX_SETTINGS_FILE_BYTES + 1)),
      `a file that has ${MAX_SETTINGS_FILE_BYTES + 1} bytes, more than the ${MAX_SETTINGS_FILE_BYTES} a settings file may have`,
    ],
    [
      'an alias bomb',
      (f: string) => fs.writeFileSync(f, `deploy:\n  ${ALIAS_BOMB.split('\n').join('\n  ')}\n`),
      'a document of more than 100000 values',
    ],
    [
      'a private key',
      (f: string) => fs.writeFileSync(f, PRIVATE_KEY),
      'a document that is not a mapping (contents not shown)',
    ],
    [
      '/etc/shadow',
      (f: string) => fs.writeFileSync(f, SHADOW),
      'a document with none of the fields deploy (contents not shown)',
    ],
  ])('%s: one line naming the file, contents never shown', (_what, write, given) => {
    const message = valuesProblems(write);
    expect(message.split('\n')).toEqual([expect.stringContaining(`values/writer.yml: (file): ${given}`)]);
    expect(message).not.toMatch(/b3BlbnNzaC1|saltsalt|lol/);
  });

  it('a good values file still loads', () => {
    expect(() => valuesProblems((f) => fs.writeFileSync(f, yaml.dump(validWriterValues())))).toThrow(
      'expected the settings to be refused',
    );
  });
});

describe('a stack file that is not a settings file', () => {
  it.each([
    ['an alias bomb', `config:\n  ${ALIAS_BOMB.split('\n').join('\n  ')}\n`, 'a document of more than 100000 values'],
    ['a private key', PRIVATE_KEY, 'a document that is not a mapping (contents not shown)'],
  ])('%s: one line naming the file', (_what, text, given) => {
    const file = path.join(dir, `Pulumi.${_what.replace(/\W/g, '')}.yaml`);
    fs.writeFileSync(file, text);
    expect(() => readStackConfigFile(file)).toThrow(SettingsError);
    expect(() => readStackConfigFile(file)).toThrow(`: (file): ${given}`);
  });
});

describe('the genesis', () => {
  it('a local copy that is a folder is refused in one line', async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'genesis-'));
    await expect(loadGenesis(TEST_GENESIS, { file: folder })).rejects.toThrow(
      new GenesisError(`genesis file ${folder} is a folder, not a file`),
    );
  });

  it('a download that never answers ends at its time limit', async () => {
    const silent = ((_url: string, init?: RequestInit) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
      )) as unknown as typeof fetch;
    await expect(loadGenesis(TEST_GENESIS, { fetch: silent, timeoutMs: 200 })).rejects.toThrow(
      /cannot download the genesis from \S+ \(no answer within 0\.2 s\)/,
    );
  });
});

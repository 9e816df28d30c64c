/**
 * The front door of every command-line tool: `--help` with its usage, operations, options and examples; a mistake in
 * the command line is one line naming the word given and the closest valid one (exit 2); an option that does not
 * apply to the operation is refused.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { PROJECT_DIR, runNpm } from '../../testing/run';
import { closest } from '../../core/didYouMean';

const TOOLS = ['node', 'init', 'plan', 'keygen', 'identity', 'monitoring'];

/** A usage error: exit 2, one line on stderr starting with `error:`, nothing on stdout. */
function expectOneLineError(result: { code: number; stdout: string; stderr: string }, pattern: RegExp): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(/^error: /);
  expect(result.stderr).toMatch(pattern);
}

describe.each(TOOLS)('npm run %s -- --help', (tool) => {
  it('prints the usage, every option with its meaning and at least two examples, and exits 0', () => {
    for (const flag of ['--help', '-h']) {
      const result = runNpm(tool, [flag], { viaNpm: true });
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      // One way for every tool: --silent, so that npm adds no lines of its own to the tool's output.
      expect(result.stdout).toMatch(new RegExp(`^usage: npm run --silent ${tool} -- `));
      const examples = result.stdout.split('Examples:\n')[1] ?? '';
      expect(examples.match(new RegExp(`^  npm run --silent ${tool} -- `, 'gm'))?.length ?? 0).toBeGreaterThanOrEqual(
        2,
      );
      const options = result.stdout.split('Options:\n')[1].split('\n\n')[0].split('\n');
      options.forEach((line, i) => {
        // An option with its meaning on the same line, or on the next one when its name is long.
        if (/^ {2}--/.test(line) && !/\S {2,}\S/.test(line)) expect(options[i + 1]).toMatch(/^ {20,}\S/);
        else expect(line).toMatch(/\S {2,}\S|^ {20,}\S/);
      });
    }
  });

  it('names an unknown option and the closest valid one', () => {
    const result = runNpm(tool, ['--stak', 'testnet']);
    expectOneLineError(result, /unknown option "--stak"/);
    if (tool !== 'keygen' && tool !== 'identity') expect(result.stderr).toMatch(/did you mean --stack\?/);
  });
});

describe('npm run node: operations and options', () => {
  it('lists each operation in its help', () => {
    const help = runNpm('node', ['--help']).stdout;
    for (const op of ['status', 'logs', 'start', 'restart', 'check', 'backup', 'backups', 'restore', 'rollback']) {
      expect(help).toMatch(new RegExp(`^ {2}${op} +\\S`, 'm'));
    }
  });

  it('names an unknown operation and the closest one', () => {
    expectOneLineError(
      runNpm('node', ['frobnicate', '--stack', 'testnet']),
      /unknown operation "frobnicate"; allowed: status, logs/,
    );
    expectOneLineError(
      runNpm('node', ['statsu', '--stack', 'testnet']),
      /unknown operation "statsu" \(did you mean status\?\)/,
    );
  });

  it('refuses an option that does not apply to the operation', () => {
    expectOneLineError(runNpm('node', ['logs', '--stack', 'testnet', '--fix']), /--fix is for check only, not logs/);
    expectOneLineError(runNpm('node', ['check', '--stack', 'testnet', '--follow']), /--follow is for logs only/);
    expectOneLineError(runNpm('node', ['backup', '--stack', 'testnet', '--all']), /--all is for status only/);
  });

  it("says a value is missing without the parser's advice about positionals", () => {
    const result = runNpm('node', ['status', '--stack']);
    expectOneLineError(result, /--stack needs a value/);
    expect(result.stderr).not.toMatch(/positional/);
  });

  it('refuses a stack name as a mistake in the command line, not in the settings', () => {
    const result = runNpm('node', ['status', '--stack', 'foo']);
    expectOneLineError(result, /--stack: given "foo"; allowed: mainnet \(mainnet-omega\) or testnet/);
    expect(result.stderr).not.toMatch(/settings cannot be deployed/);
    expectOneLineError(runNpm('init', ['--stack', 'foo']), /--stack: given "foo"/);
  });

  it.each([
    ['node', ['status']],
    ['init', []],
    ['plan', ['--out', 'plan-tesnet']],
    ['monitoring', []],
  ])('npm run %s: a mistyped stack name gets the closest one', (tool, args) => {
    const result = runNpm(tool, [...args, '--stack', 'tesnet']);
    expectOneLineError(result, /--stack: given "tesnet" \(did you mean testnet\?\); allowed: /);
  });

  it('suggests --all when a status of a stack of several nodes names no node', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-cli-'));
    try {
      const config = path.join(dir, 'Pulumi.testnet.yaml');
      fs.writeFileSync(
        config,
        [
          'config:',
          '  lacchain:network: open-protestnet',
          '  lacchain:sshPrivateKey:',
          '    secure: v1:c3NoLWtleQ==',
          '  lacchain:companions:',
          '    relaySigner: { enabled: false }',
          '    ethstats: { enabled: false }',
          '  lacchain:nodes:',
          ...['one', 'two'].flatMap((name, i) => [
            `    - name: ${name}`,
            '      typenode: writer',
            '      target: ssh',
            '      inventory:',
            `        host: 190.51.100.${i + 1}`,
            `        node_ip: 190.51.100.${i + 1}`,
            '        host_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl',
            `        node_name: org-${name}`,
            '        node_email: ops@example.org',
          ]),
          '',
        ].join('\n'),
      );
      const result = runNpm('node', ['status', '--stack', 'testnet', '--config', config]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /--node is required: stack testnet has the nodes one, two; give --node NAME, or --all/,
      );
      const typo = runNpm('node', ['status', '--stack', 'testnet', '--config', config, '--node', 'tow']);
      expect(typo.stderr).toMatch(/--node: given "tow" \(did you mean two\?\); allowed: one, two/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('closest', () => {
  it('finds a near word and nothing for an unrelated one', () => {
    expect(closest('statsu', ['status', 'start'])).toBe('status');
    expect(closest('rollbak', ['restore', 'rollback'])).toBe('rollback');
    expect(closest('frobnicate', ['status', 'logs', 'start'])).toBeUndefined();
  });
});

describe('npm run docs -- --help', () => {
  it('starts from its build, as the other tools do (no ts-node note), and names a mistyped option', () => {
    const help = runNpm('docs', ['--help']);
    expect([help.code, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(/^usage: npm run --silent docs -- \[--check\]/);
    expectOneLineError(runNpm('docs', ['--chekc']), /unknown option "--chekc".*did you mean --check\?/);
  });
});

describe('npm run bench -- --help', () => {
  it('prints the usage, the parts and the options, and exits 0; an unknown option is a usage error', () => {
    const help = runNpm('bench', ['--help']);
    expect([help.code, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(/^usage: npm run --silent bench -- \[--only /);
    for (const option of ['--only PART', '--runs N', '--before REF', '--help']) expect(help.stdout).toContain(option);
    const wrong = runNpm('bench', ['--onyl', 'cli']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^error: .*--onyl/);
  });
});

describe('what --help loads (issue 67, item 3: a tool starts within 2x of npm; bench/cli.ts measures it)', () => {
  /** The packages and project files `node launcher.js <entry> --help` loads, as the require cache holds them at exit. */
  function loadedByHelp(entry: string): string[] {
    const hook = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-loaded-')), 'loaded.js');
    fs.writeFileSync(
      hook,
      "process.on('exit', () => process.stderr.write(JSON.stringify(Object.keys(require.cache)) + '\\n'));\n",
    );
    const result = spawnSync(process.execPath, ['-r', hook, 'launcher.js', entry, '--help'], {
      cwd: PROJECT_DIR,
      encoding: 'utf8',
    });
    fs.rmSync(path.dirname(hook), { recursive: true, force: true });
    expect(result.status).toBe(0);
    const files = JSON.parse(result.stderr.trim().split('\n').pop()!) as string[];
    return files.map((file) => path.relative(PROJECT_DIR, file));
  }

  it.each([
    'cli/keygen',
    'cli/identity',
    'cli/node',
    'cli/plan',
    'cli/init',
    'cli/monitoring',
    'cli/docs',
    'bench/run',
  ])(
    '%s: its build, no TypeScript compiler, no settings rules (zod), no curves, no YAML, none of its work',
    (entry) => {
      const loaded = loadedByHelp(entry);
      expect(loaded).toContain(path.join('bin', `${entry}.js`));
      const heavy = loaded.filter((file) =>
        /node_modules\/(typescript|ts-node|zod|@noble|@pulumi|js-yaml|yaml)\/|^bin\/cli\/[^/]+\/run\.js$|^bench\/|^testing\//.test(
          file,
        ),
      );
      expect(heavy).toEqual([]);
    },
  );
});

describe('a private key given on the command line', () => {
  /** A private key's shape, as `cat ~/.ssh/id_ed25519` prints it (its body made up). */
  const body = 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW';
  const pem = `-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n-----END OPENSSH PRIVATE KEY-----`;
  const nodeKey = `0x${'5e'.repeat(32)}`;

  it.each([
    [
      'init',
      ['--stack', 'testnet', '--host-key', pem],
      /^error: --host-key: given what looks like a private key \(not shown.*allowed: host_key: The machine's SSH host key, e\.g\. from ssh-keyscan/,
    ],
    [
      'init',
      ['--stack', 'testnet', `--host-key=${pem}`],
      /^error: --host-key: given what looks like a private key \(not shown/,
    ],
    [
      'keygen',
      ['--out', '/tmp/k', '--host', nodeKey],
      /^error: --host: given what looks like a private key \(not shown.*allowed: the node's public IP/,
    ],
    ['identity', [pem], /^error: given what looks like a private key \(not shown.*--help lists what it takes/],
    ['node', ['status', '--stack', 'testnet', '--node', pem], /^error: --node: given what looks like a private key/],
  ])('npm run %s: refused without echoing it, saying what the option takes', (tool, args, message) => {
    const result = runNpm(tool, args as string[]);
    expectOneLineError(result, message as RegExp);
    expect(result.stderr).not.toContain(body);
    expect(result.stderr).not.toContain('5e5e5e');
  });
});

describe('a tool run before npm install', () => {
  /** What a tool says in a fresh clone (the launcher, package.json and `folders`; no node_modules, no build). */
  function inFreshClone(folders: string[], command: string, args: string[], env = process.env) {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-fresh-'));
    try {
      for (const file of ['launcher.js', 'package.json'])
        fs.copyFileSync(path.join(PROJECT_DIR, file), path.join(fresh, file));
      for (const folder of folders)
        fs.cpSync(path.join(PROJECT_DIR, folder), path.join(fresh, folder), { recursive: true });
      const result = spawnSync(command, args, { cwd: fresh, encoding: 'utf8', env });
      return { fresh, status: result.status, stdout: result.stdout, stderr: result.stderr };
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  }
  const notInstalled = (fresh: string) =>
    `error: the project's packages are not installed in ${fresh} (no @pulumi/pulumi): run npm install first, there\n`;

  it('says in one line to run npm install first (exit 2), not a stack trace about ts-node', () => {
    const result = inFreshClone(['cli'], 'node', ['launcher.js', 'cli/init', '--stack', 'testnet']);
    expect(result.stderr).toBe(notInstalled(result.fresh));
    expect([result.status, result.stdout]).toEqual([2, '']);
  });

  it('npm run bench too: one line naming npm install, not ts-node: not found', () => {
    // As the operator runs it: npm finds no ts-node there, as in a clone before npm install.
    const PATH = (process.env.PATH ?? '')
      .split(':')
      .filter((p) => !p.includes('node_modules'))
      .join(':');
    const result = inFreshClone(['bench'], 'npm', ['run', '--silent', 'bench', '--', '--only', 'cli'], {
      ...process.env,
      PATH,
    });
    expect(result.stderr).toBe(notInstalled(result.fresh));
    expect([result.status, result.stdout]).toEqual([2, '']);
  });

  it('is not where the README leads: its first command is npm install, before the stack and the first steps', () => {
    const readme = fs.readFileSync(path.join(PROJECT_DIR, 'README.md'), 'utf8');
    const commands = [...readme.matchAll(/```sh\n([^`]*)```/g)].map((m) => m[1].trim());
    expect(commands[0]).toBe('npm install');
    const createStack = commands.findIndex((c) => c.includes('pulumi stack select --create'));
    const firstTool = commands.findIndex((c) => /^npm run /m.test(c));
    expect(createStack).toBeGreaterThan(0);
    expect(firstTool).toBeGreaterThan(createStack);
  });
});

describe('a reader that stops early', () => {
  it.each([...TOOLS, 'docs', 'bench'])(
    'ends npm run %s -- --help quietly when the reader has gone before the help is written',
    (tool) => {
      // `true` reads nothing and exits at once: the help is written to a closed pipe, as `| head` of a long text does.
      const result = spawnSync('bash', ['-c', `npm run --silent ${tool} -- --help | true; exit "\${PIPESTATUS[0]}"`], {
        cwd: PROJECT_DIR,
        encoding: 'utf8',
      });
      expect(result.stderr).not.toMatch(/EPIPE|Error/);
      expect(result.status).toBe(0);
    },
  );

  it('ends the tool quietly (npm run init … | head -1): no EPIPE stack trace, exit 0', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-epipe-'));
    for (const file of ['Pulumi.yaml', 'Pulumi.testnet.yaml'])
      fs.copyFileSync(path.join(PROJECT_DIR, file), path.join(dir, file));
    fs.cpSync(path.join(PROJECT_DIR, 'values'), path.join(dir, 'values'), { recursive: true });
    const init = [
      'npm run --silent init -- --dir "$1" --stack testnet --typenode 0 --network 1 --target ssh --host 190.51.100.7',
      '--node-name org-validator --node-email ops@example.org --user ubuntu --keygen no --name v9',
    ].join(' ');
    const result = spawnSync('bash', ['-c', `${init} | head -1; exit "\${PIPESTATUS[0]}"`, 'bash', dir], {
      cwd: PROJECT_DIR,
      encoding: 'utf8',
    });
    fs.rmSync(dir, { recursive: true, force: true });
    expect(result.stderr).not.toMatch(/EPIPE|Error/);
    expect(result.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(result.status).toBe(0);
  });
});

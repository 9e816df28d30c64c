/**
 * The ethstats-cli stand-in (a test fixture the end-to-end tests run in place of the real monitoring client) behaves as
 * the real client does where our unit relies on it: registration once, the configstore file kept private, login with
 * the stored secret, the flag refusals; and its OCI image archive is consistent. Run against the server stand-in.
 */
import { execFileSync, spawn } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import { EthstatsServer, startEthstatsServer } from '../../testing/ethstatsServer';
import { buildEthstatsStandin, buildEthstatsStandinImage } from '../../testing/ociImage';

jest.setTimeout(60_000);

let work: string;
let binary: string;
let server: EthstatsServer;

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'ethstats-standin-'));
  binary = await buildEthstatsStandin(work);
  server = await startEthstatsServer('127.0.0.1');
}, 120_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

const configFile = (home: string) => path.join(home, 'configstore', 'ethstats-cli.json');
const readConfig = (home: string) => JSON.parse(fs.readFileSync(configFile(home), 'utf8'));
const newHome = () => fs.mkdtempSync(path.join(work, 'state-'));
const sentBy = (name: string, topic: string, from = 0) =>
  server.messages.slice(from).filter((m) => m.topic === topic && m.payload.nodeName === name);

const registerArgs = (name: string, url = server.url) => [
  '-v',
  '-d',
  '--register',
  '--account-email',
  'ops@example.org',
  '--node-name',
  name,
  '--server-url',
  url,
  '--client-url',
  'ws://127.0.0.1:4546',
];

/**
 * Runs the stand-in with XDG_CONFIG_HOME=home until it exits, or until `done` holds (then SIGTERM). Checks that its
 * output holds none of the secret keys the server handed out.
 */
async function runStandin(args: string[], home: string, done: () => boolean = () => false) {
  const run = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(binary, args, { env: { PATH: process.env.PATH, HOME: work, XDG_CONFIG_HOME: home } });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const poll = setInterval(() => done() && child.kill('SIGTERM'), 50);
    const limit = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('close', (code) => {
      clearInterval(poll);
      clearTimeout(limit);
      resolve({ code, output });
    });
  });
  const secrets = [...server.registered().values()];
  expect(secrets.filter((secret) => run.output.includes(secret))).toEqual([]);
  return run;
}

/** Registers `name` in a new state folder and stops the stand-in after its first stats; returns the folder. */
async function registered(name: string): Promise<{ home: string; output: string }> {
  const home = newHome();
  const from = server.messages.length;
  const run = await runStandin(registerArgs(name), home, () => sentBy(name, 'stats', from).length > 0);
  expect(run.code).toBe(0);
  return { home, output: run.output };
}

it('registers on the first run, keeps the secret in a private file, logs in and sends stats', async () => {
  const from = server.messages.length;
  const { home, output } = await registered('node-one');
  const secret = server.registered().get('node-one');
  expect(secret).toMatch(/^[0-9a-f]{40}$/);
  expect(output).toMatch(/registered as node-one\n/);
  expect(output).toMatch(/logged in as node-one\n/);
  expect(fs.statSync(path.dirname(configFile(home))).mode & 0o777).toBe(0o700);
  expect(fs.statSync(configFile(home)).mode & 0o777).toBe(0o600);
  expect(readConfig(home)).toEqual({
    firstRun: false,
    nodeName: 'node-one',
    secretKey: secret,
    server: { url: server.url },
    client: { url: 'ws://127.0.0.1:4546' },
  });
  expect(sentBy('node-one', 'registerNode', from).map((m) => m.payload)).toEqual([
    { accountEmail: 'ops@example.org', nodeName: 'node-one' },
  ]);
  expect(sentBy('node-one', 'login', from).map((m) => m.payload)).toEqual([
    { nodeName: 'node-one', secretKey: secret, client: 'ws://127.0.0.1:4546' },
  ]);
});

it('does not register again once registered: it logs in with the stored secret', async () => {
  const { home } = await registered('node-two');
  const from = server.messages.length;
  const again = await runStandin(registerArgs('node-two'), home, () => sentBy('node-two', 'stats', from).length > 0);
  expect(again.code).toBe(0);
  expect(again.output).toContain('Client already registered');
  expect(sentBy('node-two', 'registerNode', from)).toEqual([]);
  expect(sentBy('node-two', 'login', from).map((m) => m.payload.secretKey)).toEqual([
    server.registered().get('node-two'),
  ]);
});

it('registers a second node of the same name as <name>-xxxxx', async () => {
  await registered('shared-name');
  const home = newHome();
  const from = server.messages.length;
  const args = ['-v', '--register', '--account-email=ops@example.org', '--node-name=shared-name'];
  const run = await runStandin([...args, `--server-url=${server.url}`], home, () =>
    server.messages.slice(from).some((m) => m.topic === 'stats'),
  );
  expect(run.code).toBe(0);
  const name = readConfig(home).nodeName;
  expect(name).toMatch(/^shared-name-[a-z0-9]{5}$/);
  expect(run.output).toContain(`registered as ${name}\n`);
  expect(readConfig(home).secretKey).toBe(server.registered().get(name));
});

it.each([
  [['--node-name', 'lonely'], /--account-email and --node-name need --register/],
  [['--account-email', 'ops@example.org'], /--account-email and --node-name need --register/],
  [['--register', '--node-name', 'lonely'], /--register needs both --account-email and --node-name/],
  [['--register', '--account-email=ops@example.org'], /--register needs both --account-email and --node-name/],
  [[], /not registered: run once with --register/],
])('refuses %j', async (args, message) => {
  const home = newHome();
  const from = server.messages.length;
  const run = await runStandin([...args, '--server-url', server.url], home);
  expect(run.code).toBe(1);
  expect(run.output).toMatch(message);
  expect(server.messages.length).toBe(from);
  expect(fs.existsSync(configFile(home))).toBe(false);
});

it('exits non-zero when the stored secret is wrong', async () => {
  const { home } = await registered('node-wrong');
  const config = readConfig(home);
  fs.writeFileSync(configFile(home), JSON.stringify({ ...config, secretKey: 'f'.repeat(40) }));
  const run = await runStandin(registerArgs('node-wrong'), home);
  expect(run.code).toBe(1);
  expect(run.output).toMatch(/login failed/);
});

it('exits non-zero when the server goes away', async () => {
  const own = await startEthstatsServer('127.0.0.1');
  const home = newHome();
  const run = await runStandin(registerArgs('node-alone', own.url), home, () => {
    if (own.messages.some((m) => m.topic === 'stats')) void own.close();
    return false;
  });
  expect(run.code).toBe(1);
  expect(run.output).toMatch(/stats: server can't be reached/);
});

it('packs an OCI image archive whose digests are consistent, the same on every build', async () => {
  const [first, second] = [newHome(), newHome()];
  const image = await buildEthstatsStandinImage(first);
  expect((await buildEthstatsStandinImage(second)).digest).toBe(image.digest);
  expect(image.reference).toBe('localhost/ethstats-cli-standin');
  expect(fs.readdirSync(first)).toEqual([path.basename(image.archive)]);

  const layout = fs.mkdtempSync(path.join(work, 'layout-'));
  execFileSync('tar', ['-xf', image.archive, '-C', layout]);
  const sha256 = (data: Buffer) => `sha256:${crypto.createHash('sha256').update(data).digest('hex')}`;
  const blob = (descriptor: { digest: string; size: number }) => {
    const data = fs.readFileSync(path.join(layout, 'blobs', 'sha256', descriptor.digest.replace(/^sha256:/, '')));
    expect(sha256(data)).toBe(descriptor.digest);
    expect(data.length).toBe(descriptor.size);
    return data;
  };
  expect(JSON.parse(fs.readFileSync(path.join(layout, 'oci-layout'), 'utf8'))).toEqual({ imageLayoutVersion: '1.0.0' });
  const index = JSON.parse(fs.readFileSync(path.join(layout, 'index.json'), 'utf8'));
  expect(index.manifests).toHaveLength(1);
  expect(index.manifests[0].digest).toBe(image.digest);
  expect(index.manifests[0].annotations).toEqual({
    'org.opencontainers.image.ref.name': 'localhost/ethstats-cli-standin:test',
  });
  const manifest = JSON.parse(blob(index.manifests[0]).toString('utf8'));
  expect(manifest.mediaType).toBe('application/vnd.oci.image.manifest.v1+json');
  const config = JSON.parse(blob(manifest.config).toString('utf8'));
  expect(config).toMatchObject({ architecture: 'amd64', os: 'linux' });
  expect(config.config).toMatchObject({ Entrypoint: ['./bin/ethstats-cli.js', '-vd'], WorkingDir: '/ethstats-cli' });
  expect(manifest.layers).toHaveLength(1);
  const layerTar = zlib.gunzipSync(blob(manifest.layers[0]));
  expect(config.rootfs).toEqual({ type: 'layers', diff_ids: [sha256(layerTar)] });

  fs.writeFileSync(path.join(layout, 'layer.tar'), layerTar);
  const listing = execFileSync('tar', ['-tvf', path.join(layout, 'layer.tar'), '--numeric-owner'], {
    encoding: 'utf8',
  });
  expect(listing).toMatch(/^-rwxr-xr-x 0\/0 +\d+ \S+ \S+ ethstats-cli\/bin\/ethstats-cli\.js$/m);
  const program = execFileSync('tar', ['-xOf', path.join(layout, 'layer.tar'), 'ethstats-cli/bin/ethstats-cli.js'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(program.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
});

/**
 * `npm run monitoring` as an operator runs it: it writes the scrape configuration of the stack's machines and the
 * rules into the folder, one line per file written, says how each node is scraped and what is still to do; a saved
 * certificate is checked against the nodes' outputs; it refuses to put the token's file inside a repository, and
 * says so when nothing can be scraped. The configuration it writes is valid for Prometheus (promtool check config).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { PROJECT_DIR, runNpm } from '../../testing/run';
import { completedExample, writeProject } from '../../testing/examples';
import { secretSettings, sshValidatorStack } from '../../testing/fixtures';

const CERTIFICATE = path.join(PROJECT_DIR, 'tests/fixtures/monitoring/validator.crt');
const FINGERPRINT = 'C4:04:30:EB:DB:7B:B7:C8:63:C9:DB:79:A4:6D:E0:5B:FB:14:6B:BF:70:06:8A:2A:2F:29:E9:1A:52:49:F0:0C';
const PROMTOOL = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim();
const withPromtool = PROMTOOL || process.env.CI === 'true' ? it : it.skip;

let work: string;
let config: string;
beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-monitoring-'));
  config = path.join(work, 'Pulumi.testnet.yaml');
  const stack = sshValidatorStack(undefined, { 'lacchain:metricsToken': 'a'.repeat(64) });
  fs.writeFileSync(config, yaml.dump({ config: secretSettings(stack) }));
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** The tool's run, without the launcher's note that it runs the sources (while they are newer than the build). */
const run = (args: string[]) => {
  const result = runNpm('monitoring', args);
  return { ...result, stderr: result.stderr.replace(/^.*through ts-node.*\n/m, '') };
};
const monitoring = (args: string[]) => run(['--stack', 'testnet', '--config', config, ...args]);

describe('npm run monitoring', () => {
  it("writes the machines' scrape configuration and the rules, one line per file, and what is still to do", () => {
    const out = path.join(work, 'first');
    const result = monitoring(['--out', out]);
    expect([result.code, result.stderr]).toEqual([0, '']);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 2)).toEqual([
      `wrote ${out}/prometheus.yml: the scrape configuration of the machines validator`,
      `wrote ${out}/alerts.yml: the alert rules (as monitoring/alerts.yml)`,
    ]);
    expect(result.stdout).toContain(
      `save validator's certificate: openssl s_client -connect 190.51.100.7:9443 -showcerts </dev/null 2>/dev/null | openssl x509 > ${out}/validator.crt`,
    );
    expect(result.stdout).toContain(
      `(umask 077 && mkdir -p ${out} && pulumi config get lacchain:metricsToken --stack testnet > ${out}/metrics-token)`,
    );
    expect(fs.readdirSync(out).sort()).toEqual(['alerts.yml', 'prometheus.yml']);
    expect(fs.readFileSync(path.join(out, 'alerts.yml'), 'utf8')).toContain('alert: BesuNoPeers');
  });

  withPromtool('checks a saved certificate against the outputs; Prometheus takes what it wrote', () => {
    const out = path.join(work, 'checked');
    fs.mkdirSync(out);
    fs.copyFileSync(CERTIFICATE, path.join(out, 'validator.crt'));
    fs.writeFileSync(path.join(out, 'metrics-token'), 'a'.repeat(64), { mode: 0o600 });
    const outputs = path.join(work, 'nodes.json');
    fs.writeFileSync(outputs, JSON.stringify({ validator: { tlsCertificateSha256: FINGERPRINT } }));
    const result = monitoring(['--out', out, '--outputs', outputs]);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toContain(`(SHA-256 ${FINGERPRINT}, as its tlsCertificateSha256 output)`);
    expect(result.stdout).toMatch(/still to do:\n {2}1\. load them: prometheus --config\.file=/);
    const check = spawnSync(PROMTOOL || 'promtool', ['check', 'config', path.join(out, 'prometheus.yml')], {
      encoding: 'utf8',
    });
    expect([check.status, check.stdout + check.stderr]).toEqual([0, expect.stringContaining('SUCCESS: 9 rules found')]);

    fs.writeFileSync(outputs, JSON.stringify({ validator: { tlsCertificateSha256: `${'AB:'.repeat(31)}AB` } }));
    const refused = monitoring(['--out', out, '--outputs', outputs]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: .*validator\.crt: its SHA-256 fingerprint is C4:04:.*not the node's certificate/,
    );
  });

  it('needs no lacchain:sshPrivateKey, which it does not use (it logs in nowhere)', () => {
    const withoutKey = path.join(work, 'Pulumi.testnet.yaml.nokey');
    const stack = sshValidatorStack(undefined, { 'lacchain:metricsToken': 'a'.repeat(64) });
    delete stack['lacchain:sshPrivateKey'];
    fs.writeFileSync(withoutKey, yaml.dump({ config: secretSettings(stack) }));
    const result = run(['--stack', 'testnet', '--config', withoutKey, '--out', path.join(work, 'nokey')]);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toContain('prometheus.yml');
  });

  it("refuses to put the token's file inside a repository", () => {
    const result = monitoring(['--out', path.join(PROJECT_DIR, 'monitoring', 'testnet')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: the metrics token's file .* would be inside the git work tree/);
    expect(fs.existsSync(path.join(PROJECT_DIR, 'monitoring', 'testnet'))).toBe(false);
  });

  it('says so, and writes nothing, when no node can be scraped (the example testnet stack: a writer on a cluster)', () => {
    const out = path.join(work, 'stock');
    const config = writeProject(
      'testnet',
      completedExample('testnet', { pin: false }),
      fs.mkdtempSync(path.join(work, 'example-')),
    );
    const result = run(['--stack', 'testnet', '--config', config, '--out', out]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('writer (Kubernetes, namespace lacchain): not scraped');
    expect(result.stderr.trimEnd()).toBe(
      'error: nothing written: no node of stack testnet can be scraped yet (still to do, above)',
    );
    expect(fs.existsSync(out)).toBe(false);
  });

  it('prints a token recipe that works as printed, into a folder not made yet, leaving a file only its owner reads', () => {
    const withoutToken = path.join(work, 'Pulumi.testnet.yaml.notoken');
    fs.writeFileSync(withoutToken, yaml.dump({ config: secretSettings(sshValidatorStack()) }));
    const out = path.join(work, 'recipe', 'not-made-yet');
    const first = run(['--stack', 'testnet', '--config', withoutToken, '--out', out]);
    const recipe = /give the machines a metrics endpoint \([^)]*\): (.*), then pulumi up --stack testnet/.exec(
      first.stdout,
    )?.[1];
    expect(recipe).toMatch(/openssl rand -hex 32/);
    // pulumi as the recipe runs it: it reads the token on standard input (the stack itself is not at hand here).
    const bin = fs.mkdtempSync(path.join(work, 'bin-'));
    fs.writeFileSync(path.join(bin, 'pulumi'), '#!/bin/sh\ncat > /dev/null\n', { mode: 0o755 });
    const ran = spawnSync('sh', ['-c', recipe as string], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    });
    expect([ran.status, ran.stderr]).toEqual([0, '']);
    const token = path.join(out, 'metrics-token');
    expect(fs.readFileSync(token, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(fs.statSync(token).mode & 0o777).toBe(0o600);
    // With the token set, the file the recipe made is taken as it is: nothing to chmod.
    const second = monitoring(['--out', out]);
    expect([second.code, second.stderr]).toEqual([0, '']);
    expect(second.stdout).not.toMatch(/other users can read it|put the metrics token in/);
  });

  it('has --help, and needs --stack', () => {
    const help = run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run --silent monitoring -- --stack <testnet\|mainnet> \[--out DIR\]/);
    const missing = run([]);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/^error: --stack is required/)]);
  });
});

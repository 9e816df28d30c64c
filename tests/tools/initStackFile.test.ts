/**
 * The guided setup's first node in a shipped stack file: the file's commented examples (after `lacchain:nodes: []`)
 * stay outside the new node's settings, as written and after `pulumi config set --path` (the real Pulumi CLI, which
 * puts a comment that follows a block list inside its last entry, and later keys below it).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { stackFileText } from '../../cli/init/settingsFiles';
import { PROJECT_DIR } from '../../testing/run';

const INVENTORY = { host: '203.0.113.30', host_key: 'ssh-ed25519 AAAA', node_ip: '203.0.113.30', user: 'ubuntu' };

/** The stack file with a validator on a machine added, as `npm run init` writes it. */
function withFirstNode(stack: string): string {
  const file = `Pulumi.${stack}.yaml`;
  const shipped = fs.readFileSync(path.join(PROJECT_DIR, file), 'utf8');
  const network = (yaml.load(shipped) as { config: Record<string, string> }).config['lacchain:network'];
  return stackFileText(shipped, file, '', network, {
    name: 'validator',
    typenode: 'validator',
    target: 'ssh',
    inventory: INVENTORY,
    comment: ' validator: a node on a machine',
  });
}

/** The lines from `lacchain:nodes:` to the end: the node list, which must hold only the nodes and their own comments. */
const nodeListLines = (text: string) => text.slice(text.indexOf('  lacchain:nodes:')).trimEnd().split('\n');

/** The Pulumi CLI tools/pulumi-cli/build.sh made (tests/setup.sh), or undefined. */
function pulumiCli(): string | undefined {
  const result = spawnSync('bash', [path.join(PROJECT_DIR, 'tools/pulumi-cli/build.sh'), '--check'], {
    encoding: 'utf8',
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

describe.each(['testnet', 'mainnet'])('npm run init: the first node of the shipped Pulumi.%s.yaml', (stack) => {
  it('goes below the commented examples, which stay above lacchain:nodes', () => {
    const text = withFirstNode(stack);
    const list = nodeListLines(text);
    expect(list.filter((line) => /^\s*#/.test(line))).toEqual(['    # validator: a node on a machine']);
    expect(text.indexOf('# For example')).toBeGreaterThan(0);
    expect(text.indexOf('# For example')).toBeLessThan(text.indexOf('  lacchain:nodes:'));
    expect((yaml.load(text) as { config: Record<string, unknown> }).config['lacchain:nodes']).toEqual([
      { name: 'validator', typenode: 'validator', target: 'ssh', inventory: INVENTORY },
    ]);
  });

  const cli = pulumiCli();
  const withCli = cli || process.env.CI === 'true' ? it : it.skip;
  withCli("keeps the node's settings together after pulumi config set --path adds one", () => {
    if (!cli) throw new Error('no Pulumi CLI: tests/setup.sh builds it (tools/pulumi-cli/build.sh)');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-init-stack-'));
    try {
      fs.copyFileSync(path.join(PROJECT_DIR, 'Pulumi.yaml'), path.join(dir, 'Pulumi.yaml'));
      fs.writeFileSync(path.join(dir, `Pulumi.${stack}.yaml`), withFirstNode(stack));
      fs.mkdirSync(path.join(dir, 'state'));
      const env = {
        ...process.env,
        PULUMI_SKIP_UPDATE_CHECK: 'true',
        PULUMI_CONFIG_PASSPHRASE: 'a passphrase only this test uses',
        PULUMI_BACKEND_URL: `file://${dir}/state`,
      };
      for (const args of [
        ['stack', 'select', '--create', stack],
        ['config', 'set', '--path', 'lacchain:nodes[0].inventory.node_name', 'my-org-validator'],
      ]) {
        const result = spawnSync(cli, args, { cwd: dir, env, encoding: 'utf8' });
        expect([result.status, result.stderr.replace(/^Created stack .*\n/, '')]).toEqual([0, '']);
      }
      const text = fs.readFileSync(path.join(dir, `Pulumi.${stack}.yaml`), 'utf8');
      expect(nodeListLines(text).filter((line) => /^\s*#/.test(line))).toEqual([
        '    # validator: a node on a machine',
      ]);
      expect((yaml.load(text) as { config: Record<string, unknown> }).config['lacchain:nodes']).toEqual([
        {
          name: 'validator',
          typenode: 'validator',
          target: 'ssh',
          inventory: { ...INVENTORY, node_name: 'my-org-validator' },
        },
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

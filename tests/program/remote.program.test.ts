/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The SSH path under the recording engine: the ordered remote commands, what each one sends, which are secret, and
 * which run again when a setting changes.
 */
import { SECRET_PARAMETERS } from '../../core/remote/secretParameters';
import { createHash, createHmac } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { SCRIPTS_DIR } from '../../core/scripts';
import { REMOTE_STEP_NAMES } from '../../core/remote/steps';
import { stepCommand, STEP_END } from '../../core/remote/shell';
import { isWrappedSecret, settle, unwrapSecrets } from '../../tools/recording/engine';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram, Declared } from '../../testing/program';
import {
  FAKE_HOST_KEY,
  FAKE_SSH_KEY,
  KEY_ONE,
  sshValidatorEntry,
  sshValidatorStack,
  testPublicIp,
} from '../../testing/fixtures';

const recorded = recordProgram();

const sshStack = (inventory: Record<string, unknown> = {}, network = 'open-protestnet') =>
  sshValidatorStack(sshValidatorEntry(inventory), { 'lacchain:network': network });

const commandsOf = (declared: Declared) => declared.resources.filter((r) => r.type === 'command:remote:Command');
const inputs = (declared: Declared, step: string) =>
  unwrapSecrets(commandsOf(declared).find((r) => r.name === `validator-${step}`)!.inputs) as Record<string, any>;

describe('an SSH node', () => {
  let declared: Declared;
  beforeAll(async () => {
    declared = await declareProgram(recorded, 'testnet', sshStack(), {});
  });

  it('runs the steps in order, each after the one before', () => {
    // The engine records a resource once its inputs are known: the order is the dependencies', not the record's.
    const commands = commandsOf(declared);
    expect(commands.map((c) => c.name).sort()).toEqual(REMOTE_STEP_NAMES.map((s) => `validator-${s}`).sort());
    REMOTE_STEP_NAMES.forEach((step, i) => {
      const command = commands.find((c) => c.name === `validator-${step}`)!;
      expect(command.options.parent).toBe('validator');
      expect(command.options.dependsOn).toEqual(i === 0 ? [] : [`validator-${REMOTE_STEP_NAMES[i - 1]}`]);
    });
  });

  it('logs in as root with the secret SSH key, and sends nothing as SSH environment', () => {
    for (const command of commandsOf(declared)) {
      expect(
        isWrappedSecret(command.inputs.connection) || isWrappedSecret((command.inputs.connection as any).privateKey),
      ).toBe(true);
      const sent = unwrapSecrets(command.inputs) as Record<string, any>;
      expect(sent.connection).toMatchObject({ host: '190.51.100.7', port: 22, user: 'root', privateKey: FAKE_SSH_KEY });
      expect(sent.connection.hostKey).toBe(FAKE_HOST_KEY);
      expect(sent.create).toBe(stepCommand('root'));
      expect(sent.environment).toBeUndefined();
      expect(sent.addPreviousOutputInEnv).toBe(false);
    }
  });

  it("logs in with the operator's ssh agent when the stack stores no key: no key and no socket path in the connection", async () => {
    const config = sshStack();
    delete config['lacchain:sshPrivateKey'];
    const agent = await declareProgram(recorded, 'testnet', config, {});
    expect(agent.loaded.settings.sshAuthentication).toBe('agent');
    const commands = commandsOf(agent);
    expect(commands).toHaveLength(REMOTE_STEP_NAMES.length);
    for (const command of commands) {
      // The command provider's SDK keeps every connection secret; this one holds no key, and no socket path: the
      // provider reads SSH_AUTH_SOCK itself when it logs in (a new login session's path would run every step again).
      const connection = unwrapSecrets(command.inputs.connection) as Record<string, unknown>;
      expect(connection).toMatchObject({ host: '190.51.100.7', port: 22, user: 'root', hostKey: FAKE_HOST_KEY });
      expect(Object.keys(connection)).not.toContain('privateKey');
      expect(Object.keys(connection)).not.toContain('agentSocketPath');
    }
    // The node key step's input stays secret: only the login changed.
    const nodeKey = commands.find((c) => c.name === 'validator-node-key')!;
    expect(isWrappedSecret(nodeKey.inputs.stdin)).toBe(true);
  });

  it('sends each step its parameters, then the shared helpers and its script file, byte for byte, in one group ending the input', () => {
    const library = fs.readFileSync(path.join(SCRIPTS_DIR, 'remote', 'lib.sh'), 'utf8');
    for (const step of REMOTE_STEP_NAMES) {
      const stdin = inputs(declared, step).stdin as string;
      const script = library + fs.readFileSync(path.join(SCRIPTS_DIR, 'remote', `${step}.sh`), 'utf8');
      const end = `}\n${STEP_END}\n`;
      expect(stdin.endsWith(`${script}${end}`)).toBe(true);
      const preamble = stdin.slice(0, stdin.length - script.length - end.length);
      const header = `# lacchain-besu-node: step ${REMOTE_STEP_NAMES.indexOf(step) + 1}/${REMOTE_STEP_NAMES.length} (${step}) of node validator\n{\n`;
      expect(preamble.startsWith(header)).toBe(true);
      // Nothing but single-quoted parameters between the header and the script: exported, but never a secret one
      // (a plain shell variable of the step, which no command it starts inherits: core/remote/secretParameters.ts).
      const parameters = preamble.slice(header.length);
      expect(parameters).toMatch(/^((export )?[A-Z][A-Z0-9_]*='([^']|'\\'')*'\n)+$/);
      for (const [, exported, name] of parameters.matchAll(/^(export )?([A-Z][A-Z0-9_]*)='/gm)) {
        expect([name, exported !== undefined]).toEqual([name, !SECRET_PARAMETERS.has(name)]);
      }
    }
  });

  it('gives the node key only to the node-key step, whose input is secret and output not logged', () => {
    for (const command of commandsOf(declared)) {
      const stdin = (unwrapSecrets(command.inputs) as any).stdin as string;
      if (command.name === 'validator-node-key') {
        expect(isWrappedSecret(command.inputs.stdin)).toBe(true);
        expect(stdin).toContain(`\nNODE_KEY='${KEY_ONE}'\n`);
        expect(command.inputs.logging).toBe('none');
        expect(command.options.additionalSecretOutputs).toEqual(expect.arrayContaining(['stdout', 'stderr']));
      } else {
        expect(isWrappedSecret(command.inputs.stdin)).toBe(false);
        expect(stdin).not.toContain(KEY_ONE.slice(2));
        expect(command.inputs.logging).toBe('stdoutAndStderr');
      }
    }
  });

  it("gives the node-key step the backup password: derived from the node key, or the operator's", async () => {
    const derived = createHmac('sha256', Buffer.from(KEY_ONE.slice(2), 'hex'))
      .update('lacchain-besu-node backup repository')
      .digest('hex');
    expect(inputs(declared, 'node-key').stdin).toContain(`\nBACKUP_PASSWORD='${derived}'\n`);
    expect(inputs(declared, 'node-key').stdin).toContain("export BACKUP_REPOSITORY='/var/backups/lacchain/besu'");
    const own = await declareProgram(
      recorded,
      'testnet',
      { ...sshStack(), 'lacchain:backupPassword': { secure: 'an operator password' } },
      {},
    );
    const stdin = (unwrapSecrets(commandsOf(own).find((c) => c.name === 'validator-node-key')!.inputs) as any).stdin;
    expect(stdin).toContain("\nBACKUP_PASSWORD='an operator password'\n");
    // No other step ever sees it.
    for (const command of commandsOf(own).filter((c) => c.name !== 'validator-node-key')) {
      expect(JSON.stringify(unwrapSecrets(command.inputs))).not.toContain('an operator password');
    }
  });

  it('gives the metrics token to the node-key step only, secret, and opens 9443 with it', async () => {
    const token = 'm'.repeat(40);
    const withToken = await declareProgram(
      recorded,
      'testnet',
      { ...sshStack(), 'lacchain:metricsToken': { secure: token } },
      {},
    );
    const keyStep = commandsOf(withToken).find((c) => c.name === 'validator-node-key')!;
    expect(isWrappedSecret(keyStep.inputs.stdin)).toBe(true);
    expect((unwrapSecrets(keyStep.inputs) as any).stdin).toContain(`\nMETRICS_TOKEN='${token}'\n`);
    for (const command of commandsOf(withToken).filter((c) => c.name !== 'validator-node-key')) {
      expect(JSON.stringify(unwrapSecrets(command.inputs))).not.toContain(token);
    }
    expect(inputs(withToken, 'firewall').stdin).toMatch(/export TCP_PORTS='[^']*\b9443'/);
    // Without it, no token and no endpoint.
    expect(inputs(declared, 'node-key').stdin).not.toMatch(/^(export )?METRICS_TOKEN/m);
    expect(inputs(declared, 'firewall').stdin).not.toMatch(/^export TCP_PORTS='[^']*\b9443/m);
  });

  it("gives an S3 repository's keys to the node-key step only", async () => {
    const s3 = await declareProgram(
      recorded,
      'testnet',
      {
        ...sshStack(),
        'lacchain:backups': { repository: 's3:https://s3.example.org/lacchain-backups/validator' },
        'lacchain:backupS3Keys': {
          accessKeyId: { secure: 'AKIAEXAMPLE' },
          secretAccessKey: { secure: 'an-s3-secret' },
        },
      },
      {},
    );
    const keyStep = commandsOf(s3).find((c) => c.name === 'validator-node-key')!;
    expect(isWrappedSecret(keyStep.inputs.stdin)).toBe(true);
    const stdin = (unwrapSecrets(keyStep.inputs) as any).stdin;
    expect(stdin).toContain("\nBACKUP_S3_ACCESS_KEY_ID='AKIAEXAMPLE'\n");
    expect(stdin).toContain("\nBACKUP_S3_SECRET_ACCESS_KEY='an-s3-secret'\n");
    for (const command of commandsOf(s3).filter((c) => c.name !== 'validator-node-key')) {
      expect(JSON.stringify(unwrapSecrets(command.inputs))).not.toContain('an-s3-secret');
    }
  });

  it('triggers each step on a digest of its non-secret input', () => {
    const preflight = inputs(declared, 'preflight');
    expect(preflight.triggers).toEqual([createHash('sha256').update(preflight.stdin).digest('hex')]);
    const keyStep = inputs(declared, 'node-key');
    expect(keyStep.triggers[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(keyStep.triggers[0]).not.toBe(createHash('sha256').update(keyStep.stdin).digest('hex'));
  });

  it('checks the node against the enode of the identity, and writes its address', async () => {
    const enode = (await settle(declared.outputs.nodes.validator.enode)).value as string;
    const address = (await settle(declared.outputs.nodes.validator.address)).value as string;
    expect(inputs(declared, 'start').stdin).toContain(`export EXPECTED_ENODE='${enode}'`);
    expect(inputs(declared, 'node-files').stdin).toContain(`export NODE_ADDRESS='${address}'`);
  });

  it('exports the RPC URL on 443 (the loopback: a validator keeps its RPC inside), the service and the node home', async () => {
    const node = declared.outputs.nodes.validator;
    expect((await settle(node.rpcUrl!)).value).toBe('https://127.0.0.1:443');
    expect((await settle(node.serviceName!)).value).toBe('besu');
    expect((await settle(node.nodeHome!)).value).toBe('/opt/lacchain');
    // The proxy's certificate, as the proxy step prints it (known once it ran: tests/e2e/sshNode.test.ts).
    expect(node).toHaveProperty('tlsCertificateSha256');
    expect(node).toHaveProperty('tlsPublicKeyPin');
  });

  it('warns below the minimum hardware on testnet, but does not stop', () => {
    expect(inputs(declared, 'preflight').stdin).toContain("export ENFORCE_MINIMUM='false'");
  });
});

describe('settings that change an SSH node', () => {
  const changedSteps = async (inventory: Record<string, unknown>, network?: string) => {
    const base = await declareProgram(recorded, 'testnet', sshStack(), {});
    const other = await declareProgram(
      recorded,
      network === 'mainnet-omega' ? 'mainnet' : 'testnet',
      sshStack(inventory, network),
      {},
    );
    return REMOTE_STEP_NAMES.filter(
      (step) => JSON.stringify(inputs(base, step)) !== JSON.stringify(inputs(other, step)),
    );
  };

  it("a release update runs only the preflight's check that the machine can run it, the release and start steps", async () => {
    const digest = 'cd'.repeat(32);
    expect(await changedSteps({ node_release_version: '23.4.2', release_sha256: digest })).toEqual([
      'preflight',
      'release',
      'start',
    ]);
  });

  it('a release needing another Java also runs the packages step, and the launcher is pointed at that Java', async () => {
    const changed = await changedSteps({ node_release_version: '24.6.0', release_sha256: 'cd'.repeat(32) });
    expect(changed).toEqual(['preflight', 'packages', 'release', 'node-files', 'start']);
  });

  it("the release's Java: the pinned runtimes for both architectures, or the operator's archive", async () => {
    const next = await declareProgram(
      recorded,
      'testnet',
      sshStack({ node_release_version: '25.5.0', release_sha256: 'cd'.repeat(32) }),
      {},
    );
    const archives = inputs(next, 'packages').stdin as string;
    expect(archives).toContain("export JAVA_MAJOR='21'");
    expect(archives).toContain("export JAVA_HOME_LINK='/opt/lacchain-java/java-21'");
    expect(archives).toMatch(
      /x86_64 https:\/\/github\.com\/adoptium\/temurin21-binaries\/.*_x64_linux_hotspot_21\.0\.11_10\.tar\.gz e5038aae/,
    );
    expect(archives).toMatch(
      /aarch64 https:\/\/github\.com\/adoptium\/temurin21-binaries\/.*_aarch64_linux_hotspot_21\.0\.11_10\.tar\.gz fa23d9d9/,
    );
    const own = await declareProgram(
      recorded,
      'testnet',
      sshStack({
        node_release_version: '25.5.0',
        release_sha256: 'cd'.repeat(32),
        java_runtime_url: 'file:///srv/java/jre-21.tar.gz',
        java_runtime_sha256: 'ab'.repeat(32),
      }),
      {},
    );
    expect(inputs(own, 'preflight').stdin).toContain(
      `export JAVA_RUNTIME_ARCHIVES='* file:///srv/java/jre-21.tar.gz ${'ab'.repeat(32)}'`,
    );
  });

  it('a DNS name changes the certificate, the allowlist and so the config and restart', async () => {
    expect(await changedSteps({ dns_name: 'validator.example.org' })).toEqual(['node-files', 'proxy', 'start']);
  });

  it('a non-root user runs every step through sudo', async () => {
    const declared = await declareProgram(recorded, 'testnet', sshStack({ user: 'ubuntu' }), {});
    for (const step of REMOTE_STEP_NAMES) expect(inputs(declared, step).create).toBe(stepCommand('ubuntu'));
  });

  it('a pinned host key is checked on every connection', async () => {
    const hostKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA7OaIbbNdJhXDU7iUe4MbQv8uD0jRhfwNA6bZGNtnLc';
    const declared = await declareProgram(recorded, 'testnet', sshStack({ host_key: hostKey }), {});
    for (const step of REMOTE_STEP_NAMES) expect(inputs(declared, step).connection.hostKey).toBe(hostKey);
  });

  it('mainnet enforces the minimum hardware unless the operator overrides it', async () => {
    // Mainnet refuses a documentation address as node_ip: the machine's public one.
    const strict = await declareProgram(
      recorded,
      'mainnet',
      sshStack({ node_ip: testPublicIp(7) }, 'mainnet-omega'),
      {},
    );
    expect(inputs(strict, 'preflight').stdin).toContain("export ENFORCE_MINIMUM='true'");
    const override = await declareProgram(
      recorded,
      'mainnet',
      sshStack({ node_ip: testPublicIp(7), allow_below_minimum_hardware: true }, 'mainnet-omega'),
      {},
    );
    expect(inputs(override, 'preflight').stdin).toContain("export ENFORCE_MINIMUM='false'");
  });

  it('downloads from the configured mirror', async () => {
    const declared = await declareProgram(
      recorded,
      'testnet',
      sshStack({ release_url: 'https://mirror.example.org/besu/{version}/besu-{version}.tar.gz' }),
      {},
    );
    expect(inputs(declared, 'release').stdin).toContain(
      "export RELEASE_URL='https://mirror.example.org/besu/23.4.1/besu-23.4.1.tar.gz'",
    );
  });
});

/**
 * Key custody `machine` on a real Debian host (docs/security.md#key-custody): the machine makes the node key with the
 * release's own `besu public-key export` (the Besu stand-in's, a test fixture), keeps it, and reports only its public
 * key, which the program reads back from the node-key step's output. `pulumi up` is replayed as the engine runs it
 * (testing/replay.ts upReadingBack): the program declared before the node-key step ran (its stdout unknown), the steps
 * up to it run over SSH, the program declared again with the stdout the step printed, the rest run. Then: the key is
 * nowhere the program or the run kept (resources, outputs, the steps' output, the node's backup, its logs), kept by a
 * second run, guarded by a pinned public key and against a lost key, kept when a node is switched from stack custody,
 * and not replaced when switched back. Light: one release, no companions, the shortest start time-out.
 */
import { DEFAULT_NODE_HOME } from '../../core/catalog/defaults';
import { NODE_PUBLIC_KEY_LINE } from '../../core/catalog/keyCustody';
import { PORTS } from '../../core/catalog/ports';
import { MIN_START_TIMEOUT_SECONDS } from '../../core/catalog/remote';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { backupPaths } from '../../core/remote/backups';
import type { SshNodeSettings } from '../../core/settings/model';
import { derivedBackupPassword } from '../../components/backupPassword';
import { settle, unwrapSecrets } from '../../tools/recording/engine';
import { COMPANIONS_OFF, KEY_ONE_PUBLIC } from '../../testing/fixtures';
import { SshResult, TestHost } from '../../testing/host/testHost';
import type { FileServer } from '../../testing/host/fileServer';
import { hostSuite, progress } from '../../testing/hostSuite';
import { declareProgram, Declared, recordRun } from '../../testing/program';
import {
  changedCommands,
  nodeKeyOf,
  ReadBackUp,
  remoteCommands as commands,
  RemoteStep,
  runRemoteStep,
  runRemoteSteps,
  TimedStep,
  upReadingBack,
  upToNodeKey,
} from '../../testing/replay';
import { sshWriterStack } from '../../testing/sshStacks';
import { startReleaseHost, stopReleaseHost } from '../../testing/releaseHost';

const suite = hostSuite('key custody machine on a real host');
jest.setTimeout(10 * 60 * 1000);

const RELEASE = '24.1.0';
const NODE = 'writer';
const HOME = DEFAULT_NODE_HOME;
const KEY = `${HOME}/data/key`;
/** The enode the node-key step records beside it. */
const HOME_ENODE = `${HOME}/data/enode`;
/** A second node on the same machine, deployed with stack custody and switched to machine custody. */
const SWITCHED = { node: 'switched', home: '/opt/lacchain-switched', service: 'besu-switched' };

/** The public key lines a node-key step printed. */
const publicKeyLines = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith(`${NODE_PUBLIC_KEY_LINE} `));

suite('a machine that makes and keeps its own node key (keyCustody machine)', () => {
  let host: TestHost;
  let files: FileServer;
  let work: string;
  let up: ReadBackUp;
  /** The node key on the machine (0x + 64 hex), as root reads it there. */
  let key: string;
  /** Every step's and command's output of the suite, to search for the key. */
  const printed: string[] = [];

  interface Entry {
    custody?: 'stack' | 'machine';
    publicKey?: string;
    node?: string;
    home?: string;
    service?: string;
  }
  /** A testnet stack of one SSH writer on the host: no companions, the shortest start time-out. */
  const stack = (entry: Entry): Record<string, unknown> => {
    const config = sshWriterStack(host, {
      version: RELEASE,
      releaseBaseUrl: files.url,
      releaseDir: work,
      nodeName: 'e2e-custody',
      dnsName: 'custody.e2e.test',
      node: entry.node,
    });
    const [node] = config['lacchain:nodes'] as Record<string, unknown>[];
    if (entry.custody) node.keyCustody = entry.custody;
    if (entry.publicKey) node.publicKey = entry.publicKey;
    Object.assign(node.inventory as Record<string, unknown>, {
      start_timeout_seconds: MIN_START_TIMEOUT_SECONDS,
      ...(entry.home ? { node_home: entry.home } : {}),
      ...(entry.service ? { node_service: entry.service } : {}),
    });
    config['lacchain:companions'] = COMPANIONS_OFF;
    return config;
  };

  /** Runs a root shell script on the host, failing with its output when it fails. */
  const root = async (script: string) => {
    const result = await host.ssh('bash -s', { input: `set -euo pipefail\n${script}`, timeoutMs: 120_000 });
    printed.push(result.stdout, result.stderr);
    if (result.code !== 0) throw new Error(`exit ${result.code}:\n${result.stdout}\n${result.stderr}`);
    return result.stdout.trim();
  };
  /** Runs one step as the command provider does, keeping what it printed. */
  const run = async (step: RemoteStep): Promise<SshResult> => {
    progress(`running ${step.name}`);
    const result = await runRemoteStep(host, step);
    progress(`${step.name} exited ${result.code}`);
    printed.push(result.stdout, result.stderr);
    return result;
  };
  const runAll = async (steps: RemoteStep[]): Promise<TimedStep[]> => {
    const runs = await runRemoteSteps(host, steps);
    for (const r of runs) printed.push(r.stdout, r.stderr);
    return runs;
  };
  const stepOf = (declared: Declared, name: string) => commands(declared).find((s) => s.name === name)!;
  const rpc = async (method: string) =>
    JSON.parse(
      await root(
        `curl -s -H 'Host: localhost' -H 'Content-Type: application/json' --data '{"jsonrpc":"2.0","method":"${method}","params":[],"id":1}' http://127.0.0.1:${PORTS.rpcHttp}/`,
      ),
    ) as { result?: string };
  /** The node's identity outputs. */
  const identity = async (declared: Declared, node = NODE) => {
    const outputs = declared.outputs.nodes[node];
    return {
      publicKey: (await settle(outputs.publicKey)).value,
      enode: (await settle(outputs.enode)).value,
      address: (await settle(outputs.address)).value,
    };
  };
  /** Every stack output of a declaration, settled (unknown ones as undefined). */
  const allOutputs = async (declared: Declared) => {
    const nodes: Record<string, Record<string, unknown>> = {};
    for (const [node, outputs] of Object.entries(declared.outputs.nodes)) {
      nodes[node] = {};
      for (const [name, value] of Object.entries(outputs)) nodes[node][name] = (await settle(value)).value;
    }
    return { network: declared.outputs.network, nodes };
  };
  /** A key file's owner, mode and digest: what "unchanged" compares (the key itself is never printed). */
  const keyState = (file = KEY) => root(`stat -c '%U:%G %a %i' ${file}; sha256sum <${file}`);
  /** Whether a text holds the key, with or without 0x, in any case. */
  const holdsKey = (text: string) => text.toLowerCase().includes(key.slice(2).toLowerCase());

  beforeAll(async () => {
    ({ host, files, work } = await startReleaseHost('custody', 51, [RELEASE], {
      packagesInstalled: true,
      workPrefix: 'lacchain-custody-',
    }));
    up = await upReadingBack(host, 'testnet', stack({ custody: 'machine' }));
    for (const r of up.runs) printed.push(r.stdout, r.stderr);
    // Read as root, kept out of `printed` (which is searched for it).
    key = (await host.ssh(`cat ${KEY}`)).stdout.trim();
    if (!/^0x[0-9a-f]{64}$/.test(key)) throw new Error('data/key on the machine is not a node key');
  });

  afterAll(() => stopReleaseHost({ files, host, work }));

  it("deploys the node: it runs and answers with the identity the stack outputs, its key the service user's, 0600", async () => {
    const { publicKey, enode, address } = await identity(up.declared);
    // The program holds no key: nothing random, no key sent to the node-key step.
    expect(up.declared.resources.filter((r) => r.type.startsWith('random:'))).toEqual([]);
    expect(() => nodeKeyOf(commands(up.declared))).toThrow('no node-key step with a node key');
    // Before the node-key step ran, the identity was unknown; after, it is the public key the step printed, which is
    // the key's on the machine.
    expect((await identity(up.before)).publicKey).toBeUndefined();
    expect(publicKeyLines(up.nodeKeyStdout[`${NODE}-node-key`])).toEqual([`${NODE_PUBLIC_KEY_LINE} ${publicKey}`]);
    expect({ publicKey, enode, address }).toEqual(deriveIdentity(key, host.ip, PORTS.p2p));
    expect(stepOf(up.declared, `${NODE}-start`).stdin).toContain(`export EXPECTED_ENODE='${enode}'`);
    // The service runs with it and answers with it.
    expect(await root('systemctl is-active besu')).toBe('active');
    expect((await rpc('net_enode')).result).toBe(enode);
    expect(await root(`cat ${HOME}/data/enode ${HOME}/data/nodeAddress`)).toBe(`${enode}\n${address}`);
    expect(await root(`stat -c '%U:%G %a' ${KEY}`)).toBe('besu:besu 600');
  });

  it("keeps the key out of every resource, output and step output, and out of the node's backup and logs", async () => {
    // The recorded resources (inputs, secrets unwrapped) and outputs of both declarations, and the stdout the engine
    // recorded of the node-key step.
    for (const declared of [up.before, up.declared]) {
      expect(holdsKey(JSON.stringify(unwrapSecrets(declared.resources)))).toBe(false);
      expect(holdsKey(JSON.stringify(await allOutputs(declared)))).toBe(false);
    }
    expect(holdsKey(JSON.stringify(up.nodeKeyStdout))).toBe(false);
    // What every step printed (the key's test is not vacuous: the searched outputs are there).
    expect(up.runs.map((r) => r.name)).toEqual(commands(up.declared).map((s) => s.name));
    expect(printed.filter(holdsKey)).toHaveLength(0);
    // A backup with the node's backup command, restored into a folder and searched; its repository opens with the
    // password the program would derive from the key (derived on the machine).
    const node = up.declared.loaded.settings.nodes[0] as SshNodeSettings;
    const paths = backupPaths(node);
    const backup = await root(`${paths.command} backup manual`);
    expect(backup).toMatch(/"message_type":"summary".*"snapshot_id":"[0-9a-f]{8}/);
    const found = await root(`
hex=${key.slice(2)}
set -a; . ${paths.environment}; set +a
echo "password: $RESTIC_PASSWORD"
dir=$(mktemp -d)
export RESTIC_CACHE_DIR=/var/cache/lacchain-restic
restic restore latest --target "$dir" >/dev/null
echo "files: $(find "$dir" -type f | wc -l)"
echo "enode: $(find "$dir" -type f -path '*/data/enode' | wc -l)"
echo "holders: $(grep -rliF -- "$hex" "$dir" | tr '\\n' ' ')"
echo "logs: $(grep -rliF -- "$hex" ${HOME}/logs /var/log | tr '\\n' ' ')"
echo "journal: $(journalctl --no-pager -o cat | grep -ciF -- "$hex" || true)"
rm -rf "$dir"
`);
    const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(found)?.[1].trim();
    expect(field('password')).toBe(derivedBackupPassword(key));
    expect(Number(field('files'))).toBeGreaterThan(2);
    expect(field('enode')).toBe('1');
    expect({ holders: field('holders'), logs: field('logs'), journal: field('journal') }).toEqual({
      holders: '',
      logs: '',
      journal: '0',
    });
  });

  it('keeps the same key when the steps run again with nothing changed', async () => {
    const before = await keyState();
    // A second `pulumi up`: the engine has the node-key step's stdout from the first; nothing changed, no step is
    // declared to run again (the declared inputs' diff, as the engine compares them).
    const again = await declareProgram(
      recordRun({ preview: false, nodeKeyStdout: up.nodeKeyStdout }),
      'testnet',
      stack({ custody: 'machine' }),
      {},
    );
    expect(changedCommands(commands(up.declared), commands(again)).map((s) => s.name)).toEqual([]);
    // And every step run again as it is: the node-key step finds the same key.
    const runs = await runAll(commands(again));
    const keyRun = runs.find((r) => r.name === `${NODE}-node-key`)!;
    expect(publicKeyLines(keyRun.stdout)).toEqual(publicKeyLines(up.nodeKeyStdout[`${NODE}-node-key`]));
    expect(publicKeyLines(keyRun.stdout)).toHaveLength(1);
    expect(await keyState()).toBe(before);
    expect((await rpc('net_enode')).result).toBe((await identity(up.declared)).enode);
  });

  it('refuses a machine whose key is not the one the stack pins, changing nothing', async () => {
    const { publicKey } = await identity(up.declared);
    const before = await keyState();
    const pinnedTo = (pin: string) =>
      declareProgram(
        recordRun({ preview: false, nodeKeyStdout: up.nodeKeyStdout }),
        'testnet',
        stack({ custody: 'machine', publicKey: pin }),
        {},
      );
    const other = `0x${KEY_ONE_PUBLIC}`;
    expect(other).not.toBe(publicKey);
    const wrong = await pinnedTo(other);
    // The pin changes the node-key step (the key it must find) and the start step (the enode it checks).
    expect(changedCommands(commands(up.declared), commands(wrong)).map((s) => s.name)).toEqual([
      `${NODE}-node-key`,
      `${NODE}-start`,
    ]);
    const result = await run(stepOf(wrong, `${NODE}-node-key`));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `node-key: the node key ${KEY} is not the one the stack pins (publicKey ${other}; this machine's is ${publicKey})`,
    );
    expect(await keyState()).toBe(before);
    // Pinned to the machine's own public key, the step goes through with the same key.
    const right = await pinnedTo(publicKey!);
    expect(changedCommands(commands(up.declared), commands(right)).map((s) => s.name)).toEqual([`${NODE}-node-key`]);
    const accepted = await run(stepOf(right, `${NODE}-node-key`));
    expect(accepted.code).toBe(0);
    expect(publicKeyLines(accepted.stdout)).toEqual([`${NODE_PUBLIC_KEY_LINE} ${publicKey}`]);
    expect(await keyState()).toBe(before);
  });

  it('refuses to make a new key when the key is gone and the node has an enode', async () => {
    const { publicKey } = await identity(up.declared);
    const before = await keyState();
    const kept = '/root/kept-node-key';
    await root(`mv ${KEY} ${kept}`);
    let result: SshResult;
    try {
      result = await run(stepOf(up.declared, `${NODE}-node-key`));
      expect(await root(`test -e ${KEY} && echo made || echo none`)).toBe('none');
    } finally {
      await root(`mv ${kept} ${KEY}`);
    }
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `node-key: the node key ${KEY} is not on this machine, and the node has an identity (public key ${publicKey}): refusing to make a new key`,
    );
    expect(publicKeyLines(result.stdout)).toEqual([]);
    expect(await keyState()).toBe(before);
  });

  it('keeps the key and enode of a node switched from stack to machine custody, and refuses the switch back', async () => {
    // A second node on the machine (its own home and service), deployed with stack custody up to its key.
    const switched = (custody: 'stack' | 'machine') => stack({ custody, ...SWITCHED });
    const byStack = await declareProgram(recordRun({ preview: false }), 'testnet', switched('stack'), {});
    const stackSteps = commands(byStack).filter(upToNodeKey);
    await runAll(stackSteps);
    const stackIdentity = await identity(byStack, SWITCHED.node);
    const switchedKey = `${SWITCHED.home}/data/key`;
    const environment = backupPaths(byStack.loaded.settings.nodes[0] as SshNodeSettings).environment;
    expect(await root(`cat ${switchedKey}`)).toBe(nodeKeyOf(stackSteps));
    const before = await keyState(switchedKey);
    const backupEnvironment = await root(`sha256sum <${environment}`);
    // Switched to machine custody: the steps whose inputs changed, up to the node-key step, run.
    const toMachine = await declareProgram(recordRun({ preview: true }), 'testnet', switched('machine'), {});
    const changed = changedCommands(stackSteps, commands(toMachine).filter(upToNodeKey));
    expect(changed.map((s) => s.name)).toEqual([`${SWITCHED.node}-node-files`, `${SWITCHED.node}-node-key`]);
    const runs = await runAll(changed);
    const stdout = runs.find((r) => r.name === `${SWITCHED.node}-node-key`)!.stdout;
    expect(publicKeyLines(stdout)).toEqual([`${NODE_PUBLIC_KEY_LINE} ${stackIdentity.publicKey}`]);
    const readBack = await declareProgram(
      recordRun({ preview: false, nodeKeyStdout: { [`${SWITCHED.node}-node-key`]: stdout } }),
      'testnet',
      switched('machine'),
      {},
    );
    expect(await identity(readBack, SWITCHED.node)).toEqual(stackIdentity);
    expect(await keyState(switchedKey)).toBe(before);
    expect(await root(`cat ${SWITCHED.home}/data/enode`)).toBe(stackIdentity.enode);
    // The backup password the machine derives from the key is the one the program derived: its backups still open.
    expect(await root(`sha256sum <${environment}`)).toBe(backupEnvironment);

    // The first node switched back to stack custody without importing its key: the stack's new key is refused.
    const mainBefore = await keyState();
    const back = await declareProgram(recordRun({ preview: false }), 'testnet', stack({ custody: 'stack' }), {});
    expect(nodeKeyOf(commands(back))).not.toBe(key);
    // The update runs its node-key step (after node-files): it refuses, and nothing after it runs.
    expect(changedCommands(commands(up.declared), commands(back)).map((s) => s.name)).toEqual(
      expect.arrayContaining([`${NODE}-node-files`, `${NODE}-node-key`, `${NODE}-start`]),
    );
    const enodeFile = await root(`cat ${HOME_ENODE}`);
    expect((await run(stepOf(back, `${NODE}-node-files`))).code).toBe(0);
    const refused = await run(stepOf(back, `${NODE}-node-key`));
    expect(refused.code).toBe(1);
    // The identity files still name the machine's key: node-files leaves them to the node-key step, which refused.
    expect(await root(`cat ${HOME_ENODE}`)).toBe(enodeFile);
    expect(refused.stderr).toContain(
      `node-key: ${KEY} holds another node key: refusing to replace the node's identity.`,
    );
    expect(await keyState()).toBe(mainBefore);
    expect((await rpc('net_enode')).result).toBe((await identity(up.declared)).enode);
    expect(printed.filter(holdsKey)).toHaveLength(0);
  });

  it("replaces the key on purpose, as docs/security.md says: a new key and enode, the backups' password kept", async () => {
    const node = up.declared.loaded.settings.nodes[0] as SshNodeSettings;
    const { environment, command } = backupPaths(node);
    const oldIdentity = await identity(up.declared);
    const backupsBefore = await root(
      `set -a; . ${environment}; set +a; restic snapshots --json | grep -o '"short_id"' | wc -l`,
    );
    expect(Number(backupsBefore)).toBeGreaterThan(0);
    // 1. The backups' password in use, set in the stack.
    const password = await root(`sed -n 's/^RESTIC_PASSWORD=//p' ${environment}`);
    expect(password).toBe(derivedBackupPassword(key));
    const config = { ...stack({ custody: 'machine' }), 'lacchain:backupPassword': password };
    // 3. The node stopped, its key and identity files moved aside.
    const aside = '/root/replaced-node-key';
    await root(
      `systemctl stop besu; install -d -m 0700 ${aside}; mv ${KEY} ${HOME_ENODE} ${HOME}/data/nodeAddress ${HOME}/machine-public-key ${aside}/`,
    );
    // 4. `pulumi up --replace` of the node-key step: it runs again (so does every step here, unchanged), read back.
    const replaced = await upReadingBack(host, 'testnet', config);
    for (const r of replaced.runs) printed.push(r.stdout, r.stderr);
    // Read as root, kept out of `printed` (which is searched for both keys).
    const readKey = async (file: string) => (await host.ssh(`cat ${file}`)).stdout.trim();
    const newKey = await readKey(KEY);
    expect(newKey).toMatch(/^0x[0-9a-f]{64}$/);
    expect(newKey).not.toBe(key);
    const newIdentity = await identity(replaced.declared);
    expect(newIdentity).toEqual(deriveIdentity(newKey, host.ip, PORTS.p2p));
    expect(newIdentity.enode).not.toBe(oldIdentity.enode);
    expect(stepOf(replaced.declared, `${NODE}-start`).stdin).toContain(`export EXPECTED_ENODE='${newIdentity.enode}'`);
    expect((await rpc('net_enode')).result).toBe(newIdentity.enode);
    expect(await root(`stat -c '%U:%G %a' ${KEY}`)).toBe('besu:besu 600');
    // The old key kept aside; the backups' password unchanged: the earlier backups open, and a new one is taken.
    expect(await readKey(`${aside}/key`)).toBe(key);
    expect(await root(`sed -n 's/^RESTIC_PASSWORD=//p' ${environment}`)).toBe(password);
    expect(
      await root(
        `${command} backup manual >/dev/null; set -a; . ${environment}; set +a; restic snapshots --json | grep -o '"short_id"' | wc -l`,
      ),
    ).toBe(String(Number(backupsBefore) + 1));
    // Neither key in anything a step printed.
    expect(printed.filter((text) => holdsKey(text) || text.toLowerCase().includes(newKey.slice(2)))).toHaveLength(0);
  });
});

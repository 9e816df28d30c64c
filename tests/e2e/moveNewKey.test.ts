/**
 * `npm run node -- move --new-key` of a node whose key the stack holds (key custody stack, docs/moving.md "A new key")
 * between two real test hosts. The move's bring-up is `pulumi up --replace` of the key's random bytes, the URN picked
 * by the move's own stackKeyUrns from what `pulumi stack --show-urns` lists of the stack; here that `pulumi up` is
 * replayed on the new host as the engine runs it (testing/replay.ts), its state's random bytes made anew for the
 * replaced resource (testing/program.ts, replacedRandomBytes) and read from then on. Shown: a new node id at the new
 * place, the old key and the backup password derived from it nowhere in the state, nor on the new machine; the
 * re-permissioning request naming both enodes (the old one to remove, the new one to add); the old node kept from
 * starting, its key kept; the marker and the height carried; the next `pulumi up` of the stack file the move wrote
 * changes nothing. Light: one release, no companions (Besu stand-in, a test fixture).
 */
import { MOVE_RELEASE, movedTo, moveHostsForSuite, MOVED_WRITER, moveWriterStack } from '../../testing/moveStack';
import { asRoot, hostRpc } from '../../testing/hostNode';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { MACHINE_MOVE_FILES } from '../../core/catalog/move';
import { parseEnode } from '../../core/identity/nodeKey';
import type { SshNodeSettings } from '../../core/settings/model';
import { derivedBackupPassword } from '../../components/backupPassword';
import { moveNode, newKeyRefusal, stackKeyUrns } from '../../cli/operations/move';
import type { MoveResult } from '../../cli/operations/moveShared';
import { loadOperatorStack } from '../../cli/operatorStack';
import type { TestHost } from '../../testing/host/testHost';
import { hostSuite, progress } from '../../testing/hostSuite';
import { operatorStackFile } from '../../testing/nodeTool';
import { Declared, declareProgram, recordRun, replacedRandomBytes, stackUrnListing } from '../../testing/program';
import { changedCommands, nodeKeyOf, remoteCommands, RemoteStep, runRemoteSteps } from '../../testing/replay';
import { unwrapSecrets } from '../../tools/recording/engine';

const suite = hostSuite('moving a stack-held key node to a new key between real hosts');
jest.setTimeout(12 * 60 * 1000);

const RELEASE = MOVE_RELEASE;
const { stack: STACK, node: NODE, service: SERVICE, data: DATA } = MOVED_WRITER;
const MARKER = 'written-before-the-new-key-move';
/** The backups' own password: a key the stack holds otherwise derives it, and a new key could not open the backup. */
const BACKUP_PASSWORD = 'e2e-move-new-key-backup-password';

suite('npm run node -- move --new-key, key custody stack (SSH to SSH)', () => {
  /** The state's random bytes where a `pulumi up --replace` made them anew (none before the move). */
  let state: Record<string, string> = {};

  /** The stack of one writer on `host`, its key made by the program (no lacchain:nodeKeys), a backup password. */
  const stackOn = (host: TestHost): Record<string, unknown> => ({
    ...moveWriterStack(host, hosts.old, RELEASE, { nodeName: 'e2e-move-new-key', dnsName: 'move-new-key.e2e.test' }),
    'lacchain:backupPassword': BACKUP_PASSWORD,
  });
  const root = asRoot;
  const rpc = hostRpc;
  /** A declaration of `config` as `pulumi up` runs it, on the state's random bytes. */
  const declare = (config: Record<string, unknown>) =>
    declareProgram(recordRun({ stack: STACK, preview: false, randomBytes: state }), STACK, config, {});
  /** What the state holds of a declaration's resources: every one's inputs, secrets unwrapped. */
  const stateText = (declared: Declared) => JSON.stringify(declared.resources.map((r) => unwrapSecrets(r.inputs)));

  const hosts = moveHostsForSuite(['nkeyold', 'nkeynew'], [63, 64], 'move-new-key');

  let result: MoveResult;
  let configFile: string;
  let before: Declared;
  let provisioned: RemoteStep[];
  let oldKey: string;
  let oldEnode: string;

  it('refuses the new key while the backups password is derived from the key: the new key could not open them', () => {
    const derived = path.join(hosts.dir, 'derived');
    fs.mkdirSync(derived);
    const config = stackOn(hosts.old.host);
    delete config['lacchain:backupPassword'];
    const file = operatorStackFile(derived, config);
    const stack = loadOperatorStack(STACK, file);
    expect(newKeyRefusal(stack.settings.nodes[0] as SshNodeSettings, stack.secrets)).toBe(
      "--new-key: node writer's backups are encrypted with a password derived from its key, which the new key cannot open: set lacchain:backupPassword to the one in use first (docs/security.md#replacing-a-machines-key, step 1) and run move again",
    );
    expect(
      newKeyRefusal(stack.settings.nodes[0] as SshNodeSettings, { ...stack.secrets, backupPassword: 'p' }),
    ).toBeUndefined();
  });

  it('moves the node with a new key made by pulumi up --replace of its random bytes, its data carried', async () => {
    before = await declare(stackOn(hosts.old.host));
    const first = remoteCommands(before);
    await runRemoteSteps(hosts.old.host, first);
    oldKey = nodeKeyOf(first);
    oldEnode = await rpc(hosts.old.host, 'net_enode');
    for (let i = 0; i < 40 && Number.parseInt(await rpc(hosts.old.host, 'eth_blockNumber'), 16) < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await root(hosts.old.host, `runuser -u besu -- sh -c 'echo ${MARKER} > ${DATA}/move-marker'`);
    const headBefore = Number.parseInt(await rpc(hosts.old.host, 'eth_blockNumber'), 16);
    const oldKeyDigest = await root(hosts.old.host, `sha256sum < ${DATA}/key`);

    configFile = operatorStackFile(hosts.dir, stackOn(hosts.old.host));
    const { movedText, from, to } = movedTo(STACK, configFile, NODE, hosts.target, path.join(hosts.dir, 'check.yaml'));
    expect(newKeyRefusal(from, loadOperatorStack(STACK, configFile).secrets)).toBeUndefined();
    let replaced: string[] = [];
    result = await moveNode(
      {
        stack: STACK,
        from,
        to,
        configFile,
        movedText,
        ssh: { keyFile: hosts.old.host.privateKeyFile, options: [] },
        newKey: true,
      },
      {
        // pulumi up --replace of what the move picks from `pulumi stack --show-urns` (cli/operations/move.ts,
        // pulumiUp), as the engine runs it on the new host.
        bringUp: async (stack, _configFile, node, newKey) => {
          expect(newKey).toBe(true);
          replaced = stackKeyUrns(stackUrnListing(before, stack), node);
          state = replacedRandomBytes(before, replaced, state);
          provisioned = remoteCommands(await declare(stackOn(hosts.target)));
          await runRemoteSteps(hosts.target, provisioned);
        },
      },
    );
    progress(`the move with a new key took ${result.seconds.toFixed(1)} s (Besu stand-in)`);
    console.log(
      `move SSH -> SSH with --new-key, key custody stack, took ${result.seconds.toFixed(1)} s (Besu stand-in)`,
    );
    // Only the key's random bytes were replaced.
    expect(replaced.map((urn) => urn.split('::').pop())).toEqual([`${NODE}-identity-key`]);

    // A new node id at the new place; the new machine runs the new key, never the old one.
    const newEnode = await rpc(hosts.target, 'net_enode');
    expect(parseEnode(newEnode)?.nodeId).not.toBe(parseEnode(oldEnode)?.nodeId);
    expect(parseEnode(newEnode)?.host).toBe(hosts.target.ip);
    expect(result.newEnode).toBe(newEnode);
    const newKey = nodeKeyOf(provisioned);
    expect(newKey).not.toBe(oldKey);
    expect(await root(hosts.target, `sha256sum < ${DATA}/key`)).not.toBe(oldKeyDigest);
    expect(
      await root(hosts.target, `grep -rlF -- ${oldKey.slice(2)} /etc /opt /root /var/lib 2>/dev/null || true`),
    ).toBe('');
    // The old key is no longer in the state: nothing the stack declares holds it, nor the password derived from it.
    const after = await declare(stackOn(hosts.target));
    expect(stateText(after)).not.toContain(oldKey.slice(2));
    expect(stateText(after)).not.toContain(derivedBackupPassword(oldKey));
    expect(stateText(after)).toContain(newKey.slice(2));

    // The re-permissioning request: the old enode to remove, the new one to add, where to send them.
    expect(result.repermissioning).toMatchObject({
      removeEnode: oldEnode,
      enode: newEnode,
      network: 'open-protestnet',
      nodeName: 'e2e-move-new-key',
    });
    expect(result.repermissioning?.procedure).toContain('tech.support@lac-net.net');

    // The data carried: the marker and at least the height before the move.
    expect(await root(hosts.target, `cat ${DATA}/move-marker`)).toBe(MARKER);
    expect(Number.parseInt(await rpc(hosts.target, 'eth_blockNumber'), 16)).toBeGreaterThanOrEqual(headBefore);

    // The old node: its service removed, kept from starting (its moved-out record), its key kept in its data.
    expect(await root(hosts.old.host, `test -f ${MACHINE_MOVE_FILES.movedOut(SERVICE)} && echo fenced`)).toBe('fenced');
    await hosts.old.host.ssh(`systemctl start ${SERVICE}`);
    expect((await hosts.old.host.ssh(`systemctl is-active ${SERVICE}`)).stdout.trim()).not.toBe('active');
    expect(await root(hosts.old.host, `sha256sum < ${DATA}/key`)).toBe(oldKeyDigest);
    expect(
      await root(hosts.target, `test -e ${MACHINE_MOVE_FILES.incomingKey(SERVICE)} && echo left || echo none`),
    ).toBe('none');
  });

  it('the next pulumi up of the stack file the move wrote changes nothing', async () => {
    const written = (yaml.load(fs.readFileSync(configFile, 'utf8')) as { config: Record<string, unknown> }).config;
    // The file holds the backup password encrypted, as `pulumi config set --secret` left it; the engine decrypts it.
    expect(written['lacchain:backupPassword']).toEqual({ secure: expect.any(String) });
    const next = remoteCommands(await declare({ ...written, 'lacchain:backupPassword': BACKUP_PASSWORD }));
    expect(changedCommands(provisioned, next).map((step) => step.name)).toEqual([]);
  });
});

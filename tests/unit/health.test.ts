/**
 * The health check's rules, and the commands each operation uses, as pure functions.
 */
import { evaluateHealth, healthy, lastImportAge, Observations, recoveryRule } from '../../core/operations/health';
import { hexQuantity, rpcResult, syncState } from '../../core/operations/rpc';
import { diskUsageCommand, parseDiskUsage } from '../../core/operations/disk';
import { DISK_FREE } from '../../core/catalog/health';
import { RPC_ANSWER_SECONDS } from '../../core/catalog/rpc';
import {
  kubectlCommands,
  SHARED_CONNECTION_IDLE_SECONDS,
  sshArguments,
  sshCommands,
} from '../../core/operations/clients';
import type { KubernetesNodeSettings, SshNodeSettings } from '../../core/settings/model';
import { FIXES, healthyObservations, loadTestnet } from '../../testing/fixtures';

const ENODE = `enode://${'a'.repeat(128)}@190.113.0.10:60606`;
const good = healthyObservations(ENODE);
const failing = (o: Partial<Observations>) =>
  evaluateHealth({ ...good, ...o }, FIXES)
    .filter((v) => !v.ok)
    .map((v) => `${v.check}: ${v.detail}`);

describe('health rules', () => {
  it('a running, peered, syncing node with recent imports and the stack enode is healthy', () => {
    const verdicts = evaluateHealth(good, FIXES);
    expect(verdicts.map((v) => v.check)).toEqual(['service', 'rpc', 'peers', 'block sync', 'block imports', 'enode']);
    expect(healthy(verdicts)).toBe(true);
  });

  it.each([
    ['the service is down', { service: { running: false, detail: 'inactive' } }, 'service: inactive'],
    ['no peers', { peerCount: 0 }, 'peers: 0 peers: the node reaches no other node'],
    ['a stalled block', { blockSecond: 10 }, 'block sync: block 10 did not advance in 10 s, not syncing'],
    ['an old last import', { lastImportAgeSeconds: 600 }, 'block imports: last block import 600 s ago'],
    ['no import in the log', { lastImportAgeSeconds: undefined }, 'block imports: no block import in the recent log'],
    [
      'another enode',
      { reportedEnode: ENODE.replace('aaaa', 'bbbb') },
      `enode: the node answers ${ENODE.replace('aaaa', 'bbbb')} but the stack's enode is ${ENODE}`,
    ],
    [
      'an unrecorded enode',
      { expectedEnode: undefined },
      `enode: the node answers ${ENODE} but the stack's enode is (not recorded)`,
    ],
  ])('fails on %s', (_name, change, expected) => {
    expect(failing(change as Partial<Observations>)).toEqual([expected]);
  });

  it('reports an RPC that does not answer instead of peers and blocks', () => {
    const verdicts = evaluateHealth({ ...good, rpcError: 'connection refused', peerCount: undefined }, FIXES);
    expect(verdicts.map((v) => `${v.check} ${v.ok}`)).toEqual([
      'service true',
      'rpc false',
      'block imports true',
      'enode true',
    ]);
  });

  it('shows how far behind a syncing node is', () => {
    const verdict = evaluateHealth({ ...good, syncing: { currentBlock: 100, highestBlock: 150 } }, FIXES)[3];
    expect(verdict.detail).toBe('block 10 -> 14 in 10 s, syncing: 50 blocks behind');
  });

  it('the recovery rule names the restart and the support contact', () => {
    expect(recoveryRule('npm run node -- restart --stack testnet --node w', 'the network operator')).toBe(
      'recovery: restart the node (npm run node -- restart --stack testnet --node w, or run the check again with --fix). ' +
        "If a restart does not help, open a support request with the network operator, giving the node's enode and this output.",
    );
  });
});

describe('reading the node', () => {
  it('finds the age of the newest block import in a Besu log', () => {
    const log = [
      '2026-11-22 10:00:00.000+00:00 | main | INFO  | Besu | Starting Besu',
      '2026-11-22 10:00:10.500+00:00 | EthScheduler-Workers-0 | INFO  | PersistBlockTask | Imported #1,234 / 0 tx',
      '2026-11-22 10:00:12.000+00:00 | nioEventLoopGroup | INFO  | FullSyncTargetManager | No sync target',
    ].join('\n');
    expect(lastImportAge(log, Date.parse('2026-11-22T10:00:20.500Z') / 1000)).toBe(10);
    expect(lastImportAge('no imports here', 0)).toBeUndefined();
  });

  it('decodes JSON-RPC answers', () => {
    const at = 'http://127.0.0.1:4545/ on 190.51.100.7';
    expect(hexQuantity(rpcResult('net_peerCount', '{"jsonrpc":"2.0","id":1,"result":"0x1a"}', at))).toBe(26);
    expect(() =>
      rpcResult('admin_peers', '{"jsonrpc":"2.0","id":1,"error":{"code":-32604,"message":"Method not enabled"}}', at),
    ).toThrow('admin_peers: Method not enabled (-32604)');
    expect(() => rpcResult('net_enode', '<html>', at)).toThrow(
      `net_enode: ${at} answered something that is not JSON-RPC: <html>`,
    );
  });

  it('names the address that did not answer, instead of calling nothing an answer', () => {
    expect(() => rpcResult('net_peerCount', '', 'http://127.0.0.1:4545/ on 190.51.100.7')).toThrow(
      'net_peerCount: no answer from http://127.0.0.1:4545/ on 190.51.100.7',
    );
    expect(syncState(false)).toBe(false);
    expect(syncState({ startingBlock: '0x0', currentBlock: '0x10', highestBlock: '0x20' })).toEqual({
      currentBlock: 16,
      highestBlock: 32,
    });
  });
});

describe('client commands', () => {
  const settings = loadTestnet();
  const writer = settings.nodes[0] as KubernetesNodeSettings;
  const validator = settings.nodes[1] as SshNodeSettings;

  it('uses the seed kubectl commands with the program names', () => {
    const commands = kubectlCommands(writer);
    expect(commands.logs.join(' ')).toBe('logs besu-node-writer-0 -c writer-besu -f -n lacchain');
    expect(commands.deletePod.join(' ')).toBe('delete pod besu-node-writer-0 -n lacchain');
    expect(kubectlCommands(writer, 'prod').logs.slice(0, 2)).toEqual(['--context', 'prod']);
  });

  it('runs systemctl and reads the log through sudo for a non-root user', () => {
    const commands = sshCommands(validator);
    expect(commands.destination).toEqual(['-p', '22', 'ubuntu@190.51.100.7']);
    expect(commands.restart).toBe("sudo -n systemctl restart 'besu'");
    // Files the service user owns are read as that user, bounded in size and time (a FIFO planted there ends it).
    expect(commands.logs).toBe(
      "sudo -n -u besu timeout 10 tail -c 1048576 -- '/opt/lacchain/logs/besu_info.log' | tail -n 100",
    );
    expect(commands.recentLog).toBe(
      "sudo -n -u besu timeout 10 tail -c 1048576 -- '/opt/lacchain/logs/besu_info.log' | tail -n 200",
    );
    expect(commands.recordedEnode).toBe(
      "sudo -n -u besu dd if='/opt/lacchain/data/enode' iflag=nofollow,nonblock bs=512 count=1 status=none",
    );
    expect(commands.followLogs).toBe("sudo -n -u besu tail -n 100 -F '/opt/lacchain/logs/besu_info.log'");
    expect(commands.rpc('net_peerCount')).toBe(
      `curl -s --max-time ${RPC_ANSWER_SECONDS} -H 'Host: localhost' -H 'Content-Type: application/json' --data '{"jsonrpc":"2.0","method":"net_peerCount","params":[],"id":1}' http://127.0.0.1:4545/`,
    );
  });

  it('as root, reads and follows the log and the enode as the service user with runuser', () => {
    const commands = sshCommands({ ...validator, user: 'root' });
    expect(commands.logs).toBe(
      "runuser -u besu -- timeout 10 tail -c 1048576 -- '/opt/lacchain/logs/besu_info.log' | tail -n 100",
    );
    expect(commands.recordedEnode).toBe(
      "runuser -u besu -- dd if='/opt/lacchain/data/enode' iflag=nofollow,nonblock bs=512 count=1 status=none",
    );
    expect(commands.followLogs).toBe("runuser -u besu -- tail -n 100 -F '/opt/lacchain/logs/besu_info.log'");
  });

  it('trusts the pinned host key alone (no global known_hosts file, no KnownHostsCommand) and forwards nothing', () => {
    // Before the operator's options: ssh keeps the first value of an option, so ForwardAgent=yes in theirs is ignored.
    const args = sshArguments({ keyFile: 'id', options: ['Port=2222'], knownHostsFile: '/tmp/k/known_hosts' });
    expect(args.join(' ')).toBe(
      '-o BatchMode=yes -o ConnectTimeout=15 -o ServerAliveInterval=15 -o ServerAliveCountMax=4 ' +
        '-o ForwardAgent=no -o ClearAllForwardings=yes ' +
        '-o ForwardX11=no -o ForwardX11Trusted=no -o Tunnel=no -o GSSAPIDelegateCredentials=no -i id ' +
        '-o UserKnownHostsFile=/tmp/k/known_hosts ' +
        '-o GlobalKnownHostsFile=/dev/null -o KnownHostsCommand=none -o StrictHostKeyChecking=yes -o Port=2222 ' +
        '-o ControlMaster=no -o ControlPath=none',
    );
    // One connection shared by the command's sessions, after the operator's options (so theirs win: ControlMaster=no).
    expect(
      sshArguments({ options: ['ControlMaster=no'], sharedConnection: '/tmp/k/c' })
        .slice(-8)
        .join(' '),
    ).toBe(
      `-o ControlMaster=no -o ControlMaster=auto -o ControlPath=/tmp/k/c -o ControlPersist=${SHARED_CONNECTION_IDLE_SECONDS}`,
    );
    // Without a pinned key (the operator's explicit accept_any_host_key), nothing is checked.
    expect(sshArguments({ options: [] }).slice(20).join(' ')).toBe(
      '-o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o ControlMaster=no -o ControlPath=none',
    );
  });
});

describe('the disk of the data', () => {
  const GiB = 1024 ** 3;
  const disk = (freeShare: number) => ({
    dataBytes: 30 * GiB,
    availableBytes: Math.round(100 * GiB * freeShare),
    sizeBytes: 100 * GiB,
  });

  it('reads what du and df print on the node', () => {
    expect(parseDiskUsage('32212254720\n 53687091200 107374182400\n')).toEqual({
      dataBytes: 32212254720,
      availableBytes: 53687091200,
      sizeBytes: 107374182400,
    });
    expect(parseDiskUsage('du: cannot access')).toBeUndefined();
    expect(parseDiskUsage('1\n0 0\n')).toBeUndefined();
    expect(diskUsageCommand('/opt/lacchain/data')).toBe(
      'du -sb /opt/lacchain/data | cut -f1; df -B1 --output=avail,size /opt/lacchain/data | tail -n 1',
    );
  });

  it(`fails the check below the critical share (${DISK_FREE.critical * 100} %), and says low below the warning`, () => {
    expect(failing({ disk: disk(0.5) })).toEqual([]);
    const ok = evaluateHealth({ ...good, disk: disk(0.5) }, FIXES).find((v) => v.check === 'disk')!;
    expect(ok.detail).toBe('data 30.0 GiB; 50.0 GiB free of 100.0 GiB (50 %)');
    expect(failing({ disk: disk(DISK_FREE.warning - 0.01) })).toEqual([]);
    expect(
      evaluateHealth({ ...good, disk: disk(DISK_FREE.warning - 0.01) }, FIXES).find((v) => v.check === 'disk')!.detail,
    ).toMatch(/\(14 %\): below 15 %, low$/);
    expect(failing({ disk: disk(DISK_FREE.critical - 0.01) })).toEqual([
      "disk: data 30.0 GiB; 4.0 GiB free of 100.0 GiB (4 %): below the critical 5 %, a full disk can corrupt Besu's database",
    ]);
    // Not read (a pod without a shell, no rights): no verdict.
    expect(evaluateHealth(good, FIXES).some((v) => v.check === 'disk')).toBe(false);
  });
});

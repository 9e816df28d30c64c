/**
 * `npm run bench -- --only backups`: how long `npm run node -- backup` and `restore` take on the real SSH test host
 * (Debian 12, restic from Debian's package, the repository on the machine's own disk), for a node whose data folder
 * holds a filler of incompressible bytes beside the Besu stand-in's own files (real Besu cannot be obtained here: a
 * RocksDB database compresses its blocks, so random bytes are the honest stand-in for its size). Measured: a first
 * backup, a second one with nothing changed (restic's deduplication), and a restore after the data folder was removed
 * (the key given back from the operator's copy), each as the operator sees it, ssh included.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DEFAULT_NODE_HOME } from '../core/catalog/defaults';
import { recordProgram } from '../testing/pulumi';
import { declareProgram } from '../testing/program';
import { nodeKeyOf, remoteCommands, runRemoteSteps } from '../testing/replay';
import { startTestHost, TestHost } from '../testing/host/testHost';
import type { FileServer } from '../testing/host/fileServer';
import { packStandinReleases, startReleaseServer } from '../testing/standinReleases';
import { sshWriterStack } from '../testing/sshStacks';
import { fixed, machine, now, PartResult, progress, runTimed, table, withoutTestHosts } from './common';
import { nodeToolArgs, operatorStackFile } from '../testing/nodeTool';

const HOST_NAME = 'benchbackup';
const HOST_INDEX = 44;
const RELEASE = '24.1.0';
/** The filler's size in MiB. */
const FILLER_MIB = 1024;

export async function benchBackups(): Promise<PartResult> {
  const heading = '## Backups and restore on the real SSH test host';
  const skipped = await withoutTestHosts('backups', heading);
  if (skipped) return skipped;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-bench-backups-'));
  let host: TestHost | undefined;
  let files: FileServer | undefined;
  try {
    await packStandinReleases([RELEASE], work);
    host = await startTestHost(HOST_NAME, HOST_INDEX);
    files = await startReleaseServer(host, work);
    const config = sshWriterStack(host, {
      version: RELEASE,
      releaseBaseUrl: files.url,
      releaseDir: work,
      nodeName: 'bench-writer',
      dnsName: 'writer.bench.test',
    });
    const declared = await declareProgram(recordProgram(), 'testnet', config, {});
    const steps = remoteCommands(declared);
    progress('backups: provisioning the node');
    await runRemoteSteps(host, steps);
    const key = nodeKeyOf(steps);
    const keyFile = path.join(work, 'writer.key');
    fs.writeFileSync(keyFile, key, { mode: 0o600 });
    const configFile = operatorStackFile(work, config);
    const sh = async (command: string) => {
      const result = await host!.ssh(command, { timeoutMs: 600_000 });
      if (result.code !== 0) throw new Error(`ssh ${command}: exit ${result.code}: ${result.stderr}`);
      return result.stdout.trim();
    };
    await sh(
      `runuser -u besu -- head -c ${FILLER_MIB}M /dev/urandom > ${DEFAULT_NODE_HOME}/data/filler.bin && chown besu:besu ${DEFAULT_NODE_HOME}/data/filler.bin`,
    );
    const dataBytes = Number(await sh(`du -sb ${DEFAULT_NODE_HOME}/data | cut -f1`));
    const node = async (...args: string[]) => {
      const result = await runTimed('npm', [
        'run',
        '--silent',
        'node',
        '--',
        ...args,
        ...nodeToolArgs(configFile, host!.privateKeyFile),
      ]);
      if (result.code !== 0)
        throw new Error(`npm run node -- ${args.join(' ')}: exit ${result.code}\n${result.stdout}${result.stderr}`);
      progress(`backups: npm run node -- ${args.join(' ')}: ${fixed(result.seconds)} s`);
      return result;
    };
    const first = await node('backup');
    const again = await node('backup');
    const repositoryBytes = Number(await sh('du -sb /var/backups/lacchain/besu | cut -f1'));
    await sh(`systemctl stop besu && rm -rf ${DEFAULT_NODE_HOME}/data`);
    const restore = await node('restore', '--key-file', keyFile);
    const mib = dataBytes / 1024 / 1024;
    const rows = [
      ['backup (first)', fixed(first.seconds), fixed(mib / first.seconds, 1)],
      ['backup (nothing changed)', fixed(again.seconds), fixed(mib / again.seconds, 1)],
      [
        "restore (data/ removed, key from the operator's copy)",
        fixed(restore.seconds),
        fixed(mib / restore.seconds, 1),
      ],
    ];
    return {
      name: 'backups',
      markdown: [
        heading,
        '',
        `Measured ${now()} on ${await machine()}. One run each, as the operator sees it (\`npm run node\`, ssh`,
        `included, the node stopped and started by the command). Data folder ${fixed(mib, 0)} MiB (a ${FILLER_MIB} MiB filler`,
        `of random bytes beside the Besu stand-in's own files: the stand-in's figures, not Besu's); restic's repository on`,
        `the host's own disk afterwards ${fixed(repositoryBytes / 1024 / 1024, 0)} MiB.`,
        '',
        table(['operation', 'seconds', 'MiB/s of data'], rows),
        '',
      ].join('\n'),
    };
  } finally {
    await files?.close();
    await host?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * A node's files on a real test host as the node-files, release and node-key steps leave them, without provisioning
 * it: the service user, the node home (root's) with the service user's data folder, the release's `current` link, the
 * key and the enode record, the backup environment and the node's real backup command (nodeBackupCommand), and a small
 * JSON-RPC stand-in as the node's service (as the service user) answering the enode recorded in the data folder. For
 * the suites that run the backup command or a single step's script as root against what the service user controls
 * (tests/e2e/restoreKeyCopy.test.ts, tests/e2e/hostileUser.test.ts). restic comes from the host's Debian.
 */
import { DEFAULT_SERVICE_USER } from '../core/catalog/defaults';
import { MACHINE_BACKUP_FILES } from '../core/catalog/backups';
import { PORTS } from '../core/catalog/ports';
import { backupPaths, nodeBackupCommand } from '../core/remote/backups';
import { nodePaths } from '../core/remote/paths';
import { shellQuote } from '../core/remote/shell';
import { loadStack } from '../core/settings/load';
import type { SshNodeSettings } from '../core/settings/model';
import { KEY_ONE_PUBLIC, memoryFiles, rawConfig, sshValidatorEntry, sshValidatorStack } from './fixtures';
import type { TestHost } from './host/testHost';

/** The node's service user. */
export const SERVICE_USER = DEFAULT_SERVICE_USER;

/** A shell command writing `text` to `file` as the service user (mode 0600 when it makes the file). */
export const writeAsUser = (file: string, text: string) =>
  `runuser -u ${SERVICE_USER} -- sh -c 'umask 077; printf "%s" "$1" >"$2"' sh ${shellQuote(text)} ${shellQuote(file)}`;

/**
 * The node as the settings load it: the default node home and service, the shortest start time-out, and `entry`'s
 * fields of the node entry (with `keyCustody: machine`, the stack imports no key for it).
 */
export function layoutNode(entry: Record<string, unknown> = {}): SshNodeSettings {
  const config = sshValidatorStack({ ...sshValidatorEntry({ start_timeout_seconds: 30 }), ...entry });
  if (entry.keyCustody === 'machine') delete config['lacchain:nodeKeys'];
  const { settings } = loadStack('testnet', rawConfig(config, 'Pulumi.testnet.yaml'), memoryFiles({}));
  return settings.nodes[0] as SshNodeSettings;
}

/** Where the layout's files of `node` are, its backup command, the enode it records (KEY_ONE's) and its chain data. */
export function layoutPaths(node: SshNodeSettings) {
  const paths = nodePaths(node);
  return {
    paths,
    command: backupPaths(node).command,
    enode: `enode://${KEY_ONE_PUBLIC}@${node.p2pHost}:${node.p2pPort}`,
    dbFile: `${paths.dataDir}/database/chain.txt`,
  };
}

/** Runs a root shell script on the host; throws with its output when it fails, else gives its standard output. */
export async function asRoot(host: TestHost, script: string): Promise<string> {
  const result = await host.ssh('bash -s', { input: `set -euo pipefail\n${script}` });
  if (result.code !== 0) throw new Error(`exit ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/**
 * Lays out `node` on the host with release `release` installed (an empty `besu`), `key` as its key, `enode` recorded,
 * `data` in `database/chain.txt`, the backup environment (password `test-password`) and the backup command; starts
 * the RPC stand-in as the node's service.
 */
export async function layOutNode(
  host: TestHost,
  node: SshNodeSettings,
  files: { release: string; key: string; enode: string; data: string },
): Promise<void> {
  const paths = nodePaths(node);
  const user = SERVICE_USER;
  await asRoot(
    host,
    'apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q restic curl >/dev/null',
  );
  const rpc = [
    'import http.server, json',
    'class Handler(http.server.BaseHTTPRequestHandler):',
    '    def do_POST(self):',
    "        request = json.loads(self.rfile.read(int(self.headers['Content-Length'])))",
    `        answers = {'net_enode': open(${JSON.stringify(paths.enode)}).read().strip(), 'eth_blockNumber': '0x10'}`,
    "        body = json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': answers.get(request['method'])})",
    '        self.send_response(200)',
    "        self.send_header('Content-Type', 'application/json')",
    '        self.end_headers()',
    '        self.wfile.write(body.encode())',
    `http.server.HTTPServer(('127.0.0.1', ${PORTS.rpcHttp}), Handler).serve_forever()`,
  ].join('\n');
  const unit = ['[Service]', `User=${user}`, `ExecStart=/usr/bin/python3 ${paths.binDir}/rpc-standin.py`].join('\n');
  const environment = MACHINE_BACKUP_FILES.environment(node.serviceName);
  await asRoot(
    host,
    `
useradd --system --home-dir ${paths.home} --no-create-home --shell /usr/sbin/nologin ${user}
install -d -m 0750 -o root -g ${user} ${paths.home}
install -d -m 0750 -o ${user} -g ${user} ${paths.dataDir} ${paths.dataDir}/database
install -d -m 0755 -o root -g root ${paths.binDir} ${paths.releasesDir}/besu-${files.release}/bin
printf '#!/bin/sh\\n' >${paths.releasesDir}/besu-${files.release}/bin/besu
chmod 0755 ${paths.releasesDir}/besu-${files.release}/bin/besu
ln -sfn ${paths.releasesDir}/besu-${files.release} ${paths.releasesDir}/current
${writeAsUser(paths.key, files.key)}
${writeAsUser(paths.enode, `${files.enode}\n`)}
${writeAsUser(layoutPaths(node).dbFile, files.data)}
install -m 0640 -o root -g ${user} /dev/null ${paths.config}
install -d -m 0755 /etc/lacchain
printf 'RESTIC_REPOSITORY=%s\\nRESTIC_PASSWORD=%s\\n' ${node.backups.repository} test-password >${environment}
chmod 0600 ${environment}
cat >${paths.binDir}/rpc-standin.py <<'PYTHON'
${rpc}
PYTHON
cat >/etc/systemd/system/${node.serviceName}.service <<'UNIT'
${unit}
UNIT
systemctl daemon-reload
systemctl start ${node.serviceName}
`,
  );
  const command = backupPaths(node).command;
  await host.ssh(`cat >${command} && chmod 0700 ${command}`, { input: nodeBackupCommand(node) });
}

/**
 * The body of `npm run node` (cli/node.ts holds its options and help): day-2 operations on a node of a stack, from the
 * operator's machine, with the real clients (ssh, kubectl) and the names the program created. Reads the same settings
 * as the program; needs no Pulumi state or cloud login.
 */
import {
  evaluateHealth,
  healthy,
  lastImportAge,
  Observations,
  recoveryRule,
  awaitingPermissioning,
  AWAITING_PERMISSIONING_RECOVERY,
  Verdict,
} from '../../core/operations/health';
import { hexQuantity, syncState } from '../../core/operations/rpc';
import { diskText } from '../../core/operations/disk';
import { withoutControlSequences } from '../../core/operations/terminalText';
import { loadOperatorStack } from '../operatorStack';
import type { NodeSettings, StackSettings } from '../../core/settings/model';
import { CommandLine, EXIT, UsageError } from '../cli';
import { suggestion } from '../../core/didYouMean';
import { NODE_OPTIONS, NODE_TOOL, Operation } from './spec';
import { nodeClient } from '../operations/nodeClient';
import type { NodeClient } from '../operations/nodeClientTypes';
import { chooseBackup, chooseRollback, listBackups, restoreBackup, takeBackup } from '../operations/backups';
import { expandHome, readKeyFile } from '../keyFile';
import { KEY_CUSTODY_FACTS } from '../../core/catalog/keyCustody';
import { fleetRow } from '../operations/fleet';
import { fleetHealthy, fleetTable, withRollout } from '../../core/operations/fleet';
import { CauseObservations, enodeAddressIsTheNodes, fixesFor } from '../../core/operations/causes';
import { waitForStart } from './waitForStart';
import { enodeParts } from '../../core/operations/permissioning';
import { askPermissioning } from '../operations/permissioning';
import { probeTcp, probeUdp } from '../operations/probe';

/** The operations that, without --node, act on every node of the stack in turn. */
const EVERY_NODE: readonly Operation[] = ['backup', 'backups'];
/** Default observation window of the block-sync check (blocks come every 2 s). */
const DEFAULT_WINDOW_SECONDS = 10;

/** Runs one operation of `npm run node`. */
export async function run(line: CommandLine<typeof NODE_OPTIONS>): Promise<number> {
  const { values } = line;
  const operation = line.operation as Operation;
  if (!values.stack) throw new UsageError(`--stack is required (${NODE_TOOL.command} --help shows the usage)`);
  const window = values.window === undefined ? DEFAULT_WINDOW_SECONDS : Number(values.window);
  if (!Number.isInteger(window) || window < 1 || window > 600) {
    throw new UsageError(`--window: given ${JSON.stringify(values.window)}; allowed: whole seconds from 1 to 600`);
  }
  // The operator's own ssh logs in (agent or --ssh-key): the stack's SSH private key is pulumi up's, not needed here.
  const { stack, settings } = loadOperatorStack(values.stack, values.config);
  const rpcUrls = readRpcUrls(values['rpc-url'] ?? [], settings);
  const clientOf = (node: NodeSettings) =>
    nodeClient(node, {
      stack,
      configFile: settings.configFile,
      kubeContext: settings.kubeContext,
      ssh: { keyFile: values['ssh-key'], options: values['ssh-option'] ?? [] },
      rpcUrl: rpcUrls.get(node.name) ?? rpcUrls.get(''),
    });
  if (values.json && !values.all) throw new UsageError('--json goes with --all');
  if (values.all) {
    if (values.node !== undefined) throw new UsageError('--all is every node: give no --node');
    // Every node at once: each through its own client, in parallel; one that cannot be reached is a row saying so.
    const asked = await Promise.all(settings.nodes.map((each) => fleetRow(each, () => clientOf(each))));
    // A rollout in progress: which node it is at and which wait for it, below the table.
    const { rows, lines } = withRollout(settings.nodes, asked, stack);
    if (values.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    else [...fleetTable(rows), ...lines].forEach(say);
    return fleetHealthy(rows) ? EXIT.ok : EXIT.failed;
  }
  if (EVERY_NODE.includes(operation) && values.node === undefined) {
    for (const each of settings.nodes) {
      const client = clientOf(each);
      await client.reach();
      if (operation === 'backup') await takeBackup(each, client);
      else await listBackups(each, client);
    }
    return EXIT.ok;
  }
  const node = pickNode(settings, values.node, operation);
  const clusterMove = values['from-kubernetes'] || values['to-kubernetes'] || node.target === 'kubernetes';
  if (operation === 'move' && values['new-key'] && clusterMove) {
    throw new UsageError(
      '--new-key: only a move from one machine to another makes a new key (not into or out of a cluster)',
    );
  }
  // A move's modules (the stack file's editor, the engine's runs) are loaded for a move only: not at every command's start.
  if (operation === 'move' && values['from-kubernetes']) {
    const { moveFromClusterCommand } = await import('./moveFromClusterCommand');
    await moveFromClusterCommand({ stack, settings, node, values, rpcUrl: rpcUrls.get(node.name) ?? rpcUrls.get('') });
    return EXIT.ok;
  }
  if (operation === 'move' && (values['to-kubernetes'] || node.target === 'kubernetes')) {
    const { moveToClusterCommand } = await import('./moveToClusterCommand');
    await moveToClusterCommand({ stack, settings, node, values, rpcUrl: rpcUrls.get(node.name) ?? rpcUrls.get('') });
    return EXIT.ok;
  }
  if (operation === 'move') {
    const { moveCommand } = await import('./machineMoveCommand');
    await moveCommand(stack, settings.configFile, node, values);
    return EXIT.ok;
  }
  const client = clientOf(node);
  // Once, before the operation: a node that cannot be reached, or is not deployed, is one line saying so (exit 1).
  await client.reach();
  const nodeKey = values['key-file'] === undefined ? undefined : readKeyFile(expandHome(values['key-file']));

  switch (operation) {
    case 'backup':
      await takeBackup(node, client);
      return EXIT.ok;
    case 'backups':
      await listBackups(node, client);
      return EXIT.ok;
    case 'restore':
      await restoreBackup(node, client, await chooseBackup(node, client, values.backup), nodeKey);
      return EXIT.ok;
    case 'rollback':
      await restoreBackup(node, client, await chooseRollback(node, client), nodeKey);
      return EXIT.ok;
    case 'logs':
      return client.showLogs(values.follow ?? false);
    case 'start':
      await client.start();
      say(`node ${node.name}: started (${client.where})`);
      return EXIT.ok;
    case 'restart':
      await client.restart();
      say(`node ${node.name}: restarted (${client.where})`);
      return EXIT.ok;
    case 'status':
      // One look: a Kubernetes node's pod and Service read once for all of status's questions.
      return status(node, client.look?.() ?? client);
    case 'check':
      return check(node, client, settings, window, values.fix ?? false);
  }
}

/** Prints a line; what came from the node (its log, files and answers) cannot drive the operator's terminal. */
function say(line: string): void {
  process.stdout.write(`${withoutControlSequences(line)}\n`);
}

/**
 * `--rpc-url URL` (every Kubernetes node's RPC, e.g. a port-forward) and `--rpc-url NODE=URL` (one node's), as a map
 * from node name (or '' for every node) to URL.
 */
function readRpcUrls(given: readonly string[], settings: StackSettings): Map<string, string> {
  const names = settings.nodes.map((n) => n.name);
  const urls = new Map<string, string>();
  for (const each of given) {
    const named = /^([^=/:]+)=(.+)$/.exec(each);
    const [name, url] = named ? [named[1], named[2]] : ['', each];
    if (name !== '' && !names.includes(name)) {
      throw new UsageError(
        `--rpc-url: given ${JSON.stringify(each)}; allowed: URL or NODE=URL with NODE one of ${names.join(', ')}`,
      );
    }
    if (!/^https?:\/\/./.test(url)) {
      throw new UsageError(
        `--rpc-url: given ${JSON.stringify(each)}; allowed: an http:// or https:// URL, or NODE=URL`,
      );
    }
    urls.set(name, url);
  }
  return urls;
}

/** The node an operation acts on: --node, or the stack's only node. */
function pickNode(settings: StackSettings, name: string | undefined, operation: Operation): NodeSettings {
  const names = settings.nodes.map((n) => n.name);
  if (name === undefined) {
    if (settings.nodes.length === 1) return settings.nodes[0];
    const every = operation === 'status' ? ', or --all for every node at a glance' : '';
    throw new UsageError(
      `--node is required: stack ${settings.stack} has the nodes ${names.join(', ')}; give --node NAME${every}`,
    );
  }
  const node = settings.nodes.find((n) => n.name === name);
  if (!node) {
    throw new UsageError(
      `--node: given ${JSON.stringify(name)}${suggestion(name, names)}; allowed: ${names.join(', ')}`,
    );
  }
  return node;
}

async function status(node: NodeSettings, client: NodeClient): Promise<number> {
  const service = await client.serviceState();
  const ask = async (method: string) => client.rpc(method).catch((error: Error) => `unavailable (${error.message})`);
  const peers = await ask('net_peerCount');
  const block = await ask('eth_blockNumber');
  const lines = [
    `node ${node.name} (${node.typenode}, ${node.target}, ${node.network.name}): ${client.where}`,
    `  service  ${service.detail}`,
    `  peers    ${typeof peers === 'string' && peers.startsWith('0x') ? hexQuantity(peers) : peers}`,
    `  block    ${typeof block === 'string' && block.startsWith('0x') ? hexQuantity(block) : block}`,
    `  version  ${await version(client)}`,
    `  enode    ${await ask('net_enode')}`,
    `  disk     ${await client.diskUsage().then(diskText, (error: Error) => `unavailable (${error.message})`)}`,
  ];
  // Kubernetes: the Service on the enode's IP (docs/kubernetes.md#a-static-ip-on-each-cloud).
  const staticIp = await client.staticIp?.();
  if (staticIp) {
    lines.push(
      `  address  ${staticIp.ok ? 'ok' : 'FAIL'}: ${staticIp.detail}${staticIp.fix ? ` (fix: ${staticIp.fix})` : ''}`,
    );
  }
  const companions = await client
    .companionStates()
    .catch((error: Error) => [{ name: 'companions', running: false, detail: `unavailable (${error.message})` }]);
  for (const c of companions) lines.push(`  ${c.name}  ${c.detail}`);
  lines.forEach(say);
  return service.running && companions.every((c) => c.running) && staticIp?.ok !== false ? EXIT.ok : EXIT.failed;
}

/**
 * The node's version: what it says (web3_clientVersion), or, where that method is not enabled (validators and
 * bootnodes have no WEB3 API) or the node does not answer, the release deployed.
 */
async function version(client: NodeClient): Promise<string> {
  try {
    return String(await client.rpc('web3_clientVersion'));
  } catch (error) {
    const deployed = await client.releaseInUse().catch(() => undefined);
    return deployed ?? `unavailable (${(error as Error).message})`;
  }
}

/**
 * Why a node might have no peers: the contract's answers (always), and, when it has none, the address it leaves from,
 * 60606 TCP and UDP probed from here, and its clock.
 */
async function observeCauses(node: NodeSettings, client: NodeClient, o: Observations): Promise<CauseObservations> {
  const enode = o.expectedEnode ?? o.reportedEnode;
  // The enode's address is the node's p2p setting (the stack's enode is made from it).
  const [ip, port] = [node.p2pHost, node.p2pPort];
  const causes: CauseObservations = {
    peers: o.peerCount,
    syncing: o.syncing !== undefined && o.syncing !== false,
    ...(o.syncing ? { highestBlock: o.syncing.highestBlock } : {}),
    enodeIp: ip,
    permissioning:
      enode === undefined
        ? { error: 'the node has no enode to ask for' }
        : await askPermissioning(node, client, enode, o.peerCount),
  };
  const movedFrom = await client.movedFrom?.().catch(() => undefined);
  if (movedFrom !== undefined && enode !== undefined) causes.moved = { from: movedFrom, to: enode };
  if (o.peerCount === 0) {
    const firstBootnode = node.network.bootnodes[node.typenode][0];
    const clock = client.clock().catch(() => undefined);
    const egress = firstBootnode ? await client.egress(enodeParts(firstBootnode).ip).catch(() => undefined) : undefined;
    // An enode's address that is not the node's is not probed: it names another machine (or none), not this node.
    const probed = egress === undefined || enodeAddressIsTheNodes(ip, egress);
    const [tcp, udp] = probed ? await Promise.all([probeTcp(ip, port), probeUdp(ip, port)]) : [];
    Object.assign(causes, probed ? { tcp, udp } : {}, egress ? { egress } : {});
    const read = await clock;
    if (read) causes.clock = read;
  }
  return causes;
}

async function observe(node: NodeSettings, fresh: NodeClient, window: number): Promise<Observations> {
  // One look for one check: a Kubernetes node's pod and Service read once for all its questions (read anew by the
  // check after a --fix restart, which looks again).
  const client = fresh.look?.() ?? fresh;
  const [service, expectedEnode, companions, disk, staticIp] = await Promise.all([
    client.serviceState(),
    client.recordedEnode(),
    client.companionStates(),
    client.diskUsage().catch(() => undefined),
    client.staticIp?.(),
  ]);
  const observations: Observations = {
    service,
    windowSeconds: window,
    expectedEnode,
    companions,
    disk,
    ...(staticIp ? { staticIp } : {}),
  };
  try {
    observations.reportedEnode = String(await client.rpc('net_enode'));
    observations.peerCount = hexQuantity(await client.rpc('net_peerCount'));
    observations.blockFirst = hexQuantity(await client.rpc('eth_blockNumber'));
    await new Promise((resolve) => setTimeout(resolve, window * 1000));
    observations.blockSecond = hexQuantity(await client.rpc('eth_blockNumber'));
    observations.syncing = syncState(await client.rpc('eth_syncing'));
  } catch (error) {
    observations.rpcError = (error as Error).message;
  }
  const [log, now] = await Promise.all([client.recentLog().catch(() => ''), client.now()]);
  observations.lastImportAgeSeconds = lastImportAge(log, now);
  if (observations.rpcError === undefined) observations.causes = await observeCauses(node, client, observations);
  return observations;
}

function report(node: NodeSettings, verdicts: Verdict[]): void {
  say(`node ${node.name} (${node.typenode}, ${node.target}, ${node.network.name})`);
  // Where the key lives (docs/security.md#key-custody); the enode check below says whether the node answers with it.
  say(`  ${'key'.padEnd(14)} keyCustody ${node.keyCustody}: ${KEY_CUSTODY_FACTS[node.keyCustody].where}`);
  let previousFix: string | undefined;
  for (const v of verdicts) {
    say(`  ${v.check.padEnd(14)} ${v.ok ? 'ok  ' : 'FAIL'}  ${v.detail}`);
    if (v.fix !== undefined) say(`  ${''.padEnd(14)}       fix: ${v.fix === previousFix ? 'the same' : v.fix}`);
    previousFix = v.fix ?? previousFix;
  }
  say(`verdict: ${healthy(verdicts) ? 'healthy' : 'unhealthy'}`);
}

async function check(
  node: NodeSettings,
  client: NodeClient,
  settings: StackSettings,
  window: number,
  fix: boolean,
): Promise<number> {
  const fixes = fixesFor(node, settings.stack);
  let verdicts = evaluateHealth(await observe(node, client, window), fixes);
  report(node, verdicts);
  if (healthy(verdicts)) return EXIT.ok;
  if (awaitingPermissioning(verdicts)) {
    if (fix) say(`fix: not restarting node ${node.name}: a restart cannot permission it`);
    say(AWAITING_PERMISSIONING_RECOVERY);
    return EXIT.failed;
  }
  if (fix) {
    say(`fix: restarting node ${node.name}`);
    await client.restart();
    await waitForStart(client);
    verdicts = evaluateHealth(await observe(node, client, window), fixes);
    report(node, verdicts);
    if (healthy(verdicts)) return EXIT.ok;
  }
  say(recoveryRule(client.restartHint, settings.supportContact));
  return EXIT.failed;
}

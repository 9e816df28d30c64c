/**
 * A writer provisioned on a real test host, as the SSH end-to-end suites start from it (tests/e2e/sshNode.test.ts,
 * tests/e2e/sshNodeDay2.test.ts): the Besu stand-in's releases packed and served to the host, the monitoring
 * stand-ins (the client's image in a registry of the test's, the network's monitoring server), the network's push
 * gateway routed to a stand-in, the program declared as `pulumi up` declares it and its remote commands run over real
 * SSH, the node permissioned. Each suite gets a host of its own (its name and index), so the suites run side by side.
 * Registers the suite's beforeAll and afterAll; the state is read through `state()` once they ran.
 */
import * as fs from 'fs';
import * as path from 'path';
import { DEFAULT_NODE_HOME } from '../core/catalog/defaults';
import { METRICS_PUSH_PORT, NETWORKS } from '../core/catalog/networks';
import { settle } from '../tools/recording/engine';
import type { EthstatsServer } from './ethstatsServer';
import type { FileServer } from './host/fileServer';
import { TestHost, TestHostSystem } from './host/testHost';
import { progress } from './hostSuite';
import type { ImageRegistry } from './imageRegistry';
import { MonitoringStandins, startMonitoringStandins } from './monitoringStandins';
import { permissioned, Registration, registerOnHost } from './permissioning';
import { declareProgram, Declared } from './program';
import { recordProgram } from './pulumi';
import { PushGateway, startPushGateway } from './pushGateway';
import { permittedBeforeStart, remoteCommands, RemoteStep, runRemoteStep, runRemoteSteps } from './replay';
import { sshWriterStack } from './sshStacks';
import { startReleaseHost } from './releaseHost';

/** The node's name in the stack, and its home (the catalog's default, as the stacks under test leave it). */
export const NODE = 'writer';
export const HOME = DEFAULT_NODE_HOME;
/** The bearer token of the machine's metrics endpoint (lacchain:metricsToken). */
export const METRICS_TOKEN = 'e2e-metrics-token-0123456789abcdef0123456789';

/** What the suite's tests reach once the host is provisioned. */
export interface SshNodeHostState {
  host: TestHost;
  files: FileServer;
  standins: MonitoringStandins;
  registry: ImageRegistry;
  monitor: EthstatsServer;
  gateway: PushGateway;
  /** The folder of the packed releases and the suite's files. */
  work: string;
  /** The declaration the host was provisioned from, and the node's identity. */
  first: Declared;
  enode: string;
  address: string;
}

export interface SshNodeHostOptions {
  hostName: string;
  hostIndex: number;
  /** The release the host is provisioned with. */
  release: string;
  /** The releases packed and served (the provisioned one among them). */
  releases: string[];
  /** Archives served under another release's name: `{ name: release }`. */
  aliases?: Record<string, string>;
  /** The host's Debian release (default: Debian 12). */
  system?: TestHostSystem;
  /**
   * Boot from the disk with the packages already installed (testing/host/packagesDisk.ts; Debian 12 only), for suites
   * that test what comes after a first install: the deployment's packages step then finds them there.
   */
  packagesInstalled?: boolean;
  /** The stack stores no SSH key: `pulumi up` would log in with the operator's ssh agent (testing/sshStacks.ts). */
  sshLogin?: 'agent';
}

/** Provisions a writer on a host of the suite's own: registers the suite's beforeAll and afterAll. */
export function provisionedWriter(options: SshNodeHostOptions) {
  const recorded = recordProgram();
  let state: SshNodeHostState | undefined;
  const now = () => {
    if (!state) throw new Error('the SSH test host is not provisioned');
    return state;
  };

  const stack = (version: string) =>
    sshWriterStack(now().host, {
      version,
      releaseBaseUrl: now().files.url,
      releaseDir: now().work,
      nodeName: 'e2e-writer',
      dnsName: 'writer.e2e.test',
      ethstats: now().standins.ethstats,
      metricsToken: METRICS_TOKEN,
      sshLogin: options.sshLogin,
    });
  const declare = (version: string) => declareProgram(recorded, 'testnet', stack(version), {});
  const run = (step: RemoteStep) => runRemoteStep(now().host, step);
  const runAll = (steps: RemoteStep[]) => runRemoteSteps(now().host, steps);
  const sh = async (command: string) => {
    progress(`ssh: ${command.slice(0, 100)}`);
    return (await now().host.ssh(command, { timeoutMs: 60_000 })).stdout.trim();
  };
  const rpc = async (method: string) =>
    JSON.parse(
      await sh(
        `curl -s -H 'Host: localhost' -H 'Content-Type: application/json' --data '{"jsonrpc":"2.0","method":"${method}","params":[],"id":1}' http://127.0.0.1:4545/`,
      ),
    );
  /** What the network's node-permissioning contract holds (the stand-in's registry, part of the chain data). */
  const register = (nodes: Registration[]) => registerOnHost(now().host, `${HOME}/data`, nodes);
  /**
   * The node, the network's bootnodes and the host's network peer (testing/host/testHost.ts) registered from the first
   * block: the node is permissioned, and the network peer it dials becomes its peer.
   */
  const permission = () => register(permissioned(now().enode, 'open-protestnet', NODE, [now().host.networkPeer]));
  /**
   * Waits until the node has a real peer (the host's network peer, once registered: a static node refused before is
   * dialed again within about 35 s, go-ethereum's dial history), 90 s at most; its peer count.
   */
  const hasPeer = async (): Promise<number> => {
    let peers = 0;
    for (let i = 0; i < 180 && peers < 1; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 500));
      peers = Number.parseInt((await rpc('net_peerCount').catch(() => ({}))).result ?? '0x0', 16);
    }
    return peers;
  };
  /** Waits (15 s at most) until the node answers net_enode again, and returns what it answers. */
  const answersWithEnode = async (): Promise<string | undefined> => {
    for (let i = 0; i < 30 && (await rpc('net_enode').catch(() => ({}))).result !== now().enode; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return (await rpc('net_enode')).result;
  };

  /**
   * A unit's state once it settled: a start or stop in progress (`activating`, `deactivating`: a companion waits for
   * Besu to answer before it is up) waited out for 30 s at most; what `systemctl status` shows on an idle machine.
   */
  const unitState = (unit: string) =>
    sh(
      `for i in $(seq 60); do s=$(systemctl is-active ${unit}); case "$s" in activating | deactivating) sleep 0.5 ;; *) break ;; esac; done; echo "$s"`,
    );

  beforeAll(async () => {
    const { host, files, work } = await startReleaseHost(options.hostName, options.hostIndex, options.releases, {
      packagesInstalled: options.packagesInstalled,
      system: options.system,
    });
    for (const [name, release] of Object.entries(options.aliases ?? {})) {
      fs.copyFileSync(path.join(work, `besu-${release}.tar.gz`), path.join(work, `besu-${name}.tar.gz`));
    }
    const standins = await startMonitoringStandins(host, work);
    const gateway = await startPushGateway(host.gateway);
    state = {
      host,
      files,
      standins,
      registry: standins.registry,
      monitor: standins.monitor,
      gateway,
      work,
    } as SshNodeHostState;
    const first = await declare(options.release);
    state.first = first;
    state.enode = (await settle(first.outputs.nodes[NODE].enode)).value as string;
    state.address = (await settle(first.outputs.nodes[NODE].address)).value as string;
    // The network permissions the node before its first start: its network peer is its peer at once (sshNodeDay2
    // shows a node permissioned after its start).
    await runRemoteSteps(now().host, remoteCommands(first), permittedBeforeStart(NODE, permission));
    // The network's push gateway: its address routed to this machine and turned to the stand-in's, on the host only
    // (with the nftables the deployment installed).
    const pushHost = NETWORKS['open-protestnet'].metricsPushHost;
    // (Idempotent, and tried again: it once failed on a freshly booted host, with nothing on its standard error.)
    const route =
      `ip route replace ${pushHost}/32 via ${host.gateway} && nft add table ip e2e_gateway && ` +
      "nft add chain ip e2e_gateway output '{ type nat hook output priority -100; }' && " +
      'nft flush chain ip e2e_gateway output && ' +
      `nft add rule ip e2e_gateway output ip daddr ${pushHost} tcp dport ${METRICS_PUSH_PORT} dnat to ${host.gateway}:${gateway.port}`;
    let routed = await host.ssh(route);
    for (let attempt = 1; attempt < 3 && routed.code !== 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      routed = await host.ssh(route);
    }
    if (routed.code !== 0) {
      throw new Error(`cannot route the push gateway: exit ${routed.code}: ${routed.stdout}${routed.stderr}`);
    }
    if ((await hasPeer()) < 1) throw new Error("the node has no peer: the host's network peer did not connect");
  });

  afterAll(async () => {
    await state?.files?.close();
    await state?.gateway?.close();
    await state?.standins?.close();
    await state?.host?.stop();
    if (state?.work) fs.rmSync(state.work, { recursive: true, force: true });
  });

  return {
    state: now,
    recorded,
    stack,
    declare,
    run,
    runAll,
    sh,
    rpc,
    register,
    permission,
    hasPeer,
    answersWithEnode,
    unitState,
  };
}

/**
 * `npm run node -- move` (docs/moving.md) between two real test hosts: a writer (key custody stack) deployed on the
 * first, moved to the second with the tool's own steps over real SSH; `pulumi up` of the stack file the move wrote is
 * replayed on the new host as the engine runs it (testing/replay.ts). Shown: the chain height and a marker written
 * before the move are there after it; the same key (the enode's node id), its address changed, and the
 * re-permissioning request naming both enodes; the old service stopped before the new one's first start (each host's
 * journal: the intervals never overlap), and removed at the end with its data kept; the next `pulumi up` of the
 * stack file the move wrote changes nothing. Light: one release, no companions (Besu stand-in, a test fixture).
 */
import { MOVE_RELEASE, movedTo, moveHostsForSuite, moveWriterStack } from '../../testing/moveStack';
import { asRoot, hostRpc, unitTimes as unitsOf } from '../../testing/hostNode';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { DEFAULT_NODE_HOME } from '../../core/catalog/defaults';
import { MOVING_NODE_VARIABLE } from '../../core/catalog/move';
import { parseEnode } from '../../core/identity/nodeKey';
import type { SshNodeSettings } from '../../core/settings/model';
import { moveNode } from '../../cli/operations/move';
import type { MoveResult } from '../../cli/operations/moveShared';
import { ToolFailure } from '../../cli/cli';
import { nodeClient } from '../../cli/operations/nodeClient';
import { movedStackFile } from '../../cli/operations/moveStackFile';
import { loadOperatorStack } from '../../cli/operatorStack';
import type { TestHost } from '../../testing/host/testHost';
import { hostSuite, progress } from '../../testing/hostSuite';
import { permissioned, registerOnHost } from '../../testing/permissioning';
import { operatorStackFile } from '../../testing/nodeTool';
import { declareProgram } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import type { ReleaseHost } from '../../testing/releaseHost';
import { changedCommands, remoteCommands, RemoteStep, runRemoteSteps } from '../../testing/replay';

const suite = hostSuite('moving a node between real hosts');
jest.setTimeout(12 * 60 * 1000);

const RELEASE = MOVE_RELEASE;
const NODE = 'writer';
const DATA = `${DEFAULT_NODE_HOME}/data`;
const MARKER = 'written-before-the-move';

suite('npm run node -- move, from one machine to another (SSH to SSH)', () => {
  const recorded = recordProgram();
  let old: ReleaseHost;
  let target: TestHost;
  let dir: string;

  /** The stack of one writer on `host`, its releases served from the old host's server; pulumi up logs in by agent. */
  const stackOn = (host: TestHost): Record<string, unknown> => {
    return moveWriterStack(host, old, RELEASE, { nodeName: 'e2e-move', dnsName: 'move.e2e.test' });
  };
  const root = asRoot;
  const rpc = hostRpc;
  /** The epoch seconds of each Started and Stopped line of the besu unit in a host's journal. */
  const unitTimes = (host: TestHost) => unitsOf(host, 'besu');
  /** The stack's settings in stack file `file` (the one the move wrote), as `pulumi up` reads them. */
  const stackIn = (file: string) =>
    (yaml.load(fs.readFileSync(file, 'utf8')) as { config: Record<string, unknown> }).config;

  const hosts = moveHostsForSuite(['moveold', 'movenew'], [56, 57], 'move');
  beforeAll(() => {
    ({ old, target, dir } = hosts);
  });

  let result: MoveResult;
  let oldEnode: string;
  let headBefore: number;
  let provisioned: RemoteStep[];
  let configFile: string;

  it('moves the node with its data and key, the old one stopped before the new one starts', async () => {
    await runRemoteSteps(old.host, remoteCommands(await declareProgram(recorded, 'testnet', stackOn(old.host), {})));
    oldEnode = await rpc(old.host, 'net_enode');
    // A few blocks, and a marker in the data.
    for (let i = 0; i < 40 && Number.parseInt(await rpc(old.host, 'eth_blockNumber'), 16) < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await root(old.host, `runuser -u besu -- sh -c 'echo ${MARKER} > ${DATA}/move-marker'`);
    headBefore = Number.parseInt(await rpc(old.host, 'eth_blockNumber'), 16);

    configFile = operatorStackFile(dir, stackOn(old.host));
    const { movedText, from, to } = movedTo('testnet', configFile, NODE, target, path.join(dir, 'check.yaml'));
    const started = Date.now();
    result = await moveNode(
      { stack: 'testnet', from, to, configFile, movedText, ssh: { keyFile: old.host.privateKeyFile, options: [] } },
      {
        // pulumi up of the stack file the move wrote (the new machine in it), as the move runs it (its variable naming
        // the node) and the engine runs it on the new host.
        bringUp: async (_stack, file, node) => {
          process.env[MOVING_NODE_VARIABLE] = node;
          try {
            provisioned = remoteCommands(await declareProgram(recorded, 'testnet', stackIn(file), {}));
          } finally {
            delete process.env[MOVING_NODE_VARIABLE];
          }
          await runRemoteSteps(target, provisioned);
        },
      },
    );
    progress(`the move took ${((Date.now() - started) / 1000).toFixed(1)} s (Besu stand-in)`);
    console.log(`move SSH -> SSH took ${result.seconds.toFixed(1)} s (Besu stand-in)`);

    // The data: the marker and at least the height before the move.
    expect(await root(target, `cat ${DATA}/move-marker`)).toBe(MARKER);
    expect(Number.parseInt(await rpc(target, 'eth_blockNumber'), 16)).toBeGreaterThanOrEqual(headBefore);
    // The same key: the same node id, at the new address.
    const newEnode = await rpc(target, 'net_enode');
    expect(parseEnode(newEnode)?.nodeId).toBe(parseEnode(oldEnode)?.nodeId);
    expect(parseEnode(newEnode)?.host).toBe(target.ip);
    expect(result.newEnode).toBe(newEnode);
    // The re-permissioning request: the enode to remove and the one to add, where to send them.
    expect(result.repermissioning).toMatchObject({
      removeEnode: oldEnode,
      enode: newEnode,
      network: 'open-protestnet',
      nodeName: 'e2e-move',
    });
    expect(result.repermissioning?.procedure).toContain('tech.support@lac-net.net');

    // What check reads on the new machine: the enode the node had before it moved (core/operations/causes.ts).
    const client = nodeClient(to, {
      stack: 'testnet',
      configFile,
      ssh: { keyFile: old.host.privateKeyFile, options: [] },
    });
    expect(await client.movedFrom?.()).toBe(oldEnode);

    // Never both: every start of the new node after the old one's last stop, and no start of the old one after it.
    const oldTimes = await unitTimes(old.host);
    const newTimes = await unitTimes(target);
    const lastOldStop = Math.max(...oldTimes.filter((t) => !t.started).map((t) => t.at));
    expect(oldTimes.filter((t) => t.started && t.at > lastOldStop)).toEqual([]);
    const firstNewStart = Math.min(...newTimes.filter((t) => t.started).map((t) => t.at));
    expect(firstNewStart).toBeGreaterThan(lastOldStop);
    // The old machine: no service any more, its data kept.
    expect((await old.host.ssh('systemctl cat besu')).code).not.toBe(0);
    expect(await root(old.host, `cat ${DATA}/move-marker`)).toBe(MARKER);
  });

  it('has a real peer again once the network permissions its new enode (the request it printed)', async () => {
    const peers = async () => Number.parseInt(await rpc(target, 'net_peerCount'), 16);
    // Not yet permissioned at its new address: the contract (the stand-in's registry, carried with the data) holds
    // nothing for it, and the new machine's network peer (its only static node) is refused.
    expect(await peers()).toBe(0);
    // The network did what the request asked (no request: it holds the enode the node had): that enode allowed (from
    // block 0: at the node's own head too), beside the peer that stands for the network.
    const allowed = result.repermissioning?.enode ?? oldEnode;
    await registerOnHost(target, DATA, permissioned(allowed, 'open-protestnet', NODE, [target.networkPeer]));
    let count = 0;
    // A static node refused before is dialed again within about 35 s (go-ethereum's dial history): 90 s at most.
    for (let i = 0; i < 180 && count < 1; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 500));
      count = await peers().catch(() => 0);
    }
    expect(count).toBeGreaterThanOrEqual(1);
    // The network's side: its nodes keep the moved node only as the enode their contract holds (its id, the address
    // it connected from, its port), as the network's peer saw it: a node that announces another address than the one
    // it connects from, or a request naming another enode, has no peers on the network.
    const seen = target
      .networkPeerEvents()
      .filter((event) => event.event === 'up')
      .map((event) => event.enode);
    expect(seen).toContain(allowed);
  });

  it('the next pulumi up of the stack file the move wrote changes nothing', async () => {
    // A plain run (no move variable) of that file; and the same as a stack file written for the new machine by hand.
    const next = remoteCommands(await declareProgram(recorded, 'testnet', stackIn(configFile), {}));
    expect(changedCommands(provisioned, next).map((step) => step.name)).toEqual([]);
    const byHand = remoteCommands(await declareProgram(recorded, 'testnet', stackOn(target), {}));
    expect(changedCommands(provisioned, byHand).map((step) => step.name)).toEqual([]);
  });

  it('a move cut at its bring-up leaves one place runnable, says how to go on, and finishes when run again', async () => {
    // Back to the first host, its pulumi up failing the first time.
    const cutAt = Date.now() / 1000;
    const movedBack = movedStackFile(fs.readFileSync(configFile, 'utf8'), NODE, {
      host: old.host.ip,
      host_key: old.host.hostPublicKey,
      node_ip: old.host.ip,
    });
    const check = path.join(dir, 'back.yaml');
    fs.writeFileSync(check, movedBack);
    const from = loadOperatorStack('testnet', configFile).settings.nodes[0] as SshNodeSettings;
    const to = loadOperatorStack('testnet', check).settings.nodes[0] as SshNodeSettings;
    const ssh = { keyFile: old.host.privateKeyFile, options: [] };
    const error = await moveNode(
      { stack: 'testnet', from, to, configFile, movedText: movedBack, ssh },
      {
        bringUp: async () => {
          throw new ToolFailure('pulumi up --stack testnet failed (exit 255)');
        },
      },
    ).then(
      () => new Error('the move went through'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(ToolFailure);
    expect(error.message.split('\n').pop()).toBe(
      'the move stopped at "bring the node up on the new machine, its data restored before its first start": the old ' +
        'node is kept from starting, the new machine runs the node only once its data is restored; fix the cause above ' +
        'and run npm run node -- move --stack testnet --node writer again with the same flags to go on',
    );
    // Exactly one place runnable, and neither running: the node the move stopped does not start, even when asked.
    await target.ssh('systemctl start besu');
    expect((await target.ssh('systemctl is-active besu')).stdout.trim()).not.toBe('active');
    expect((await old.host.ssh('systemctl is-active besu')).stdout.trim()).not.toBe('active');
    // The stack file names the first host again; the place it had is kept beside it, which the command reads back.
    expect(fs.readFileSync(configFile, 'utf8')).toBe(movedBack);
    const before = loadOperatorStack('testnet', `${configFile}.before-move`).settings.nodes[0] as SshNodeSettings;
    expect(before.host).toBe(target.ip);

    const again = await moveNode(
      { stack: 'testnet', from: before, to, configFile, movedText: movedBack, ssh },
      {
        bringUp: async () => {
          provisioned = remoteCommands(await declareProgram(recorded, 'testnet', stackOn(old.host), {}));
          await runRemoteSteps(old.host, provisioned);
        },
      },
    );
    console.log(`move SSH -> SSH, run again after a cut, took ${again.seconds.toFixed(1)} s (Besu stand-in)`);
    expect(await root(old.host, `cat ${DATA}/move-marker`)).toBe(MARKER);
    expect(Number.parseInt(await rpc(old.host, 'eth_blockNumber'), 16)).toBeGreaterThanOrEqual(headBefore);
    expect(await rpc(old.host, 'net_enode')).toBe(oldEnode);
    // Never both: the first host's starts since the cut all after the second host's last stop.
    const stops = (await unitTimes(target)).filter((t) => !t.started).map((t) => t.at);
    const starts = (await unitTimes(old.host)).filter((t) => t.started && t.at > cutAt).map((t) => t.at);
    expect(starts.length).toBeGreaterThan(0);
    expect(Math.min(...starts)).toBeGreaterThan(Math.max(...stops));
    expect((await target.ssh('systemctl cat besu')).code).not.toBe(0);
  });
});

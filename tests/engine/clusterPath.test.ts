/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The cluster path under Pulumi's real engine and the real Kubernetes provider (issue 34): the program's own entry
 * (index.ts, program.ts here) as an Automation API inline program, run by the real Pulumi CLI with the provider built
 * from its Go module (engine.ts: commit PROVIDER_COMMIT of pulumi/pulumi-kubernetes, installed as plugin `kubernetes`
 * PLUGIN_VERSION, the version the program declares), against the test API server (testing/cluster/, one for the
 * file), the state in a file backend in a temporary folder. One testnet stack with a writer, a validator and a
 * bootnode on the cluster, their keys imported (lacchain:nodeKeys): such a stack needs neither the random provider
 * (the program loads it only for a key it generates) nor the command provider (SSH nodes only), which cannot be had
 * here. The tests are steps of one stack's life, in order: each starts from where the one before left it; the
 * seventh adds a mainnet stack that the program's mandatory rules refuse, the last moves the writer's key to a Secret
 * of the operator's (keyCustody secret).
 *
 * What kwok's workers cannot show (docs/kubernetes.md, "What the tests check on a real API server"): no container
 * runs, so no image is pulled (a tag or digest is never resolved), Besu never starts (the enode checked is the one the
 * program derives from the key, not one a running node announces), the pods' Running and Ready are kwok's, a volume
 * is kwok's (no data is written or kept on it), and the load balancer's IP is a kwok stage's, routing nothing.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { computeAddress, SigningKey } from 'ethers';
import type { EngineEvent, Stack } from '@pulumi/pulumi/automation';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { STACK_NETWORKS } from '../../core/catalog/networks';
import { NODE_TYPES, NodeType } from '../../core/catalog/nodeTypes';
import { PORTS } from '../../core/catalog/ports';
import { fieldOf, fieldWhen } from '../../testing/cluster/objects';
import { clusterForSuite } from '../../testing/cluster/suite';
import { runNpm } from '../../testing/run';
import { addressFor, valuesFor } from '../../testing/values';
import {
  changesBesideLastRunRead,
  EngineProject,
  engineProject,
  engineSuite,
  LAST_RUN_READ,
  lastRunAt,
  PLUGIN_VERSION,
  PROVIDER_COMMIT,
  serveGenesis,
  upAsMove,
  upStepsOf,
} from './engine';
import { engineProgram } from './program';
import { readingBack, setConfigs } from '../cli/pulumiCli';

jest.setTimeout(10 * 60 * 1000);
const engine = engineSuite('The cluster path under the real engine (real Pulumi CLI and Kubernetes provider)');

const STACK = 'testnet';
const NETWORK = STACK_NETWORKS[STACK];
const NAMESPACE = 'lacchain';
const STATEFUL_SET = 'kubernetes:apps/v1:StatefulSet';
/** The imported node keys (valid secp256k1 keys, for tests only). */
const KEYS: Record<NodeType, string> = {
  writer: `0x${'11'.repeat(32)}`,
  validator: `0x${'22'.repeat(32)}`,
  bootnode: `0x${'33'.repeat(32)}`,
};

/** A key's enode and address, derived by ethers (not by the program's own code). */
function identityOf(key: string, host: string, port: number) {
  const publicKey = new SigningKey(key).publicKey.slice(4); // without 0x04
  return { enode: `enode://${publicKey}@${host}:${port}`, address: computeAddress(key).toLowerCase() };
}

/** A resource's name in its URN (`urn:pulumi:<stack>::<project>::<type chain>::<name>`). */
const nameOf = (urn: string) => urn.split('::').pop()!;

engine.describe(
  `the cluster path under the real engine (provider ${PROVIDER_COMMIT} as kubernetes ${PLUGIN_VERSION})`,
  () => {
    const { cluster, itWithCluster } = clusterForSuite();
    let project: EngineProject;
    let stack: Stack;
    let genesis: Awaited<ReturnType<typeof serveGenesis>>;
    /** The plans and the hosted runs' events. */
    let scratch: string;
    /** The enode and address of each node after the first `up`. */
    const first: Record<string, { enode: string; address: string }> = {};

    /** The values files of the three nodes (testing/values.ts: pinned to worker-<type>, on 203.0.113.<n>). */
    function writeValues(extra: Record<string, unknown> = {}) {
      for (const type of NODE_TYPES) {
        fs.writeFileSync(path.join(project.dir, 'values', `${type}.yml`), yaml.dump(valuesFor(STACK, type, extra)));
      }
    }

    const get = (kind: string, name: string, jsonpath: string) =>
      fieldOf(cluster(), { kind, name, namespace: NAMESPACE }, jsonpath);

    /** Expects every node's StatefulSet to run Besu's image of `release`. */
    async function expectBesuImages(release: string) {
      for (const type of NODE_TYPES) {
        const image = await get(
          'statefulset',
          kubernetesNames(type).statefulSet,
          '{.spec.template.spec.containers[0].image}',
        );
        expect([type, image]).toEqual([type, `hyperledger/besu:${release}`]);
      }
    }

    const exists = async (kind: string, name: string) =>
      (await cluster().kubectl(['get', kind, name, '-n', NAMESPACE])).code === 0;

    /**
     * `up`, with the steps the engine took (resource pre-events other than `same`) as op, type and name, the run's one
     * read of its own last outputs (LAST_RUN_READ: a read, no change) set aside and checked to be there once; and the
     * changes the engine counted, that read set aside as well (changesBesideLastRunRead).
     */
    async function upWithSteps(): Promise<{
      outputs: Record<string, any>;
      steps: string[];
      changes: object;
      /** When the engine began and ended each step (ms since the epoch), by `op type name`. */
      timed: Map<string, { began: number; ended: number }>;
    }> {
      const steps: string[] = [];
      const timed = new Map<string, { began: number; ended: number }>();
      const reads: string[] = [];
      const result = await readingBack(stack, { outputs: 'values', summary: true }).up({
        onEvent: (event: EngineEvent) => {
          const step = event.resourcePreEvent?.metadata;
          if (step && step.op !== 'same') {
            const name = `${step.op} ${step.type} ${nameOf(step.urn)}`;
            if (name === LAST_RUN_READ) reads.push(name);
            else steps.push(name);
            timed.set(name, { began: Date.now(), ended: Infinity });
          }
          const done = event.resOutputsEvent?.metadata;
          const name = done && `${done.op} ${done.type} ${nameOf(done.urn)}`;
          if (name && timed.has(name)) timed.get(name)!.ended = Date.now();
        },
      });
      expect(result.summary.result).toBe('succeeded');
      expect(reads).toEqual([LAST_RUN_READ]);
      const outputs = Object.fromEntries(Object.entries(result.outputs).map(([k, v]) => [k, v.value]));
      return { outputs, steps: steps.sort(), changes: changesBesideLastRunRead(result.summary.resourceChanges), timed };
    }

    /** Each node's key as a secret of the stack's config, by its path `lacchain:nodeKeys.<node>`. */
    const nodeKeys = (key: (type: (typeof NODE_TYPES)[number]) => string) =>
      Object.fromEntries(NODE_TYPES.map((type) => [`lacchain:nodeKeys.${type}`, { value: key(type), secret: true }]));

    /** Each node's enode and address in the stack's outputs. */
    const identities = (outputs: Record<string, any>) =>
      Object.fromEntries(
        NODE_TYPES.map((type) => [type, { enode: outputs.nodes[type].enode, address: outputs.nodes[type].address }]),
      );

    beforeAll(async () => {
      scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-engine-test-'));
      genesis = await serveGenesis();
      project = engineProject(engine.provider(), cluster().kubeconfig);
      const config = {
        'lacchain:network': NETWORK,
        'lacchain:nodes': NODE_TYPES.map((type) => ({ name: type, typenode: type, target: 'kubernetes' })),
      };
      fs.writeFileSync(path.join(project.dir, `Pulumi.${STACK}.yaml`), yaml.dump({ config }));
      writeValues();
      stack = await project.stack(STACK, engineProgram(NETWORK, genesis.url, project.dir));
      // As an operator imports a key: `pulumi config set --secret --path 'lacchain:nodeKeys.<node>' < key file` (the
      // three in one run of the CLI).
      await setConfigs(
        stack,
        nodeKeys((type) => KEYS[type]),
        true,
      );
    }, 120_000);

    afterAll(async () => {
      await genesis?.close();
      project?.remove();
      if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
    });

    itWithCluster(
      '1. up deploys the three nodes: pinned to their workers, on their IPs, with the given keys',
      async () => {
        const { outputs, changes } = await upWithSteps();
        expect(changes).not.toHaveProperty('delete');
        // Its only provider plugin is Kubernetes': no random (the keys are imported), no command (no SSH node); beside
        // it the engine's built-in `pulumi` provider, which reads the stack's own last outputs (LAST_RUN_READ).
        const types: string[] = ((await stack.exportStack()).deployment.resources ?? []).map((r: any) => r.type);
        expect([...new Set(types.filter((type) => type.startsWith('pulumi:providers:')))].sort()).toEqual([
          'pulumi:providers:kubernetes',
          'pulumi:providers:pulumi',
        ]);
        for (const type of NODE_TYPES) {
          const names = kubernetesNames(type);
          const ip = addressFor(type);
          first[type] = { enode: outputs.nodes[type].enode, address: outputs.nodes[type].address };
          expect([type, first[type]]).toEqual([type, identityOf(KEYS[type], ip, PORTS.p2p)]);
          expect([type, await get('statefulset', names.statefulSet, '{.spec.template.spec.nodeName}')]).toEqual([
            type,
            `worker-${type}`,
          ]);
          const pod = await fieldWhen(
            cluster(),
            { kind: 'pod', name: names.pod, namespace: NAMESPACE },
            '{.status.phase} {.spec.nodeName}',
            (value) => value === `Running worker-${type}`,
          );
          expect([names.pod, pod]).toEqual([names.pod, `Running worker-${type}`]);
          expect([type, await get('service', names.service, '{.status.loadBalancer.ingress[0].ip}')]).toEqual([
            type,
            ip,
          ]);
        }
      },
    );

    itWithCluster('2. a second up changes nothing (the engine: 0 to create, update, replace or delete)', async () => {
      const { steps, changes } = await upWithSteps();
      expect(steps).toEqual([]);
      expect(Object.keys(changes)).toEqual(['same']);
    });

    itWithCluster(
      '3. a release bump updates only the StatefulSets, as the offline plan diff says, one after another (a rollout)',
      async () => {
        const stackFile = path.join(project.dir, `Pulumi.${STACK}.yaml`);
        const plan = (out: string, diff?: string) => {
          const run = runNpm('plan', [
            '--stack',
            STACK,
            '--config',
            stackFile,
            '--out',
            path.join(scratch, out),
            ...(diff ? ['--diff', path.join(scratch, diff)] : []),
          ]);
          // Its error output when it fails (policy warnings alone do not fail it).
          expect([out, run.code === 0 ? 'planned' : run.stderr]).toEqual([out, 'planned']);
        };
        plan('before-bump');
        writeValues({ releaseVersion: '24.1.0' });
        plan('after-bump', 'before-bump');
        const diff = JSON.parse(fs.readFileSync(path.join(scratch, 'after-bump', 'diff.json'), 'utf8'));
        const planned = diff.changed.map((r: { type: string; name: string }) => `update ${r.type} ${r.name}`).sort();
        expect([diff.created, diff.deleted]).toEqual([[], []]);

        const { steps, changes, timed } = await upWithSteps();
        expect(steps).toEqual(planned);
        expect(steps).toEqual(NODE_TYPES.map((type) => `update ${STATEFUL_SET} ${type}-node`).sort());
        expect(changes).toEqual({ update: NODE_TYPES.length, same: expect.any(Number) });
        await expectBesuImages('24.1.0');
        // A rollout (docs/operations.md): the StatefulSets change one after another, writer, bootnode, validator; the
        // engine begins each only once the one before is done (the provider waited for its pod of the new revision to
        // be Ready), and each new pod is made after the one before it was Ready.
        const order: NodeType[] = ['writer', 'bootnode', 'validator'];
        const spans = order.map((type) => timed.get(`update ${STATEFUL_SET} ${type}-node`)!);
        const pods = await Promise.all(
          order.map(async (type) => {
            const pod = { kind: 'pod', name: kubernetesNames(type).pod, namespace: NAMESPACE };
            const [created, ready] = (
              await fieldOf(
                cluster(),
                pod,
                '{.metadata.creationTimestamp} {.status.conditions[?(@.type=="Ready")].lastTransitionTime}',
              )
            ).split(' ');
            return { created: Date.parse(created), ready: Date.parse(ready) };
          }),
        );
        for (const i of [0, 1]) {
          expect([order[i], spans[i].ended <= spans[i + 1].began]).toEqual([order[i], true]);
          // The API's times are whole seconds: the next pod is made in the second its predecessor was Ready, or later.
          expect([order[i + 1], pods[i + 1].created >= pods[i].ready]).toEqual([order[i + 1], true]);
        }
      },
    );

    itWithCluster(
      '3b. a config.toml change makes a new ConfigMap per node, which each StatefulSet switches to in its turn, and deletes the old ones only once every StatefulSet moved',
      async () => {
        const configMapOf = (type: NodeType) =>
          get(
            'statefulset',
            kubernetesNames(type).statefulSet,
            '{.spec.template.spec.volumes[?(@.name=="config-source")].configMap.name}',
          );
        const configMaps = async () =>
          (
            await cluster().kubectlOk([
              'get',
              'configmaps',
              '-n',
              NAMESPACE,
              '-o',
              'jsonpath={.items[*].metadata.name}',
            ])
          )
            .split(' ')
            .filter((name) => NODE_TYPES.some((type) => name.startsWith(`${kubernetesNames(type).configMap}-`)))
            .sort();
        const before = await Promise.all(NODE_TYPES.map(configMapOf));
        expect(await configMaps()).toEqual([...before].sort());
        await stack.setConfig('lacchain:rpc.hostAllowlist[0]', { value: 'rpc.engine.test' }, true);
        try {
          const { steps, timed } = await upWithSteps();
          // Each node's ConfigMap replaced (immutable, named by its content: the new one made first), each
          // StatefulSet updated to it; nothing else.
          const configSteps = steps.filter((step) => step.includes(':ConfigMap '));
          expect(configSteps.map((step) => step.split(' ')[0]).sort()).toEqual(
            NODE_TYPES.flatMap(() => ['create-replacement', 'delete-replaced', 'replace']).sort(),
          );
          expect(steps.filter((step) => !step.includes(':ConfigMap ') && !step.startsWith('update '))).toEqual([]);
          // The old ones are deleted last: after every StatefulSet's update ended (its pod on the new one, Ready).
          const updates = steps.filter((step) => step.startsWith('update ') && step.includes(':StatefulSet '));
          expect(updates).toHaveLength(NODE_TYPES.length);
          const lastUpdate = Math.max(...updates.map((step) => timed.get(step)!.ended));
          const deletes = configSteps.filter((step) => step.startsWith('delete-replaced '));
          const firstDelete = Math.min(...deletes.map((step) => timed.get(step)!.began));
          expect(firstDelete).toBeGreaterThanOrEqual(lastUpdate);
          // Each StatefulSet names its new ConfigMap, and only those are left: none piles up.
          const after = await Promise.all(NODE_TYPES.map(configMapOf));
          NODE_TYPES.forEach((type, i) => expect([type, after[i]]).not.toEqual([type, before[i]]));
          expect(await configMaps()).toEqual([...after].sort());
        } finally {
          await stack.removeConfig('lacchain:rpc.hostAllowlist', true);
          await upWithSteps();
        }
      },
    );

    itWithCluster(
      "4. preview shows, for a change that opens a port, the node's reachableFromOutside difference",
      async () => {
        const bootnode = NODE_TYPES.indexOf('bootnode');
        await stack.setConfig(`lacchain:nodes[${bootnode}].rpc.exposure`, { value: 'public' }, true);
        try {
          const preview = await stack.preview({ diff: true });
          // The outputs' difference, as a reviewer reads it in the preview (`pulumi preview --diff`): the
          // bootnode's reachableFromOutside gains its RPC port, and no other port is added anywhere.
          const outputs = preview.stdout.slice(preview.stdout.indexOf('--outputs:--'));
          const bootnodeBlock = outputs.slice(outputs.indexOf('~ bootnode'), outputs.indexOf(' validator'));
          expect(bootnodeBlock).toMatch(
            /~ reachableFromOutside: \{\n\s*\+ 4545\/tcp\s*: "Besu JSON-RPC over plain HTTP \(API groups ETH, NET, EEA, PRIV; no authentication\)"/,
          );
          const added = outputs.split('\n').filter((line) => /^\s*\+ \d+\/(tcp|udp)/.test(line));
          expect(added).toEqual([expect.stringMatching(new RegExp(`\\+ ${PORTS.rpcHttp}/tcp`))]);
        } finally {
          await stack.removeConfig(`lacchain:nodes[${bootnode}].rpc`, true);
        }
      },
    );

    itWithCluster(
      '5. destroy keeps the key Secrets and data volumes; up with the kept keys brings the same enodes',
      async () => {
        const destroyed = await stack.destroy();
        expect(destroyed.summary.result).toBe('succeeded');
        for (const type of NODE_TYPES) {
          const names = kubernetesNames(type);
          expect([type, await exists('secret', names.keySecret), await exists('pvc', names.dataVolume)]).toEqual([
            type,
            true,
            true,
          ]);
          expect([
            type,
            await exists('statefulset', names.statefulSet),
            await exists('service', names.service),
          ]).toEqual([type, false, false]);
        }
        // The stack forgot everything: import each node's kept key as docs/kubernetes.md says (kubectl get secret … |
        // base64 -d | pulumi config set --secret --path 'lacchain:nodeKeys.<node>').
        await stack.removeConfig('lacchain:nodeKeys');
        const kept: Record<string, string> = {};
        for (const type of NODE_TYPES) {
          kept[type] = Buffer.from(
            await get('secret', kubernetesNames(type).keySecret, '{.data.key}'),
            'base64',
          ).toString('utf8');
        }
        await setConfigs(
          stack,
          nodeKeys((type) => kept[type]),
          true,
        );
        const { outputs } = await upWithSteps();
        expect(identities(outputs)).toEqual(first);
      },
    );

    itWithCluster('6. a run killed while a StatefulSet changes: pulumi cancel, refresh, up converge', async () => {
      writeValues({ releaseVersion: '25.5.0' });
      const events = path.join(scratch, 'killed-run.events');
      const killed = project.startUp(STACK, NETWORK, genesis.url, events);
      // The engine is still writing the log: only its whole lines (the last one may be half written).
      const updating = () =>
        fs.existsSync(events) &&
        fs
          .readFileSync(events, 'utf8')
          .split('\n')
          .slice(0, -1)
          .filter((line) => line.startsWith('{'))
          .some((line) => {
            const step = (JSON.parse(line) as EngineEvent).resourcePreEvent?.metadata;
            return step?.op === 'update' && step.type === STATEFUL_SET;
          });
      // The engine says a step began before its state file records it as pending: the kill waits for both, or a run
      // killed in between (seen on a loaded machine) left no pending operation to recover from.
      const recordedPending = () => {
        const stacks = path.join(new URL(project.env.PULUMI_BACKEND_URL).pathname, '.pulumi', 'stacks');
        const files = fs.existsSync(stacks) ? fs.readdirSync(stacks, { recursive: true, encoding: 'utf8' }) : [];
        return files
          .filter((file) => path.basename(file) === `${STACK}.json`)
          .some((file) => {
            try {
              const checkpoint = JSON.parse(fs.readFileSync(path.join(stacks, file), 'utf8'));
              return (checkpoint.checkpoint?.latest?.pending_operations ?? []).some(
                (op: any) => op.type === 'updating' && op.resource?.type === STATEFUL_SET,
              );
            } catch {
              return false; // being written
            }
          });
      };
      const deadline = Date.now() + 5 * 60_000;
      while (!(updating() && recordedPending()) && Date.now() < deadline && killed.running()) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect([updating(), recordedPending(), killed.stderr()]).toEqual([true, true, expect.any(String)]);
      // All the engine's processes at once, as a CI job's time-out or a lost machine ends them: the process hosting
      // the program, the CLI, and the provider (which the CLI starts in a process group of its own).
      expect(killed.kill()).toBeGreaterThanOrEqual(3);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Killed mid-update: the state still holds the StatefulSet's update as a pending operation.
      const state = (await stack.exportStack()).deployment;
      const pending = (state.pending_operations ?? []).map((op: any) => `${op.type} ${op.resource.type}`);
      expect(pending).toContain(`updating ${STATEFUL_SET}`);

      // docs/interrupted.md, "After an interrupted pulumi up": pulumi cancel, refresh, up.
      await stack.cancel();
      await readingBack(stack, { outputs: false, summary: false }).refresh();
      const { outputs } = await upWithSteps();
      // The outputs follow from the keys the config keeps (no Besu runs under kwok): a check of the outputs only.
      expect(identities(outputs)).toEqual(first);
      await expectBesuImages('25.5.0');
      // Converged: nothing left to do.
      const again = await stack.preview();
      expect(Object.keys(changesBesideLastRunRead(again.changeSummary))).toEqual(['same']);
    });

    itWithCluster(
      '7. on mainnet, up refuses a node-key image by tag (the mandatory rules) and creates nothing',
      async () => {
        const namespace = 'lacchain-mainnet';
        const valuesFile = 'values/mainnet-bootnode.yml';
        const writeMainnetValues = (pinned: boolean) =>
          fs.writeFileSync(
            path.join(project.dir, valuesFile),
            yaml.dump(
              valuesFor('mainnet', 'bootnode', {
                namespace,
                ...(pinned
                  ? { imageDigest: `sha256:${'d4'.repeat(32)}`, backupImageDigest: `sha256:${'a7'.repeat(32)}` }
                  : {}),
              }),
            ),
          );
        const config = {
          'lacchain:network': STACK_NETWORKS.mainnet,
          'lacchain:nodes': [{ name: 'bootnode', typenode: 'bootnode', target: 'kubernetes', values: valuesFile }],
        };
        fs.writeFileSync(path.join(project.dir, 'Pulumi.mainnet.yaml'), yaml.dump({ config }));
        writeMainnetValues(false);
        const mainnet = await project.stack('mainnet', engineProgram(STACK_NETWORKS.mainnet, genesis.url, project.dir));
        await mainnet.setConfig('lacchain:nodeKeys.bootnode', { value: KEYS.bootnode, secret: true }, true);

        // The refused run in a process of its own (the program's error would otherwise be this file's too).
        const run = project.startUp(
          'mainnet',
          STACK_NETWORKS.mainnet,
          genesis.url,
          path.join(scratch, 'mainnet.events'),
        );
        expect(await run.ended()).toBe(1);
        const refused = run.stderr();
        expect(refused).toMatch(/cannot be deployed: they break mandatory policy rules/);
        expect(refused).toContain(
          '[node-key-images-pinned] StatefulSet bootnode-node: container bootnode-besu receives the node key but runs image hyperledger/besu:23.4.1 by tag',
        );
        const declared = ((await mainnet.exportStack()).deployment.resources ?? []).map((r: any) => r.type);
        expect(declared.filter((type: string) => type.startsWith('kubernetes:'))).toEqual([]);
        expect((await cluster().kubectl(['get', 'namespace', namespace])).code).not.toBe(0);
        // The control: the same stack with its images pinned by digest passes the rules (its preview would create it).
        writeMainnetValues(true);
        const preview = await mainnet.preview();
        expect(preview.changeSummary.create).toBeGreaterThan(0);
      },
    );

    itWithCluster(
      "7b. a stack of cluster nodes only whose last run had its node on a machine: up refuses, pointing at move, and deploys nothing; the move's own two runs go through, and the next up changes nothing",
      async () => {
        // Another project (its own state) on the same cluster: the writer's entry written as a pod's by hand, `move`
        // not run. Its state is the last run's as an SSH stack leaves it, made with `pulumi stack import`: the Stack
        // resource whose `nodes` output puts the writer on a machine (this tier has no command provider to deploy one).
        const namespace = 'lacchain-moved';
        const machine = 'ssh operator@198.51.100.7:22';
        const moved = engineProject(engine.provider(), cluster().kubeconfig);
        try {
          const config = {
            'lacchain:network': NETWORK,
            'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
          };
          fs.writeFileSync(path.join(moved.dir, `Pulumi.${STACK}.yaml`), yaml.dump({ config }));
          fs.writeFileSync(
            path.join(moved.dir, 'values', 'writer.yml'),
            yaml.dump(valuesFor(STACK, 'writer', { namespace })),
          );
          const movedStack = await moved.stack(STACK, engineProgram(NETWORK, genesis.url, moved.dir));
          await movedStack.setConfig('lacchain:nodeKeys.writer', { value: KEYS.writer, secret: true }, true);
          await lastRunAt(movedStack, { writer: machine });

          // The refused run in a process of its own (the program's error would otherwise be this file's too).
          const run = moved.startUp(STACK, NETWORK, genesis.url, path.join(scratch, 'moved.events'));
          expect(await run.ended()).toBe(1);
          expect(run.stderr()).toContain(
            `node writer changed place in the stack file (${machine} -> kubernetes default/${namespace}): pulumi up ` +
              `would start it there while it still runs at ${machine} (two nodes, one key); move it with npm run node ` +
              `-- move --stack ${STACK} --node writer`,
          );
          const declared = ((await movedStack.exportStack()).deployment.resources ?? []).map((r: any) => r.type);
          expect(declared.filter((type: string) => type.startsWith('kubernetes:'))).toEqual([]);
          expect((await cluster().kubectl(['get', 'namespace', namespace])).code).not.toBe(0);

          // What `npm run node -- move --to-kubernetes` runs instead, its old node stopped (pulumiUpInCluster): the
          // first up names the moving node and holds its pod (the StatefulSet at 0 replicas, while the move fills the
          // data volume: not here, kwok runs no container), the second starts it.
          const statefulSet = { kind: 'statefulset', name: kubernetesNames('writer').statefulSet, namespace };
          for (const held of [true, false]) {
            expect((await upAsMove(movedStack, 'writer', held)).summary.result).toBe('succeeded');
            expect([held, await fieldOf(cluster(), statefulSet, '{.spec.replicas}')]).toEqual([held, held ? '0' : '1']);
          }
          // The next pulumi up, the operator's own (no move variable): its last run has the node in the pod, so it
          // goes through, and changes nothing (its one read of its last outputs aside).
          const { result: next, steps } = await upStepsOf(movedStack);
          expect(steps).toEqual([LAST_RUN_READ]);
          expect(Object.keys(changesBesideLastRunRead(next.summary.resourceChanges))).toEqual(['same']);
          expect(next.outputs.nodes.value.writer.place).toBe(`kubernetes default/${namespace}`);
        } finally {
          moved.remove();
        }
      },
    );

    itWithCluster(
      "8. keyCustody secret: the writer switches to the operator's own Secret, mounted as its key file; the program never makes, reads, changes or keeps it",
      async () => {
        // The operator's tooling (External Secrets, Vault, sealed-secrets) made the Secret; here kubectl does.
        const operatorSecret = 'vault-writer-key';
        const made = await cluster().kubectl([
          'create',
          'secret',
          'generic',
          operatorSecret,
          '-n',
          NAMESPACE,
          '--from-literal',
          `nodekey=${KEYS.writer}`,
        ]);
        expect(made.code).toBe(0);
        const version = await get('secret', operatorSecret, '{.metadata.resourceVersion}');
        const publicKey = `0x${new SigningKey(KEYS.writer).publicKey.slice(4)}`;
        // As docs/security.md says: the custody and the Secret in the node's entry, the imported key gone from the
        // config, a backup password of the operator's.
        const file = path.join(project.dir, `Pulumi.${STACK}.yaml`);
        const stackFile = yaml.load(fs.readFileSync(file, 'utf8')) as { config: Record<string, any> };
        stackFile.config['lacchain:nodes'] = stackFile.config['lacchain:nodes'].map((entry: any) =>
          entry.name === 'writer'
            ? { ...entry, keyCustody: 'secret', keySecret: operatorSecret, keySecretEntry: 'nodekey', publicKey }
            : entry,
        );
        fs.writeFileSync(file, yaml.dump(stackFile));
        await stack.removeConfig('lacchain:nodeKeys.writer', true);
        await stack.setConfig('lacchain:backupPassword', { value: 'a backup password for tests', secret: true });

        const audited = fs.readFileSync(cluster().auditLog, 'utf8').length;
        const { outputs, steps } = await upWithSteps();
        // The outputs follow from the public key the node's entry pins (no Besu runs under kwok): a check of the outputs.
        expect(identities(outputs)).toEqual(first);
        // What the engine and its provider asked of the API server about Secrets during that up: nothing of the
        // operator's Secret, by name or by listing the namespace's Secrets. Set aside: the test's own kubectl, and the
        // cluster's own controllers and scheduler, whose informers list and watch every kind again now and then
        // whatever the up does (a run on half the CPU saw kube-controller-manager's watch of all Secrets renewed
        // during this up).
        const notTheEngine = ['kubectl/', 'kube-controller-manager/', 'kube-scheduler/'];
        const requests = fs
          .readFileSync(cluster().auditLog, 'utf8')
          .slice(audited)
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
          .filter((event) => !notTheEngine.some((agent) => String(event.userAgent).startsWith(agent)));
        expect(requests.length).toBeGreaterThan(0);
        const touching = requests.filter(
          (event) =>
            event.objectRef?.name === operatorSecret ||
            (event.objectRef?.name === undefined && ['list', 'watch', 'get'].includes(event.verb)),
        );
        expect(touching.map((event) => `${event.verb} ${event.requestURI} by ${event.userAgent}`)).toEqual([]);
        const names = kubernetesNames('writer');
        // The pod takes the key from the operator's Secret, the one entry mounted as Besu's key file.
        expect(
          JSON.parse(
            await get('statefulset', names.statefulSet, "{.spec.template.spec.volumes[?(@.name=='key')].secret}"),
          ),
        ).toEqual({ secretName: operatorSecret, defaultMode: 0o440, items: [{ key: 'nodekey', path: 'key' }] });
        // The program's own key Secret is forgotten, and kept in the cluster (the operator deletes it once the pod
        // runs from theirs); the operator's Secret is untouched and in no state.
        expect(steps).toContain('delete kubernetes:core/v1:Secret writer-key');
        expect(await exists('secret', names.keySecret)).toBe(true);
        expect(await get('secret', operatorSecret, '{.metadata.resourceVersion}')).toBe(version);
        const state = (await stack.exportStack()).deployment.resources ?? [];
        const secretsInState = state
          .filter((r: any) => r.type === 'kubernetes:core/v1:Secret')
          .map((r: any) => r.outputs?.metadata?.name ?? nameOf(r.urn));
        expect(secretsInState).not.toContain(operatorSecret);
        expect(secretsInState).not.toContain(names.keySecret);
      },
    );
  },
);

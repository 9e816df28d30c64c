/**
 * What the tests of the moves between a machine and a cluster share (tests/kubelet/moveToPod.test.ts and
 * clusterMoveCuts.test.ts): the operator's clients given the test file's environment, `pulumi up` of the stack file a
 * move wrote (the program's manifests; out of the cluster, the node's objects it deletes), and when the node's pod
 * first started. A second machine is made ready to take the node by testing/moveStack.ts joinMoveHosts.
 */
import * as childProcess from 'child_process';
import * as fs from 'fs';
import * as yaml from 'js-yaml';
import { kubernetesNames } from '../core/catalog/kubernetes';
import { MOVE_HOLD_VARIABLE } from '../core/catalog/move';
import { withCpuRequestsThatFit } from './cluster/kubeletFit';
import type { KubeletNode } from './cluster/kubeletNode';
import { kubernetesManifests, Manifest } from './cluster/manifests';
import { KEY_ONE } from './fixtures';
import { progress } from './hostSuite';
import { declareProgram } from './program';
import type { RecordedResource } from '../tools/recording/engine';

/** Where clientsWithThisEnvironment keeps Node's own spawn. */
const REAL_SPAWN = Symbol.for('lacchain.test.realSpawn');

/**
 * The clients a move starts (ssh, kubectl) get the test file's environment (its KUBECONFIG, its PATH): a test file's
 * process.env is its own copy, and child_process would give them the runner's.
 */
export function clientsWithThisEnvironment(): void {
  // The module object itself (a namespace import's bindings cannot be redefined).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const clients = require('child_process') as typeof childProcess & { [REAL_SPAWN]?: typeof childProcess.spawn };
  // Node's own spawn, kept on the module: test files run one after another in one process share it, and a file
  // before this one left its spy there (jest.spyOn then hands back that spy, which must not call itself).
  const spawn = (clients[REAL_SPAWN] ??= clients.spawn);
  jest.spyOn(clients, 'spawn').mockImplementation(((command: string, args: unknown, options: unknown) =>
    Array.isArray(args)
      ? spawn(command, args, {
          ...(options as childProcess.SpawnOptions),
          env: { ...process.env, ...(options as childProcess.SpawnOptions)?.env },
        })
      : spawn(command, args as childProcess.SpawnOptions)) as typeof childProcess.spawn);
}

/**
 * `pulumi up` of the stack file a move wrote, as the kubelet tier applies it: the program's manifests for `node`'s
 * stack file `configFile` (KEY_ONE its key, as the engine has the encrypted one).
 */
export async function declaredFrom(
  recorded: RecordedResource[],
  node: KubeletNode,
  configFile: string,
): Promise<Manifest[]> {
  const config = (yaml.load(fs.readFileSync(configFile, 'utf8')) as { config: Record<string, unknown> }).config;
  const files = { [`values/${node.node}.yml`]: node.values() };
  const declared = await declareProgram(
    recorded,
    'testnet',
    { ...config, 'lacchain:nodeKeys': { [node.node]: KEY_ONE } },
    files,
  );
  return withCpuRequestsThatFit(kubernetesManifests(declared));
}

/**
 * The first `pulumi up` of a move into the cluster, as the kubelet tier applies it: the program's manifests with the
 * moving node held at no pod (MOVE_HOLD_VARIABLE naming it), applied; those manifests.
 */
export async function applyHeldFrom(
  recorded: RecordedResource[],
  node: KubeletNode,
  file: string,
): Promise<Manifest[]> {
  process.env[MOVE_HOLD_VARIABLE] = node.node;
  let held: Manifest[];
  try {
    held = await declaredFrom(recorded, node, file);
  } finally {
    delete process.env[MOVE_HOLD_VARIABLE];
  }
  await node.applyHeld(held);
  return held;
}

/**
 * Out of the cluster, what `pulumi up` of the stack file deletes: every object `deployed` for `node` but those it
 * retains (its volumes, its key Secret, the Namespace).
 */
export async function deleteClusterObjects(node: KubeletNode, deployed: Manifest[]): Promise<void> {
  const retained = (m: Manifest) =>
    ['PersistentVolumeClaim', 'Namespace'].includes(m.kind) || m.metadata.name === kubernetesNames(node.node).keySecret;
  const deleted = deployed.filter((each) => !retained(each));
  for (const m of deleted) progress(`pulumi up deletes ${m.kind} ${m.metadata.name}`);
  // One kubectl for all (it deletes them one after another, as pulumi up does), not one process each.
  const items = deleted.map(({ apiVersion, kind, metadata }) => ({
    apiVersion,
    kind,
    metadata: { name: metadata.name, namespace: node.namespace },
  }));
  await node
    .cluster()
    .kubectlOk(['delete', '-f', '-', '--ignore-not-found'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

/** When each init container of `node`'s pod started (epoch seconds): its first container's start is the earliest. */
export async function podInitStarts(node: KubeletNode): Promise<number[]> {
  const starts = await node
    .cluster()
    .kubectlOk([
      'get',
      'pod',
      '-n',
      node.namespace,
      node.pod.name,
      '-o',
      'jsonpath={range .status.initContainerStatuses[*]}{.state.terminated.startedAt}{"\\n"}{end}',
    ]);
  return starts
    .split('\n')
    .filter(Boolean)
    .map((at) => Date.parse(at) / 1000);
}

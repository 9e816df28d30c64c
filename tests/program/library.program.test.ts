/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The package's components (library/, issue 65 item 4) under the recording engine: a ClusterNode given a values
 * file's settings declares what the stack file with that values file declares (the same objects, names and inputs),
 * under the component and with the operator's provider, its static IP an output of the operator's program; its
 * enode, address and permissioning request are public outputs; an argument the stack file's schema refuses stops the
 * program with one line per problem naming the argument. A MachineNode's inventory, from its connection, is checked the same way.
 */
import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { NETWORKS } from '../../core/catalog/networks';
import { settle, unwrapSecrets } from '../../tools/recording/engine';
import { declareProgram } from '../../testing/program';
import { flush, recordProgram } from '../../testing/pulumi';
import { TEST_GENESIS, TEST_GENESIS_FILE } from '../../testing/fixtures';
import { addressFor, valuesFor } from '../../testing/values';
import { ClusterNode } from '../../library';
import { clusterNodeRequest } from '../../library/clusterNode';
import { machineNodeRequest } from '../../library/machineNode';
import { loadNodeSettings } from '../../library/nodeSettings';

const recorded = recordProgram('testnet');
const KEY = `0x${'66'.repeat(32)}`;
const NETWORK = 'open-protestnet';
// The library reads the network's genesis from `genesisFile` and checks it against the pinned digest: the test's.
NETWORKS[NETWORK].genesis = { ...TEST_GENESIS, url: 'https://genesis.invalid/never-fetched' };

/** The writer's values file of the test stacks. */
const { deploy } = valuesFor('testnet', 'writer');
const { publicIP, p2p, ...values } = deploy;
/** The deploy section less what the component's own arguments say (network, type, static IP). */
const rest = Object.fromEntries(
  Object.entries(values).filter(([key]) => key !== 'network' && key !== 'typenode'),
) as any;

/** The resources declared since `start`, without the component, the provider and the namespace around them. */
const nodeResources = (start: number) =>
  recorded
    .slice(start)
    .filter((r) => !r.type.startsWith('lacchain:index:ClusterNode') && r.type !== 'pulumi:providers:kubernetes')
    .filter((r) => r.type !== 'kubernetes:core/v1:Namespace');

/** What an operator's program does: a provider of its own cluster, the static IP an output of another resource. */
function operatorsNode(name: string, overrides: Record<string, unknown> = {}) {
  const provider = new k8s.Provider(`${name}-cluster`, { context: 'operators-cluster' });
  const eip = pulumi.output(new Promise<string>((resolve) => setTimeout(() => resolve(publicIP), 10)));
  return new ClusterNode(name, {
    network: NETWORK,
    typenode: 'writer',
    publicIP: eip,
    deploy: { ...rest, workerName: pulumi.output(rest.workerName), p2p: { port: p2p.port } },
    shared: { genesisFile: TEST_GENESIS_FILE },
    secrets: { nodeKey: pulumi.secret(KEY) },
    provider,
    ...overrides,
  } as any);
}

/** Waits until the node's outputs are known (its resources are declared inside them). */
async function settled(node: ClusterNode) {
  const outputs = {
    enode: await settle(node.enode),
    address: await settle(node.address),
    request: await settle(node.permissioningRequest),
    rpcUrl: await settle(node.rpcUrl),
  };
  await flush();
  return outputs;
}

it("declares what the stack file declares for the same settings, under the component, with the operator's provider", async () => {
  const stackFile = await declareProgram(
    recorded,
    'testnet',
    {
      'lacchain:network': NETWORK,
      'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
      'lacchain:nodeKeys': { writer: KEY },
    },
    { 'values/writer.yml': valuesFor('testnet', 'writer') },
  );
  const start = recorded.length;
  const node = operatorsNode('writer');
  const outputs = await settled(node);
  const viaLibrary = nodeResources(start);
  const viaStack = stackFile.resources.filter(
    (r) => r.type !== 'pulumi:providers:kubernetes' && r.type !== 'kubernetes:core/v1:Namespace',
  );
  const shape = (list: typeof viaLibrary) =>
    list
      .map((r) => ({ type: r.type, name: r.name, inputs: unwrapSecrets(r.inputs) }))
      .sort((a, b) => `${a.type}${a.name}`.localeCompare(`${b.type}${b.name}`));
  expect(viaLibrary.length).toBeGreaterThan(5);
  expect(shape(viaLibrary)).toEqual(shape(viaStack));
  const statefulSet = viaLibrary.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet')!;
  expect(statefulSet.options.provider).toBe('writer-cluster');
  const identity = viaLibrary.find((r) => r.type === 'lacchain:index:NodeIdentity')!;
  expect(identity.options.parent).toBe('writer');
  // The outputs: public, the same as the stack file's.
  expect(outputs.enode).toEqual({
    known: true,
    secret: false,
    value: (await settle(stackFile.outputs.nodes.writer.enode)).value,
  });
  expect(outputs.enode.value).toContain(`@${addressFor('writer')}:${p2p.port}`);
  expect(outputs.address.secret).toBe(false);
  expect(outputs.request.value).toMatchObject({ enode: outputs.enode.value, address: outputs.address.value });
});

it('refuses what the schema refuses, one line per problem naming the argument', () => {
  const request = clusterNodeRequest(
    'bad-writer',
    { network: NETWORK, typenode: 'writer', shared: { rpc: { exposure: 'everywhere' } as any } },
    { publicIP, p2pHost: publicIP, deploy: { ...rest, workerName: 'Not A Worker', nodeEmail: 'nobody' }, secrets: {} },
  );
  expect(() => loadNodeSettings(request)).toThrow(pulumi.RunError);
  const message = (() => {
    try {
      loadNodeSettings(request);
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  })();
  expect(message.split('\n')[0]).toBe('ClusterNode bad-writer cannot be deployed: its arguments:');
  expect(message).toContain('\ndeploy.workerName: given "Not A Worker"; allowed:');
  expect(message).toContain('\ndeploy.nodeEmail: given "nobody"; allowed:');
  expect(message).toContain('\nshared.rpc.exposure: given "everywhere"; allowed:');
});

it('names the static IP by its own argument, as the values file names it deploy.publicIP', () => {
  const request = clusterNodeRequest(
    'private-writer',
    { network: NETWORK, typenode: 'writer' },
    { publicIP: '300.1.2.3', p2pHost: '300.1.2.4', deploy: rest, secrets: {} },
  );
  expect(() => loadNodeSettings(request)).toThrow(/\npublicIP: given "300\.1\.2\.3"; allowed: /);
  expect(() => loadNodeSettings(request)).toThrow(/\np2pHost: given "300\.1\.2\.4"; allowed: /);
});

it("a MachineNode's inventory is checked by the same schema, from its connection", () => {
  const request = machineNodeRequest(
    'bad-machine',
    {
      network: NETWORK,
      typenode: 'writer',
      inventory: { node_name: 'org-writer', node_email: 'ops@example.org', accept_any_host_key: true },
    },
    { connection: { host: publicIP, user: 'Root User' }, secrets: {} },
  );
  expect(() => loadNodeSettings(request)).toThrow(
    /^MachineNode bad-machine cannot be deployed: its arguments:\n(.+\n)*connection\.user: given "Root User"; allowed:/,
  );
});

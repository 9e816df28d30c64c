/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The Kubernetes path under the recording engine: every resource and its inputs for each node type on both stacks,
 * the pinning, the static IP, the ports, the secrets, retainOnDelete, the outputs, and a version bump.
 */
import { ETHSTATS, RELAY_SIGNER, ROTATION_VALIDATOR } from '../../core/catalog/companions';
import { parse as parseToml } from 'smol-toml';
import { NETWORKS, STACK_NETWORKS, StackName } from '../../core/catalog/networks';
import { NODE_TYPES } from '../../core/catalog/nodeTypes';
import { deriveIdentity, privateKeyFromRandomHex } from '../../core/identity/nodeKey';
import { deterministicHex, settle } from '../../tools/recording/engine';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram, Declared, inputsOf, resource } from '../../testing/program';
import { kubernetesStack, valuesFor } from '../../testing/values';
import { KEY_ONE, testGenesisText } from '../../testing/fixtures';

const recorded = recordProgram();

const T = {
  secret: 'kubernetes:core/v1:Secret',
  configMap: 'kubernetes:core/v1:ConfigMap',
  volume: 'kubernetes:core/v1:PersistentVolumeClaim',
  statefulSet: 'kubernetes:apps/v1:StatefulSet',
  service: 'kubernetes:core/v1:Service',
  namespace: 'kubernetes:core/v1:Namespace',
  networkPolicy: 'kubernetes:networking.k8s.io/v1:NetworkPolicy',
  provider: 'pulumi:providers:kubernetes',
};

describe.each(['testnet', 'mainnet'] as StackName[])('stack %s, one Kubernetes node of each type', (stack) => {
  const network = NETWORKS[STACK_NETWORKS[stack]];
  let declared: Declared;
  beforeAll(async () => {
    const { config, files } = kubernetesStack(stack);
    declared = await declareProgram(recorded, stack, config, files);
  });

  it('declares exactly the expected resources', () => {
    const names = declared.resources.map((r) => `${r.type} ${r.name}`).sort();
    const expected = [
      `${T.provider} cluster`,
      `${T.namespace} namespace-lacchain`,
      ...NODE_TYPES.flatMap((t) => [
        `lacchain:index:NodeIdentity ${t}-identity`,
        `random:index/randomBytes:RandomBytes ${t}-identity-key`,
        `lacchain:index:KubernetesNode ${t}`,
        `${T.secret} ${t}-key`,
        `${T.configMap} ${t}-config`,
        `${T.volume} ${t}-data`,
        `${T.volume} ${t}-backups`,
        `${T.secret} ${t}-backup`,
        `${T.networkPolicy} ${t}-network-policy`,
        `${T.statefulSet} ${t}-node`,
        `${T.service} ${t}-service`,
      ]),
    ].sort();
    expect(names).toEqual(expected);
  });

  it.each(NODE_TYPES)('%s: a one-replica StatefulSet pinned to its worker, with the seed names', (typenode) => {
    const set = inputsOf(declared, T.statefulSet, `${typenode}-node`);
    expect(set.metadata).toMatchObject({ name: `besu-node-${typenode}`, namespace: 'lacchain' });
    expect(set.spec.replicas).toBe(1);
    const pod = set.spec.template.spec;
    expect(pod.nodeName).toBe(`worker-${typenode}`);
    expect(pod.securityContext).toEqual({
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    // Hardening: no service-account token, read-only root filesystems, nothing escalates.
    expect(pod.automountServiceAccountToken).toBe(false);
    for (const container of pod.containers) {
      expect(container.securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
    }
    const besu = pod.containers[0];
    expect(besu.name).toBe(`${typenode}-besu`);
    expect(besu.image).toBe(`hyperledger/besu:${network.defaultBesuVersion}`);
    expect(besu.command).toEqual(['/bin/sh', '/etc/besu/config/start-node.sh']);
    expect(besu.args).toEqual(['/opt/besu/bin/besu', '/etc/besu/key/key', '/etc/besu/config/config.toml']);
    expect(besu.resources.requests).toEqual({
      cpu: String(network.minimumHardware.cpu),
      memory: `${network.minimumHardware.memoryGiB}Gi`,
    });
    for (const probe of [besu.livenessProbe, besu.readinessProbe, besu.startupProbe]) {
      expect(probe.httpGet.port).toBe('rpc');
      expect(probe.httpGet.httpHeaders).toEqual([{ name: 'Host', value: 'localhost' }]);
    }
    expect(besu.livenessProbe.httpGet.path).toBe('/liveness');
    expect(besu.readinessProbe.httpGet.path).toMatch(/^\/readiness\?minPeers=1/);
    expect(pod.volumes.find((v: any) => v.name === 'key').secret.secretName).toBe(`besu-node-${typenode}-key`);
    expect(pod.volumes.find((v: any) => v.name === 'data').persistentVolumeClaim.claimName).toBe(
      `besu-node-${typenode}-data`,
    );
    // Besu, its metrics relay, the writer's proxy, the network's companion service of the node type (bootnodes have
    // none) and every node's monitoring client.
    const companion = { writer: ['writer-relay-signer'], validator: ['validator-rotation-validator'], bootnode: [] };
    expect(pod.containers.map((c: any) => c.name)).toEqual([
      `${typenode}-besu`,
      `${typenode}-metrics-relay`,
      ...(typenode === 'writer' ? ['writer-nginx'] : []),
      ...companion[typenode as keyof typeof companion],
      `${typenode}-ethstats`,
    ]);
  });

  it.each(NODE_TYPES)('%s: a LoadBalancer Service on the static IP with p2p TCP and UDP and RPC', (typenode) => {
    const service = inputsOf(declared, T.service, `${typenode}-service`);
    const ip = valuesFor(stack, typenode).deploy.publicIP;
    expect(service.spec.type).toBe('LoadBalancer');
    expect(service.spec.loadBalancerIP).toBe(ip);
    expect(service.metadata.annotations['metallb.universe.tf/loadBalancerIPs']).toBe(ip);
    expect(service.spec.externalTrafficPolicy).toBe('Local');
    expect(service.spec.publishNotReadyAddresses).toBe(true);
    const ports = service.spec.ports.map((p: any) => `${p.protocol}/${p.port}`);
    // A validator's and a bootnode's RPC stay inside the cluster by default: only a writer's is on the Service.
    expect(ports).toEqual(['TCP/60606', 'UDP/60606', ...(typenode === 'writer' ? ['TCP/4545', 'TCP/80'] : [])]);
  });

  it.each(NODE_TYPES)('%s: the key Secret holds the node key as a secret, kept on destroy', async (typenode) => {
    const secret = resource(declared, T.secret, `${typenode}-key`);
    expect(secret.inputs.stringData).toHaveProperty(['4dabf18193072939515e22adb298388d']);
    const key = inputsOf(declared, T.secret, `${typenode}-key`).stringData.key;
    expect(key).toBe(privateKeyFromRandomHex(deterministicHex(`${typenode}-identity-key`, 32)));
    expect(secret.options).toMatchObject({ protect: false, retainOnDelete: true });
    expect(secret.options.additionalSecretOutputs).toEqual(expect.arrayContaining(['data', 'stringData']));
    const enode = await settle(declared.outputs.nodes[typenode].enode);
    expect(enode.value).toBe(deriveIdentity(key, valuesFor(stack, typenode).deploy.p2p.host, 60606).enode);
  });

  it.each(NODE_TYPES)('%s: the data volume is ReadWriteOnce, sized per network, kept on destroy', (typenode) => {
    const volume = resource(declared, T.volume, `${typenode}-data`);
    expect(volume.inputs.spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: network.volumeSize } },
    });
    expect(volume.options).toMatchObject({ protect: false, retainOnDelete: true });
  });

  it('keeps the namespace on destroy (it holds the kept Secrets and volumes)', () => {
    expect(resource(declared, T.namespace, 'namespace-lacchain').options.retainOnDelete).toBe(true);
  });

  it.each(NODE_TYPES)('%s: the ConfigMap holds config.toml, genesis and the start step', (typenode) => {
    const data = inputsOf(declared, T.configMap, `${typenode}-config`).data;
    expect(data['genesis.json']).toBe(testGenesisText());
    expect(data['start-node.sh']).toMatch(/refusing to start Besu with a new identity/);
    const config = parseToml(data['config.toml']) as Record<string, any>;
    const ip = valuesFor(stack, typenode).deploy.p2p.host;
    expect(config).toMatchObject({
      'network-id': network.networkId,
      'p2p-host': ip,
      'p2p-port': 60606,
      bootnodes: network.bootnodes[typenode],
      'min-gas-price': 0,
      'rpc-http-port': 4545,
      'permissions-nodes-contract-enabled': true,
      'permissions-nodes-contract-address': network.nodesPermissioningContract,
      // Served on the pod's loopback for the metrics relay, which pushes them to the network's gateway.
      'metrics-enabled': true,
      'metrics-host': '127.0.0.1',
      'node-private-key-file': '/etc/besu/key/key',
    });
    expect(config['host-allowlist']).toEqual(['localhost', '127.0.0.1', ip]);
    expect(config['rpc-http-api']).not.toEqual(expect.arrayContaining(['ADMIN']));
    expect(config['rpc-http-api']).not.toEqual(expect.arrayContaining(['DEBUG']));
    expect(config['max-peers']).toBe(network.maxPeers[typenode]);
    expect('nginx.conf' in data).toBe(typenode === 'writer');
  });

  it.each(NODE_TYPES)('%s: outputs namespace, pod, container, RPC URL and identity', async (typenode) => {
    const node = declared.outputs.nodes[typenode];
    const ip = valuesFor(stack, typenode).deploy.publicIP;
    expect((await settle(node.namespace!)).value).toBe('lacchain');
    expect((await settle(node.podName!)).value).toBe(`besu-node-${typenode}-0`);
    expect((await settle(node.containerName!)).value).toBe(`${typenode}-besu`);
    // Inside only: reached with kubectl port-forward on this machine.
    expect((await settle(node.rpcUrl!)).value).toBe(`http://${typenode === 'writer' ? ip : '127.0.0.1'}:4545`);
    expect((await settle(node.address)).value).toMatch(/^0x[0-9a-f]{40}$/);
  });
});

describe('stack settings that change the Kubernetes resources', () => {
  it('names the kubeconfig context on the provider', async () => {
    const { config, files } = kubernetesStack('testnet', { 'lacchain:kubeContext': 'prod-cluster' });
    const declared = await declareProgram(recorded, 'testnet', config, files);
    expect(resource(declared, T.provider, 'cluster').inputs.context).toBe('prod-cluster');
    for (const r of declared.resources.filter((x) => x.type.startsWith('kubernetes:'))) {
      expect(r.options.provider).toBe('cluster');
    }
  });

  it('lets the key Secret be deleted only when the operator allows it', async () => {
    const { config, files } = kubernetesStack('testnet', { 'lacchain:allowKeyDeletion': true });
    const declared = await declareProgram(recorded, 'testnet', config, files);
    expect(resource(declared, T.secret, 'writer-key').options).toMatchObject({ protect: false, retainOnDelete: false });
    expect(resource(declared, T.volume, 'writer-data').options).toMatchObject({ protect: false, retainOnDelete: true });
  });

  it('puts an imported key in the Secret and derives the identity from it', async () => {
    const { config, files } = kubernetesStack('testnet', { 'lacchain:nodeKeys': { writer: KEY_ONE } });
    const declared = await declareProgram(recorded, 'testnet', config, files);
    expect(inputsOf(declared, T.secret, 'writer-key').stringData.key).toBe(KEY_ONE);
    expect(declared.resources.some((r) => r.name === 'writer-identity-key')).toBe(false);
  });

  it('uses the storage class, size and namespace of the values file', async () => {
    const { config, files } = kubernetesStack('mainnet');
    files['values/writer.yml'] = valuesFor('mainnet', 'writer', {
      storageClass: 'premium-rwo',
      volumeSize: '500Gi',
      namespace: 'lacchain-writer',
    });
    const declared = await declareProgram(recorded, 'mainnet', config, files);
    expect(inputsOf(declared, T.volume, 'writer-data').spec).toMatchObject({
      storageClassName: 'premium-rwo',
      resources: { requests: { storage: '500Gi' } },
    });
    expect(
      declared.resources
        .filter((r) => r.type === T.namespace)
        .map((r) => r.name)
        .sort(),
    ).toEqual(['namespace-lacchain', 'namespace-lacchain-writer']);
    expect(inputsOf(declared, T.statefulSet, 'writer-node').metadata.namespace).toBe('lacchain-writer');
  });
});

describe('images pinned by digest (deploy.imageDigest, deploy.proxyImageDigest)', () => {
  const BESU_DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
  const PROXY_DIGEST = `sha256:${'fedcba9876543210'.repeat(4)}`;
  const images = (declared: Declared, typenode: string) =>
    inputsOf(declared, T.statefulSet, `${typenode}-node`).spec.template.spec.containers.map((c: any) => c.image);

  it('without a digest: the tags alone', async () => {
    const { config, files } = kubernetesStack('testnet');
    const declared = await declareProgram(recorded, 'testnet', config, files);
    const version = NETWORKS[STACK_NETWORKS.testnet].defaultBesuVersion;
    // Besu's image runs Besu and the metrics relay.
    expect(images(declared, 'writer')).toEqual([
      `hyperledger/besu:${version}`,
      `hyperledger/besu:${version}`,
      'openresty/openresty:1.27.1.2-alpine',
      RELAY_SIGNER.defaultImage,
      ETHSTATS.defaultImage,
    ]);
    expect(images(declared, 'validator')).toEqual([
      `hyperledger/besu:${version}`,
      `hyperledger/besu:${version}`,
      ROTATION_VALIDATOR.defaultImage,
      ETHSTATS.defaultImage,
    ]);
  });

  it('with digests: <repository>:<tag>@sha256:<digest>, and only the pod changes', async () => {
    const before = kubernetesStack('testnet');
    const after = kubernetesStack('testnet');
    after.files['values/writer.yml'] = valuesFor('testnet', 'writer', {
      releaseVersion: '23.4.1',
      imageDigest: BESU_DIGEST,
      proxyImageDigest: PROXY_DIGEST,
    });
    after.files['values/validator.yml'] = valuesFor('testnet', 'validator', { imageDigest: BESU_DIGEST });
    const a = await declareProgram(recorded, 'testnet', before.config, before.files);
    const b = await declareProgram(recorded, 'testnet', after.config, after.files);
    expect(images(b, 'writer')).toEqual([
      `hyperledger/besu:23.4.1@${BESU_DIGEST}`,
      `hyperledger/besu:23.4.1@${BESU_DIGEST}`,
      `openresty/openresty:1.27.1.2-alpine@${PROXY_DIGEST}`,
      RELAY_SIGNER.defaultImage,
      ETHSTATS.defaultImage,
    ]);
    expect(images(b, 'validator')).toEqual([
      `hyperledger/besu:${NETWORKS[STACK_NETWORKS.testnet].defaultBesuVersion}@${BESU_DIGEST}`,
      `hyperledger/besu:${NETWORKS[STACK_NETWORKS.testnet].defaultBesuVersion}@${BESU_DIGEST}`,
      ROTATION_VALIDATOR.defaultImage,
      ETHSTATS.defaultImage,
    ]);
    const changed = a.resources
      .filter((r) => JSON.stringify(r.inputs) !== JSON.stringify(resource(b, r.type, r.name).inputs))
      .map((r) => `${r.type} ${r.name}`);
    expect(changed.sort()).toEqual([`${T.statefulSet} validator-node`, `${T.statefulSet} writer-node`]);
  });
});

describe('a Besu version bump', () => {
  it('changes only the pod (image and version label) and keeps identity, Secret, config and volume', async () => {
    const before = kubernetesStack('testnet');
    const after = kubernetesStack('testnet');
    after.files['values/writer.yml'] = valuesFor('testnet', 'writer', { releaseVersion: '23.4.2' });
    const a = await declareProgram(recorded, 'testnet', before.config, before.files);
    const b = await declareProgram(recorded, 'testnet', after.config, after.files);
    const changed = a.resources
      .filter((r) => JSON.stringify(r.inputs) !== JSON.stringify(resource(b, r.type, r.name).inputs))
      .map((r) => `${r.type} ${r.name}`);
    expect(changed).toEqual([`${T.statefulSet} writer-node`]);
    const podA = inputsOf(a, T.statefulSet, 'writer-node').spec.template;
    const podB = inputsOf(b, T.statefulSet, 'writer-node').spec.template;
    expect(podB.spec.containers[0].image).toBe('hyperledger/besu:23.4.2');
    expect(podB.metadata.labels['app.kubernetes.io/version']).toBe('23.4.2');
    podB.spec.containers[0].image = podA.spec.containers[0].image;
    // The metrics relay runs in Besu's image.
    expect(podB.spec.containers[1].image).toBe('hyperledger/besu:23.4.2');
    podB.spec.containers[1].image = podA.spec.containers[1].image;
    // The backup before a release change knows the release the pod runs: it backs up when the volume's is another.
    const release = (pod: typeof podA) =>
      pod.spec.initContainers[1].env.find((e: { name: string }) => e.name === 'RELEASE');
    expect(release(podB).value).toBe('23.4.2');
    release(podB).value = release(podA).value;
    // The config check (first) and the init container that makes the companions' state folders run Besu's image too.
    for (const index of [0, 2]) {
      expect(podB.spec.initContainers[index].image).toBe('hyperledger/besu:23.4.2');
      podB.spec.initContainers[index].image = podA.spec.initContainers[index].image;
    }
    podB.metadata.labels['app.kubernetes.io/version'] = podA.metadata.labels['app.kubernetes.io/version'];
    expect(podB).toEqual(podA);
    expect((await settle(b.outputs.nodes.writer.enode)).value).toBe((await settle(a.outputs.nodes.writer.enode)).value);
  });
});

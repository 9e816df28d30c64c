/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The network's companion services, declared as `pulumi up` declares them: a writer, a validator and a bootnode on
 * each network and on each path, with their companions (the writer's relay signer, the validator's rotation client,
 * every node's monitoring client), their config files and arguments rendered per network, the companions' systemd
 * units, the Kubernetes containers, the gas model's output, and Besu's WebSocket on the loopback for them.
 */
import { parse } from 'smol-toml';
import { BESU_IMAGE_UID } from '../../core/catalog/besu';
import { ETHSTATS, RELAY_SIGNER, ROTATION_VALIDATOR } from '../../core/catalog/companions';
import { NETWORKS, STACK_NETWORKS, StackName } from '../../core/catalog/networks';
import { NODE_TYPES } from '../../core/catalog/nodeTypes';
import { settle, unwrapSecrets } from '../../tools/recording/engine';
import { FAKE_HOST_KEY, FAKE_SSH_KEY, TEST_COMPANIONS, testPublicIp } from '../../testing/fixtures';
import { declareProgram, Declared, inputsOf, resource } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { addressFor, kubernetesStack } from '../../testing/values';

const recorded = recordProgram();
const STACKS: StackName[] = ['testnet', 'mainnet'];
const COMPANION_OF = { writer: RELAY_SIGNER, validator: ROTATION_VALIDATOR, bootnode: undefined } as const;

/** The node_ip of the i-th SSH node (a public one: every network refuses a documentation address in an enode). */
const nodeIp = (i: number) => testPublicIp(10 + i);

/** A stack with one SSH node of every type on the stack's network. */
function sshStackOfEveryType(stack: StackName, companions: Record<string, unknown> = structuredClone(TEST_COMPANIONS)) {
  return {
    'lacchain:network': STACK_NETWORKS[stack],
    'lacchain:nodes': NODE_TYPES.map((typenode, i) => ({
      name: typenode,
      typenode,
      target: 'ssh',
      inventory: {
        host: `190.51.100.${10 + i}`,
        host_key: FAKE_HOST_KEY,
        node_ip: nodeIp(i),
        node_name: `org-${typenode}`,
        node_email: 'ops@example.org',
        allow_below_minimum_hardware: true,
      },
    })),
    'lacchain:sshPrivateKey': FAKE_SSH_KEY,
    'lacchain:companions': companions,
  };
}

/** A parameter of a remote step, as the step's standard input exports it. */
function parameter(declared: Declared, node: string, step: string, name: string): string | undefined {
  const stdin = (unwrapSecrets(inputsOf(declared, 'command:remote:Command', `${node}-${step}`)) as any).stdin;
  const match = new RegExp(`^export ${name}='((?:[^']|'\\\\'')*)'$`, 'm').exec(stdin);
  return match ? match[1].replace(/'\\''/g, "'") : undefined;
}

describe.each(STACKS)('stack %s', (stack) => {
  const network = NETWORKS[STACK_NETWORKS[stack]];
  const contractOf = { writer: network.relayHubContract, validator: network.validatorRotationContract };

  describe('on Kubernetes', () => {
    let declared: Declared;
    beforeAll(async () => {
      const { config, files } = kubernetesStack(stack);
      declared = await declareProgram(recorded, stack, config, files);
    });

    it.each(NODE_TYPES)('%s: its companion is a container of its pod, its config in the ConfigMap', (typenode) => {
      const pod = inputsOf(declared, 'kubernetes:apps/v1:StatefulSet', `${typenode}-node`).spec.template.spec;
      const data = inputsOf(declared, 'kubernetes:core/v1:ConfigMap', `${typenode}-config`).data;
      const companion = COMPANION_OF[typenode];
      const containers = pod.containers.filter((c: any) => c.name.endsWith(companion?.name ?? '-none'));
      if (!companion) {
        expect(pod.containers.map((c: any) => c.name)).toEqual([
          `${typenode}-besu`,
          `${typenode}-metrics-relay`,
          `${typenode}-ethstats`,
        ]);
        return;
      }
      expect(containers).toHaveLength(1);
      const [container] = containers;
      expect(container.image).toBe(companion.defaultImage);
      // The image's executable itself: the reference image's entry script prints the key.
      expect(container.command).toEqual([companion.imageExecutable]);
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
      });
      const config = parse(data[`${companion.name}.toml`]) as any;
      expect(config.application.contractAddress).toBe(contractOf[typenode as 'writer' | 'validator']);
      expect(config.application.wsURL).toBe('ws://127.0.0.1:4546');
      if (companion === RELAY_SIGNER) {
        expect(container.env).toEqual([
          { name: 'WRITER_KEY', valueFrom: { secretKeyRef: { name: 'besu-node-writer-key', key: 'key' } } },
        ]);
        expect(config.application.port).toBe(RELAY_SIGNER.port);
      } else {
        expect(container.env).toEqual([]);
        expect(container.volumeMounts).toContainEqual({ name: 'key', mountPath: '/etc/besu/key', readOnly: true });
        expect(config.application.nodeKeyPath).toBe('/etc/besu/key/key');
      }
      // Besu serves its WebSocket on the loopback for it.
      const besu = parse(data['config.toml']) as any;
      expect([besu['rpc-ws-enabled'], besu['rpc-ws-host'], besu['rpc-ws-port']]).toEqual([true, '127.0.0.1', 4546]);
    });

    it.each(NODE_TYPES)(
      "%s: the monitoring client is a container of its pod, registering the node's name on the network's server",
      (typenode) => {
        const pod = inputsOf(declared, 'kubernetes:apps/v1:StatefulSet', `${typenode}-node`).spec.template.spec;
        const values = kubernetesStack(stack).files[`values/${typenode}.yml`] as any;
        const container = pod.containers.find((c: any) => c.name === `${typenode}-ethstats`);
        expect(container.image).toBe(ETHSTATS.defaultImage);
        // The client itself with -v: the image's entrypoint adds -d, which logs the registration secret.
        expect(container.command).toEqual([ETHSTATS.imageExecutable]);
        expect(container.args).toEqual([
          '-v',
          '--register',
          '--account-email',
          values.deploy.nodeEmail,
          '--node-name',
          values.deploy.nodeName,
          '--server-url',
          network.ethstatsUrl,
          '--client-url',
          'ws://127.0.0.1:4546',
        ]);
        // Its registration on the node's data volume, which outlives the pod; nothing of the node's identity.
        expect(container.env).toEqual([{ name: 'XDG_CONFIG_HOME', value: ETHSTATS.stateMountPath }]);
        expect(container.volumeMounts).toContainEqual({
          name: 'data',
          mountPath: ETHSTATS.stateMountPath,
          subPath: 'lacchain-companions/ethstats',
        });
        expect(container.volumeMounts.map((m: any) => m.name)).not.toContain('key');
        // The folder is made as the pod's user before any container starts (the kubelet would make it as root),
        // open to the pod's group, which the client's own uid is in.
        // After the config check and the backup before a release change, which come first (before anything opens
        // the data).
        expect(pod.initContainers.slice(0, 2).map((c: any) => c.name)).toEqual([
          `${typenode}-config-check`,
          'backup-before-release-change',
        ]);
        expect(pod.initContainers.slice(2)).toEqual([
          expect.objectContaining({
            name: `${typenode}-companion-state`,
            command: [
              '/bin/sh',
              '-c',
              'mkdir -p "$@" && find "$@" -user "$(id -u)" ! -type l -exec chmod g+rwX,o-rwx {} +',
              'sh',
              '/data/lacchain-companions/ethstats',
            ],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          }),
        ]);
        expect(container.securityContext).toMatchObject({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          runAsUser: ETHSTATS.podUid,
        });
        // A uid of its own: not Besu's (the pod's), nor any other container's.
        expect(pod.securityContext.runAsUser).toBe(BESU_IMAGE_UID);
        const others = pod.containers.filter((c: any) => c !== container);
        expect(others.map((c: any) => c.securityContext?.runAsUser ?? pod.securityContext.runAsUser)).not.toContain(
          ETHSTATS.podUid,
        );
        expect(container.ports).toBeUndefined();
      },
    );

    it('pins the image of each companion that gets the node key by its digest, as the monitoring client', async () => {
      const digest = (byte: string) => `sha256:${byte.repeat(32)}`;
      const { config, files } = kubernetesStack(stack, {
        'lacchain:companions': {
          relaySigner: { imageDigest: digest('a1') },
          rotationValidator: {
            image: `registry.example.org/rotation:1.0.1@${digest('ff')}`,
            imageDigest: digest('b2'),
          },
          ethstats: { imageDigest: digest('c3') },
        },
      });
      const pinned = await declareProgram(recorded, stack, config, files);
      const image = (typenode: string, container: string) =>
        inputsOf(pinned, 'kubernetes:apps/v1:StatefulSet', `${typenode}-node`).spec.template.spec.containers.find(
          (c: any) => c.name === `${typenode}-${container}`,
        ).image;
      expect(image('writer', RELAY_SIGNER.name)).toBe(`lacnetnetworks/relay-signer-lacchain@${digest('a1')}`);
      // The digest setting wins over one written in the image.
      expect(image('validator', ROTATION_VALIDATOR.name)).toBe(`registry.example.org/rotation@${digest('b2')}`);
      expect(image('bootnode', ETHSTATS.name)).toBe(`docker.io/alethio/ethstats-cli@${digest('c3')}`);
    });

    it("exports the writer's gas model URL on its public IP, and none for the others", async () => {
      expect((await settle(declared.outputs.nodes.writer.gasModelUrl!)).value).toBe(
        `http://${addressFor('writer')}:80`,
      );
      expect(declared.outputs.nodes.validator.gasModelUrl).toBeUndefined();
      expect(declared.outputs.nodes.bootnode.gasModelUrl).toBeUndefined();
    });

    it('keeps Besu without a WebSocket and the writer without routing when the companions are off', async () => {
      const { config, files } = kubernetesStack(stack, {
        'lacchain:companions': {
          relaySigner: { enabled: false },
          rotationValidator: { enabled: false },
          ethstats: { enabled: false },
        },
      });
      const off = await declareProgram(recorded, stack, config, files);
      const pod = inputsOf(off, 'kubernetes:apps/v1:StatefulSet', 'bootnode-node').spec.template.spec;
      expect(pod.containers.map((c: any) => c.name)).toEqual(['bootnode-besu', 'bootnode-metrics-relay']);
      expect(pod.initContainers.map((c: any) => c.name)).toEqual([
        'bootnode-config-check',
        'backup-before-release-change',
      ]);
      const data = inputsOf(off, 'kubernetes:core/v1:ConfigMap', 'writer-config').data;
      expect(parse(data['config.toml'])['rpc-ws-enabled']).toBeUndefined();
      expect(data['nginx.conf']).not.toContain(String(RELAY_SIGNER.port));
      expect(off.outputs.nodes.writer.gasModelUrl).toBeUndefined();
    });
  });

  describe('on machines over SSH', () => {
    let declared: Declared;
    beforeAll(async () => {
      declared = await declareProgram(recorded, stack, sshStackOfEveryType(stack), {});
    });

    it.each(NODE_TYPES)(
      '%s: the companions step installs its companion, pinned, as a service beside Besu',
      (typenode) => {
        const companion = COMPANION_OF[typenode];
        expect(parameter(declared, typenode, 'companions', 'COMPANIONS')).toBe(
          [companion?.name, ETHSTATS.name].filter(Boolean).join(' '),
        );
        expect(parameter(declared, typenode, 'companions', 'KNOWN_COMPANIONS')).toBe(
          'relay-signer rotation-validator ethstats',
        );
        if (!companion) return;
        const prefix = companion.name.toUpperCase().replace(/-/g, '_');
        const setting = companion === RELAY_SIGNER ? TEST_COMPANIONS.relaySigner : TEST_COMPANIONS.rotationValidator;
        expect(parameter(declared, typenode, 'companions', `${prefix}_SHA256`)).toBe(setting.sha256);
        expect(parameter(declared, typenode, 'companions', `${prefix}_URL`)).toMatch(/^https:\/\//);
        const config = parse(parameter(declared, typenode, 'companions', `${prefix}_CONFIG`)!) as any;
        expect(config.application.contractAddress).toBe(contractOf[typenode as 'writer' | 'validator']);
        expect(config.application.nodeKeyPath).toBe('/opt/lacchain/data/key');
        const unit = parameter(declared, typenode, 'companions', `${prefix}_UNIT`)!;
        expect(unit).toContain('After=besu.service\nPartOf=besu.service');
        expect(unit).toContain('User=besu\n');
        expect(unit).toContain('Restart=on-failure\n');
        expect(unit).toContain('ProtectSystem=strict\n');
        expect(unit).toContain(`ReadWritePaths=/opt/lacchain/companions/${companion.name}/log\n`);
        expect(unit).toContain('IPAddressDeny=any\nIPAddressAllow=localhost\n');
        // Besu's WebSocket is fenced to the companions' users before it starts, and the relay signer's port to the
        // loopback and the proxy's user (cgroup v1 too); a fence that does not load stops the start (no `-`).
        const fence = parameter(declared, typenode, 'companions', `${prefix}_FENCE`);
        expect(parameter(declared, typenode, 'packages', 'PACKET_FILTER')).toBe('nftables');
        const fences = unit.match(/^ExecStartPre=.*$/gm);
        if (companion === RELAY_SIGNER) {
          expect(fences).toEqual([
            'ExecStartPre=+/usr/sbin/nft -f /opt/lacchain/companions/websocket-fence.nft',
            `ExecStartPre=+/usr/sbin/nft -f /opt/lacchain/companions/${companion.name}/fence.nft`,
          ]);
          expect(fence).toContain('table inet lacchain_besu_relay_signer {');
          expect(fence).toContain(`tcp dport ${RELAY_SIGNER.port} ip daddr != 127.0.0.0/8 reject with tcp reset`);
          expect(fence).toContain(`tcp dport ${RELAY_SIGNER.port} ip6 daddr != ::1 reject with tcp reset`);
          // On the loopback, only root and nginx's workers (the proxy): neither Besu's user nor the monitoring client's.
          expect(fence).toContain(
            `tcp dport ${RELAY_SIGNER.port} meta skuid != { root, www-data } reject with tcp reset`,
          );
        } else {
          expect(fences).toEqual(['ExecStartPre=+/usr/sbin/nft -f /opt/lacchain/companions/websocket-fence.nft']);
          expect(fence).toBeUndefined();
        }
        expect(unit).toContain('WantedBy=besu.service');
        // The key goes to the relay signer through its environment, filled by the launcher from the key file.
        const exec = /^ExecStart=(.*)$/m.exec(unit)![1];
        expect(exec).toBe(
          `/opt/lacchain/bin/start-companion.sh /opt/lacchain/companions/${companion.name}/releases/current/${companion.executable}` +
            (companion === RELAY_SIGNER ? ' WRITER_KEY /opt/lacchain/data/key' : ''),
        );
      },
    );

    it.each(NODE_TYPES)(
      '%s: the monitoring client runs its image, pulled by digest, with podman as a service beside Besu',
      (typenode) => {
        const image = `docker.io/alethio/ethstats-cli@${TEST_COMPANIONS.ethstats.imageDigest}`;
        expect(parameter(declared, typenode, 'packages', 'CONTAINER_RUNTIME')).toBe('podman');
        expect(parameter(declared, typenode, 'companions', 'ETHSTATS_IMAGE')).toBe(image);
        expect(parameter(declared, typenode, 'companions', 'ETHSTATS_SHA256')).toBeUndefined();
        const unit = parameter(declared, typenode, 'companions', 'ETHSTATS_UNIT')!;
        expect(unit).toContain('After=besu.service\nPartOf=besu.service');
        expect(unit).toContain('Restart=always\n');
        expect(unit).toContain('WantedBy=besu.service');
        expect(unit).toContain('ExecStopPost=-/usr/bin/podman rm --force --ignore besu-ethstats\n');
        expect(unit).toContain('ExecStartPre=+/usr/sbin/nft -f /opt/lacchain/companions/websocket-fence.nft\n');
        // Its own system user, made by the step, not Besu's; the only one besides theirs that reaches the WebSocket.
        expect(parameter(declared, typenode, 'companions', 'ETHSTATS_USER')).toBe(ETHSTATS.systemUser);
        expect(ETHSTATS.systemUser).not.toBe('besu');
        expect(parameter(declared, typenode, 'companions', 'WEBSOCKET_FENCE')).toContain(
          `tcp dport 4546 meta skuid != { root, besu, ${ETHSTATS.systemUser} } reject with tcp reset`,
        );
        expect(/^ExecStart=(.*)$/m.exec(unit)![1]).toBe(
          [
            `/opt/lacchain/bin/start-container-companion.sh besu-ethstats ${ETHSTATS.systemUser} /opt/lacchain/companions/ethstats/state`,
            `XDG_CONFIG_HOME ${ETHSTATS.stateMountPath} ${image} ${ETHSTATS.imageExecutable}`,
            `-v --register --account-email ops@example.org --node-name org-${typenode}`,
            `--server-url ${network.ethstatsUrl} --client-url ws://127.0.0.1:4546`,
          ].join(' '),
        );
      },
    );

    it('a machine without the monitoring client gets no container runtime', async () => {
      const off = await declareProgram(
        recorded,
        stack,
        sshStackOfEveryType(stack, { ...structuredClone(TEST_COMPANIONS), ethstats: { enabled: false } }),
        {},
      );
      expect(parameter(off, 'bootnode', 'packages', 'CONTAINER_RUNTIME')).toBe('');
      expect(parameter(off, 'bootnode', 'companions', 'COMPANIONS')).toBe('');
      // Nor a WebSocket, so no fence for it: nftables is not needed.
      expect(parameter(off, 'bootnode', 'packages', 'PACKET_FILTER')).toBe('');
      expect(parameter(off, 'bootnode', 'companions', 'WEBSOCKET_FENCE')).toBeUndefined();
      // The validator keeps its rotation client: Besu's WebSocket is fenced to Besu's user alone (and root).
      expect(parameter(off, 'validator', 'companions', 'WEBSOCKET_FENCE')).toContain(
        'tcp dport 4546 meta skuid != { root, besu } reject with tcp reset',
      );
    });

    it("exports the writer's gas model URL on its node_ip", async () => {
      expect((await settle(declared.outputs.nodes.writer.gasModelUrl!)).value).toBe(`http://${nodeIp(0)}:80`);
    });

    it("the relay signer's catalog release, no digest given: the step checks the catalog's git blob id", async () => {
      const companions: Record<string, Record<string, unknown>> = structuredClone(TEST_COMPANIONS);
      delete companions.relaySigner.sha256;
      const declaredHere = await declareProgram(recorded, stack, sshStackOfEveryType(stack, companions), {});
      expect(parameter(declaredHere, 'writer', 'companions', 'RELAY_SIGNER_SHA256')).toBeUndefined();
      expect(parameter(declaredHere, 'writer', 'companions', 'RELAY_SIGNER_GIT_BLOB')).toBe(
        RELAY_SIGNER.releaseBlobs[RELAY_SIGNER.defaultVersion],
      );
      expect(parameter(declaredHere, 'writer', 'companions', 'RELAY_SIGNER_URL')).toBe(
        'https://raw.githubusercontent.com/LACNetNetworks/gas-management/8dd1b69b9cce0af1a70025bd9351085eff6a16c1/gas-relay-signer',
      );
      // The operator's own digest is checked besides the catalog's.
      expect(parameter(declared, 'writer', 'companions', 'RELAY_SIGNER_SHA256')).toBe(
        TEST_COMPANIONS.relaySigner.sha256,
      );
    });

    it('a new companion release runs only the companions step', async () => {
      const bumped = await declareProgram(
        recorded,
        stack,
        sshStackOfEveryType(stack, {
          ...structuredClone(TEST_COMPANIONS),
          relaySigner: { version: '1.0.2', sha256: 'c3'.repeat(32) },
        }),
        {},
      );
      const changed = declared.resources
        .filter((r) => r.type === 'command:remote:Command')
        .filter((r) => JSON.stringify(r.inputs) !== JSON.stringify(resource(bumped, r.type, r.name).inputs))
        .map((r) => r.name);
      expect(changed).toEqual(['writer-companions']);
    });
  });
});

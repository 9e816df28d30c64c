/**
 * The pure parts of a move into the cluster (`npm run node -- move --to-kubernetes`, docs/moving.md): the stack file
 * rewritten (the node a cluster node, its inventory gone, every other line kept), the plan, the line a cut move ends
 * with, and the fill pod (on the node's worker, the data volume only, not one the StatefulSet or a Service selects).
 */
import * as yaml from 'js-yaml';
import { machineMoveCutLine, machineMovePlan } from '../../cli/operations/moveFromCluster';
import { clusterMoveCutLine, clusterMovePlan } from '../../cli/operations/moveToCluster';
import type { StopReached } from '../../cli/operations/moveStopReached';
import { movedToClusterStackFile } from '../../cli/operations/moveStackFile';
import { kubernetesNames, POD_PATHS } from '../../core/catalog/kubernetes';
import { CLUSTER_MOVE_STEPS, MACHINE_FROM_CLUSTER_STEPS } from '../../core/catalog/move';
import { backupNames } from '../../core/kubernetes/backups';
import {
  moveFillCommand,
  moveFillPodManifest,
  moveReadCommand,
  moveReadPodManifest,
} from '../../core/kubernetes/moveFill';
import { selectorLabels } from '../../core/kubernetes/podBasics';
import { movedNodes, moveRefusal, nodePlace } from '../../core/node/place';
import type { KubernetesNodeSettings, SshNodeSettings } from '../../core/settings/model';
import {
  FAKE_HOST_KEY,
  loadTestnet,
  sshValidatorEntry,
  sshValidatorStack,
  validTestnetConfig,
} from '../../testing/fixtures';

const STACK_FILE = `# the operator's own comment
config:
  lacchain:network: open-protestnet
  lacchain:nodes:
    - name: writer # kept
      typenode: writer
      target: ssh
      inventory:
        host: 190.51.100.7
        host_key: ${FAKE_HOST_KEY}
        node_ip: 190.51.100.7
`;

const machineNode = () => loadTestnet(sshValidatorStack(sshValidatorEntry())).nodes[0] as SshNodeSettings;
const clusterNode = () => loadTestnet(validTestnetConfig()).nodes[0] as KubernetesNodeSettings;

describe('the stack file of a node moved into the cluster', () => {
  it('names the node a cluster node without its inventory, and keeps every other line', () => {
    const text = movedToClusterStackFile(STACK_FILE, 'writer');
    expect(text).toContain("# the operator's own comment");
    expect(text).toContain('- name: writer # kept');
    const [entry] = (yaml.load(text) as { config: Record<string, Array<Record<string, unknown>>> }).config[
      'lacchain:nodes'
    ];
    expect(entry).toEqual({ name: 'writer', typenode: 'writer', target: 'kubernetes' });
  });

  it('refuses a node that is not on a machine', () => {
    const moved = movedToClusterStackFile(STACK_FILE, 'writer');
    expect(() => movedToClusterStackFile(moved, 'writer')).toThrow(
      "node writer is not an SSH node in the stack file: only a machine's node moves into a cluster",
    );
  });
});

describe('the plan and the cut lines of a move into the cluster', () => {
  it("names both places, every step, and a validator's one key", () => {
    const lines = clusterMovePlan({ from: machineNode(), to: clusterNode(), kubeContext: 'prod' });
    expect(lines[0]).toMatch(/^node validator \(validator\) moves from ssh .+ to kubernetes prod\/lacchain:$/);
    for (const step of Object.values(CLUSTER_MOVE_STEPS)) expect(lines.join('\n')).toContain(step);
    expect(lines.join('\n')).toContain('two signers, one key');
    expect(lines.join('\n')).toContain("the enode's address changes");
  });
});

describe("the fill pod of a moved node's data volume", () => {
  const node = clusterNode();
  const pod = moveFillPodManifest(node);

  it("runs on the node's worker as Besu's user, with the data volume only and no API token", () => {
    expect(pod.spec.nodeName).toBe(node.workerName);
    expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.volumes).toEqual([
      { name: 'volume', persistentVolumeClaim: { claimName: kubernetesNames(node.name).dataVolume, readOnly: false } },
    ]);
    expect(pod.spec.containers[0].volumeMounts).toEqual([
      { name: 'volume', mountPath: POD_PATHS.dataDir, readOnly: false },
    ]);
  });

  it("carries none of the node's pod labels: the StatefulSet never adopts it, no Service selects it", () => {
    for (const [key, value] of Object.entries(selectorLabels(node))) {
      expect(pod.metadata.labels[key as keyof typeof pod.metadata.labels]).not.toBe(value);
    }
  });

  it("empties the volume but a file system's lost+found, then extracts the stream into it", () => {
    expect(moveFillCommand().join(' ')).toMatch(
      /find \/data -mindepth 1 -maxdepth 1 ! -name lost\+found -exec rm -rf \{\} \+ && tar -x -f - -C \/data/,
    );
  });
});

describe('pulumi up of a stack whose node moved between a machine and the cluster without move', () => {
  it('is refused in one line pointing at move, both ways', () => {
    const pod = clusterNode();
    const machine = machineNode();
    const intoCluster = movedNodes({ [pod.name]: { place: 'ssh operator@190.51.100.7:22' } }, [pod], 'prod');
    expect(intoCluster).toEqual([{ node: pod.name, from: 'ssh operator@190.51.100.7:22', to: nodePlace(pod, 'prod') }]);
    expect(moveRefusal('testnet', intoCluster, undefined)).toBe(
      `node writer changed place in the stack file (ssh operator@190.51.100.7:22 -> kubernetes prod/lacchain): pulumi ` +
        'up would start it there while it still runs at ssh operator@190.51.100.7:22 (two nodes, one key); move it ' +
        'with npm run node -- move --stack testnet --node writer',
    );
    expect(moveRefusal('testnet', intoCluster, 'writer')).toBeUndefined();
    const outOfCluster = movedNodes({ [machine.name]: { place: 'kubernetes prod/lacchain' } }, [machine], 'prod');
    expect(outOfCluster).toEqual([{ node: machine.name, from: 'kubernetes prod/lacchain', to: nodePlace(machine) }]);
  });
});

describe('a move out of the cluster onto a machine', () => {
  it("names both places, every step, and a validator's one key", () => {
    const lines = machineMovePlan({ from: clusterNode(), to: machineNode(), kubeContext: 'prod' });
    expect(lines[0]).toMatch(/^node writer \(writer\) moves from kubernetes prod\/lacchain to ssh .+:$/);
    for (const step of Object.values(MACHINE_FROM_CLUSTER_STEPS)) expect(lines.join('\n')).toContain(step);
    expect(lines.join('\n')).toContain('the pod is gone before the new node first starts');
  });

  it('reads the backups volume read-only in a pod of none of the node labels, and streams it as a tar', () => {
    const node = clusterNode();
    const pod = moveReadPodManifest(node);
    expect(pod.spec.volumes).toEqual([
      { name: 'volume', persistentVolumeClaim: { claimName: backupNames(node.name).volume, readOnly: true } },
    ]);
    expect(pod.spec.containers[0].volumeMounts[0].readOnly).toBe(true);
    for (const [key, value] of Object.entries(selectorLabels(node))) {
      expect(pod.metadata.labels[key as keyof typeof pod.metadata.labels]).not.toBe(value);
    }
    expect(moveReadCommand()).toEqual(['tar', '-C', '/backups', '-c', '-f', '-', '.']);
  });
});

/** Both moves between a machine and a cluster: their steps, their cut lines, the flag that goes on, what then runs. */
const DIRECTIONS = [
  {
    name: 'into the cluster',
    steps: CLUSTER_MOVE_STEPS as Record<string, string>,
    cutLine: clusterMoveCutLine as (stack: string, node: string, step: string, reached?: StopReached) => string,
    flag: '--to-kubernetes',
    runs: /the pod runs/,
    kept: /the old node is (stopped and )?kept from starting/,
  },
  {
    name: 'out of the cluster',
    steps: MACHINE_FROM_CLUSTER_STEPS as Record<string, string>,
    cutLine: machineMoveCutLine as (stack: string, node: string, step: string, reached?: StopReached) => string,
    flag: '--from-kubernetes',
    runs: /the new node runs/,
    kept: /StatefulSet (is )?kept at no pod/,
  },
];

describe.each(DIRECTIONS)('the cut lines of a move $name', ({ steps, cutLine, flag, runs, kept }) => {
  it.each(Object.keys(steps))('cut at %s: says what runs and how to go on', (step) => {
    // A stop that ended: the old place stopped and kept (how far a cut stop got: tests/unit/moveStopReached.test.ts).
    const line = cutLine('testnet', 'writer', step, 'kept');
    expect(line).toContain(`the move stopped at "${steps[step]}"`);
    expect(line).toContain(`npm run node -- move --stack testnet --node writer ${flag} again`);
    expect(line).toMatch(step === 'removeOld' ? runs : kept);
  });
});

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * What the program lets a pod do on the Kubernetes API, on the plans themselves (the recording engine): every Role
 * the plans contain names what its writing verbs act on (one object by name, or a subresource), and the backup
 * schedule's pod hands its account's token only to the containers that run kubectl, never to restic's.
 */
import * as yaml from 'js-yaml';
import { BACKUP_TOOL, KUBECTL_IMAGE } from '../../core/catalog/backups';
import { StackName } from '../../core/catalog/networks';
import {
  backupAccessManifests,
  backupJobManifest,
  listJobManifest,
  restoreJobManifest,
} from '../../core/kubernetes/backups';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { completedExample } from '../../testing/examples';
import { declareProgram, Declared, inputsOf } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { kubernetesStack } from '../../testing/values';
import { unwrapSecrets } from '../../tools/recording/engine';

const recorded = recordProgram();

const T = {
  role: 'kubernetes:rbac.authorization.k8s.io/v1:Role',
  clusterRole: 'kubernetes:rbac.authorization.k8s.io/v1:ClusterRole',
  cronJob: 'kubernetes:batch/v1:CronJob',
};

/** The verbs that change something: a rule with one of them must name its object or a subresource. */
const WRITING_VERBS = [
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'bind',
  'escalate',
  'impersonate',
  '*',
];

/**
 * The writing verbs a Role may give on a whole resource, and why no subresource or named object would do: RBAC cannot
 * name an object yet to be made (a create request has no name to match `resourceNames`; the schedule's snapshot is
 * named by the API server).
 */
const WHOLE_RESOURCE_ALLOWED: Record<string, { verbs: string[]; why: string }> = {
  'snapshot.storage.k8s.io/volumesnapshots': {
    verbs: ['create'],
    why: 'the schedule makes a VolumeSnapshot with a name the API server gives',
  },
};

/**
 * The rules of a Role that give a writing verb more broadly than needed: on a whole object (which rewrites all of it:
 * a StatefulSet's pod template, its images) where a subresource would do, or on every object of a kind where one
 * named object would do. Only WHOLE_RESOURCE_ALLOWED's entries pass on a whole resource.
 */
function tooBroad(role: any): string[] {
  return (role.rules ?? []).flatMap((rule: any) => {
    const writing = (rule.verbs as string[]).filter((verb) => WRITING_VERBS.includes(verb));
    if (writing.length === 0) return [];
    const named = (rule.resourceNames ?? []).length > 0;
    return (rule.resources as string[]).flatMap((resource) =>
      (rule.apiGroups as string[]).flatMap((group) => {
        const key = `${group}/${resource}`;
        const what = `${role.metadata.name}: ${writing.join(',')} on`;
        if (resource.includes('/')) return named ? [] : [`${what} every ${key}, not one named object's`];
        const allowed = WHOLE_RESOURCE_ALLOWED[key];
        if (allowed && writing.every((verb) => allowed.verbs.includes(verb))) return [];
        return [`${what} the whole ${key}${named ? ` ${rule.resourceNames.join(',')}` : ''}, not a subresource`];
      }),
    );
  });
}

/** The plans walked: the example stacks as completed, and each stack's nodes with both kinds of schedule. */
const PLANS: [string, StackName, () => { config: Record<string, unknown>; files: Record<string, unknown> }][] = [
  ...(['testnet', 'mainnet'] as StackName[]).flatMap((stack) => [
    [
      `the example ${stack} stack`,
      stack,
      () => {
        const files = completedExample(stack);
        return { config: (yaml.load(files[`Pulumi.${stack}.yaml`]) as any).config, files };
      },
    ] as [string, StackName, () => { config: Record<string, unknown>; files: Record<string, unknown> }],
    [
      `every node type on ${stack}, scheduled backups copied with restic`,
      stack,
      () => kubernetesStack(stack, { 'lacchain:backups': { schedule: 'daily' } }),
    ] as [string, StackName, () => { config: Record<string, unknown>; files: Record<string, unknown> }],
    [
      `every node type on ${stack}, scheduled VolumeSnapshots`,
      stack,
      () => {
        const { config, files } = kubernetesStack(stack, { 'lacchain:backups': { schedule: 'daily' } });
        for (const values of Object.values(files)) (values as any).deploy.volumeSnapshotClass = 'csi-snapshots';
        return { config, files };
      },
    ] as [string, StackName, () => { config: Record<string, unknown>; files: Record<string, unknown> }],
  ]),
];

describe('every Role the plans contain', () => {
  const roles: any[] = [];
  beforeAll(async () => {
    for (const [, stack, make] of PLANS) {
      const { config, files } = make();
      const declared = await declareProgram(recorded, stack, config, files);
      roles.push(
        ...declared.resources
          .filter((r) => r.type === T.role || r.type === T.clusterRole)
          .map((r) => unwrapSecrets(r.inputs)),
      );
    }
  }, 60_000);

  it('names the one object or the subresource each writing verb acts on', () => {
    // Three nodes, two kinds of schedule, two stacks: the walk saw every Role the program makes.
    expect(roles.length).toBe(12);
    expect(roles.flatMap(tooBroad)).toEqual([]);
  });

  it('would catch a writing verb on a whole resource (the check is real)', () => {
    const broad = {
      metadata: { name: 'broad' },
      rules: [
        { apiGroups: ['apps'], resources: ['statefulsets', 'statefulsets/scale'], verbs: ['get', 'patch', 'update'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'delete'] },
        { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['create', 'delete'] },
      ],
    };
    expect(tooBroad(broad)).toEqual([
      'broad: patch,update on the whole apps/statefulsets, not a subresource',
      "broad: patch,update on every apps/statefulsets/scale, not one named object's",
      'broad: delete on the whole /pods, not a subresource',
      'broad: create,delete on the whole snapshot.storage.k8s.io/volumesnapshots, not a subresource',
    ]);
    // Naming the StatefulSet is not enough: a patch of the whole object rewrites its pod (the schedule's Role before).
    const named = {
      metadata: { name: 'named' },
      rules: [
        {
          apiGroups: ['apps'],
          resources: ['statefulsets', 'statefulsets/scale'],
          resourceNames: ['besu-node-writer'],
          verbs: ['get', 'patch', 'update'],
        },
      ],
    };
    expect(tooBroad(named)).toEqual([
      'named: patch,update on the whole apps/statefulsets besu-node-writer, not a subresource',
    ]);
  });
});

/** The standard path of a service account's token, where kubectl's in-cluster configuration reads it. */
const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

describe.each([
  ['copied with restic', undefined],
  ['VolumeSnapshots', 'csi-snapshots'],
])("the backup schedule's pod and account (%s)", (_how, snapshotClass) => {
  let declared: Declared;
  beforeAll(async () => {
    const { config, files } = kubernetesStack('testnet', {
      'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
      'lacchain:backups': { schedule: 'daily' },
    });
    if (snapshotClass) (files['values/writer.yml'] as any).deploy.volumeSnapshotClass = snapshotClass;
    declared = await declareProgram(recorded, 'testnet', config, files);
  });
  const pod = () => inputsOf(declared, T.cronJob, 'writer-backup-schedule').spec.jobTemplate.spec.template.spec;
  const containers = () => [...(pod().initContainers ?? []), ...pod().containers];

  it('may get the StatefulSet by name and patch only its scale; see only its pod go (or make snapshots)', () => {
    const role = inputsOf(declared, T.role, 'writer-backup-role');
    expect(role.rules).toEqual(
      snapshotClass
        ? [{ apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['create'] }]
        : [
            { apiGroups: ['apps'], resources: ['statefulsets'], resourceNames: ['besu-node-writer'], verbs: ['get'] },
            {
              apiGroups: ['apps'],
              resources: ['statefulsets/scale'],
              resourceNames: ['besu-node-writer'],
              verbs: ['patch'],
            },
            {
              apiGroups: [''],
              resources: ['pods'],
              resourceNames: ['besu-node-writer-0'],
              verbs: ['get', 'list', 'watch'],
            },
          ],
    );
    // The component declares what the renderer makes.
    const node = declared.loaded.settings.nodes[0] as KubernetesNodeSettings;
    expect(role.rules).toEqual(backupAccessManifests(node).role.rules);
  });

  it("gives the Jobs of npm run node (backup, backups, restore) no token: restic alone, on the node's volumes", () => {
    const node = declared.loaded.settings.nodes[0] as KubernetesNodeSettings;
    const jobs = [
      backupJobManifest(node, 'backup-1', { release: '23.4.1', reason: 'manual' }),
      listJobManifest(node, 'list-1'),
      restoreJobManifest(node, 'restore-1', '0123abcd', '23.4.1'),
    ];
    for (const job of jobs) {
      const spec = job.spec.template.spec as any;
      expect([job.metadata.name, spec.serviceAccountName, spec.automountServiceAccountToken]).toEqual([
        job.metadata.name,
        undefined,
        false,
      ]);
      expect(spec.volumes.filter((v: any) => v.projected)).toEqual([]);
      expect(spec.containers.map((c: any) => c.image.startsWith(BACKUP_TOOL.image))).toEqual([true]);
    }
  });

  it('gives the token to the kubectl steps only, at the path in-cluster kubectl reads, never to restic', () => {
    expect(pod().serviceAccountName).toBe('besu-node-writer-backup');
    expect(pod().automountServiceAccountToken).toBe(false);
    const tokenVolumes = pod().volumes.filter((v: any) =>
      (v.projected?.sources ?? []).some((s: any) => s.serviceAccountToken),
    );
    expect(tokenVolumes).toEqual([
      {
        name: 'kube-api-access',
        projected: {
          defaultMode: 0o444,
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            {
              downwardAPI: {
                items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
              },
            },
          ],
        },
      },
    ]);
    const withToken = (c: any) =>
      (c.volumeMounts ?? []).filter((m: any) => m.name === 'kube-api-access' || m.mountPath.startsWith(TOKEN_PATH));
    const kubectl = containers().filter((c: any) => c.image.startsWith(KUBECTL_IMAGE));
    const others = containers().filter((c: any) => !c.image.startsWith(KUBECTL_IMAGE));
    expect(kubectl.map((c: any) => c.name)).toEqual(
      snapshotClass ? ['snapshot'] : ['stop-node', 'node-stopped', 'start-node'],
    );
    for (const c of kubectl) {
      expect([c.name, withToken(c)]).toEqual([
        c.name,
        [{ name: 'kube-api-access', mountPath: TOKEN_PATH, readOnly: true }],
      ]);
    }
    expect(others.map((c: any) => c.name)).toEqual(snapshotClass ? [] : ['backup', 'report']);
    for (const c of others) {
      expect(c.image.startsWith(BACKUP_TOOL.image)).toBe(true);
      expect([c.name, withToken(c)]).toEqual([c.name, []]);
    }
  });
});

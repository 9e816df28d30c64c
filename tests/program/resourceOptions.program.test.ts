/**
 * The resource options that decide what `pulumi destroy` and `pulumi up` do, per resource, against what docs/kubernetes.md
 * promises: its "On `pulumi destroy`" table for the Kubernetes path, and "destroy leaves the machine as it is" for the
 * SSH path. No resource may be `protect`ed: the engine refuses to destroy a stack holding one, deleting nothing.
 */
import * as fs from 'fs';
import * as path from 'path';
import { recordProgram } from '../../testing/pulumi';
import { declareProgram, Declared } from '../../testing/program';
import { kubernetesStack } from '../../testing/values';
import { FAKE_SSH_KEY, sshValidatorEntry, TEST_COMPANIONS, COMPANIONS_OFF } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';
import type { RecordedResource } from '../../tools/recording/engine';

const recorded = recordProgram();
const KUBERNETES_DOC = fs.readFileSync(path.join(PROJECT_DIR, 'docs', 'kubernetes.md'), 'utf8');

/** The rows of docs/kubernetes.md's table whose header is `| Object | On `pulumi destroy` |`. */
function destroyTable(): { kind: string; name?: string; onDestroy: string }[] {
  const lines = KUBERNETES_DOC.split('\n');
  const start = lines.indexOf('| Object | On `pulumi destroy` |');
  if (start < 0) throw new Error('docs/kubernetes.md has no "On `pulumi destroy`" table');
  const rows: { kind: string; name?: string; onDestroy: string }[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [object, onDestroy] = line
      .split('|')
      .slice(1, 3)
      .map((cell) => cell.trim());
    const match = /^(\w+)(?: `([^`]+)`)?$/.exec(object);
    if (!match) throw new Error(`unreadable row of the destroy table: ${line}`);
    rows.push({ kind: match[1], name: match[2], onDestroy });
  }
  return rows;
}

const kindOf = (r: RecordedResource) => r.type.split(':').pop();
const nameOf = (r: RecordedResource) => (r.inputs.metadata as { name?: string } | undefined)?.name;

/** Whether a row's name (`<node>` for the node's, `<digest>` for the 10 hex digits naming a ConfigMap) is `name`. */
function names(row: { name?: string }, name: string | undefined): boolean {
  if (row.name === undefined || name === undefined) return false;
  const pattern = row.name
    .replace('<node>', 'writer')
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace('<digest>', '[0-9a-f]{10}');
  return new RegExp(`^${pattern}$`).test(name);
}

/** The docs/kubernetes.md row describing a Kubernetes object of node `writer`. */
function rowFor(resource: RecordedResource) {
  const rows = destroyTable().filter((row) => row.kind === kindOf(resource));
  const named = rows.find((row) => names(row, nameOf(resource)));
  const row = named ?? rows.find((r) => r.name === undefined);
  if (!row) throw new Error(`docs/kubernetes.md's destroy table does not list ${kindOf(resource)} ${nameOf(resource)}`);
  return row;
}

async function clusterStack(extra: Record<string, unknown>): Promise<Declared> {
  const { config, files } = kubernetesStack('testnet', {
    'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
    // internal: with authentication on, a Kubernetes writer's RPC stays inside the cluster (a pod has no TLS).
    'lacchain:rpc': { exposure: 'internal', authentication: { method: 'password', users: [{ name: 'reader' }] } },
    'lacchain:companions': structuredClone(COMPANIONS_OFF),
    'lacchain:rpcPasswords': { reader: { secure: 'correct horse battery' } },
    // Scheduled backups and the Prometheus Operator's objects: they are in the table too.
    'lacchain:backups': { schedule: 'daily' },
    'lacchain:monitoring': {
      scraper: { namespace: 'monitoring', podLabels: { app: 'prometheus' } },
      prometheusOperator: true,
    },
    ...extra,
  });
  return declareProgram(recorded, 'testnet', config, files);
}

describe.each([
  ['by default', false],
  ['with lacchain:allowKeyDeletion set by `pulumi config set` (the text "true")', true],
])('the Kubernetes path %s', (_how, allowKeyDeletion) => {
  let declared: Declared;
  beforeAll(async () => {
    declared = await clusterStack(allowKeyDeletion ? { 'lacchain:allowKeyDeletion': 'true' } : {});
  });
  const objects = () => declared.resources.filter((r) => r.type.startsWith('kubernetes:'));

  it('lists every object the program declares in the docs table, and nothing else', () => {
    const listed = objects().map((r) => rowFor(r));
    expect(new Set(listed).size).toBe(destroyTable().length);
  });

  it('keeps on destroy exactly what the docs say, protecting nothing', () => {
    for (const object of objects()) {
      const { onDestroy } = rowFor(object);
      const kept = onDestroy.startsWith('kept') && !(allowKeyDeletion && onDestroy.includes('deleted with'));
      expect([kindOf(object), nameOf(object), object.options]).toEqual([
        kindOf(object),
        nameOf(object),
        expect.objectContaining({
          protect: false,
          retainOnDelete: kept,
          deleteBeforeReplace: false,
          replaceOnChanges: [],
        }),
      ]);
    }
  });

  it('deletes in the order the docs give: the Service, then the StatefulSet, then what its pod used', () => {
    const byKind = (kind: string) => objects().filter((r) => kindOf(r) === kind);
    const [statefulSet] = byKind('StatefulSet');
    // Both Services: the node's LoadBalancer and its metrics Service.
    const services = byKind('Service');
    expect(services.map((s) => nameOf(s)).sort()).toEqual(['besu-node-writer', 'besu-node-writer-metrics']);
    for (const service of services) expect(service.options.dependsOn).toContain(statefulSet.name);
    const podInputs = objects().filter((r) => ['Secret', 'ConfigMap', 'PersistentVolumeClaim'].includes(kindOf(r)!));
    expect(statefulSet.options.dependsOn).toEqual(expect.arrayContaining(podInputs.map((r) => r.name)));
  });

  it('keeps the generated key like the key Secret, and protects nothing', () => {
    for (const r of declared.resources) expect([r.name, r.options.protect]).toEqual([r.name, false]);
    const random = declared.resources.filter((r) => r.type === 'random:index/randomBytes:RandomBytes');
    const generated = random.find((r) => r.name === 'writer-identity-key');
    expect(generated?.options.retainOnDelete).toBe(!allowKeyDeletion);
    // The RPC password's salt goes with the stack: it salts a hash, it is no identity.
    const salt = random.find((r) => r.name === 'writer-rpc-salt-reader');
    expect(salt?.options).toMatchObject({ protect: false, retainOnDelete: false });
  });
});

describe('the SSH path', () => {
  it('leaves the machine as it is on destroy: no step has a delete command, none is protected or kept', async () => {
    const declared = await declareProgram(
      recorded,
      'testnet',
      {
        'lacchain:network': 'open-protestnet',
        'lacchain:nodes': [sshValidatorEntry()],
        'lacchain:sshPrivateKey': { secure: FAKE_SSH_KEY },
        'lacchain:companions': structuredClone(TEST_COMPANIONS),
      },
      {},
    );
    const steps = declared.resources.filter((r) => r.type.startsWith('command:remote:Command'));
    expect(steps.length).toBeGreaterThan(5);
    for (const step of steps) {
      expect([step.name, step.inputs.delete, step.options.protect, step.options.retainOnDelete]).toEqual([
        step.name,
        undefined,
        false,
        false,
      ]);
    }
    const sshDoc = fs.readFileSync(path.join(PROJECT_DIR, 'docs', 'ssh.md'), 'utf8');
    expect(sshDoc).toContain('`pulumi destroy` leaves the machine as it is: the steps have no delete command');
  });
});
